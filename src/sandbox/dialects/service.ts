/**
 * The `service` dialect: every operation answers the way the service does in practice rather than
 * the way the API reference reads (issue 9; every rule is listed in docs/wire.md "Service dialect"). It wraps the
 * `spec`-dialect operations instead of changing them: a request's service cursors are turned back
 * into the cursors the platform module issued, the module builds its body, and the body is then
 * rewritten by the rules of its operation (the table `RULES`, data). Records are never added,
 * dropped or reordered, so a walk reads the same record ids in both dialects.
 */
import { cursorOffset, hash, moveCursor } from '../data.ts';
import { SandboxValidationError, type SandboxOperation, type SandboxRequest } from '../platform.ts';
import { decodeServiceCursor, encodeServiceCursor, type CursorForm } from './cursors.ts';
import { toJson } from '../json.ts';

type Json = Record<string, unknown>;

interface CursorRule {
  /** The request parameter that carries it back. */
  param: string;
  /** Where the payload carries it (dotted path); none when a `custom` step places it. */
  path?: string;
  form: CursorForm | 'page';
}

interface ServiceRule {
  /** Where the records sit, relative to the payload (dotted path). */
  records?: string;
  cursors?: CursorRule[];
  /** Keeps API reference 2.1's envelope (`data`, `credits_used`, `endpoint`): the service still answers a few operations that way. */
  dataEnvelope?: true;
  /**
   * The last page still carries a cursor (without any flag saying stop); the request it makes is
   * answered with an empty page, which ends the walk.
   */
  emptyPageEnd?: true;
  /** On the last page the cursors are sent as `null` instead of being left out. */
  nullAtEnd?: true;
  /** Payload fields the service leaves out. */
  drop?: string[];
  /** Record fields the service sends as `null` on about a third of the records. */
  nulls?: string[];
  /** Fields the API reference never names, added to every record. */
  extras?: Json;
  /** Flags left out of trimmed bodies (`trim=true`). */
  trimDrops?: string[];
  /** The answer came from the service's cache: `cached: true` and `cached_at`. */
  cached?: true;
  /** An operation's own rewriting, given the encoder of its cursor form. */
  custom?: (payload: Json, encode: (cursor: string) => string) => void;
}

/** The continuation of the forum comment tree: siblings in a `more` at the top, leaves with `next_cursor: null`. */
function forumTree(payload: Json, encode: (cursor: string) => string): void {
  const comments = payload.comments as Json[];
  const last = comments.at(-1);
  const more = last?.more as { has_more: boolean; cursor: string } | undefined;
  if (last !== undefined) delete last.more;
  const top = more?.has_more === true ? { has_more: true, cursor: encode(more.cursor) } : { has_more: false, cursor: null };
  const { comments: list, ...rest } = payload;
  for (const key of Object.keys(payload)) delete payload[key];
  Object.assign(payload, { ...rest, comments: list, more: top });
  const visit = (comment: Json): void => {
    const replies = comment.replies as { items: Json[]; more: Json };
    replies.more = replies.more.has_more === true
      ? { has_more: true, cursor: encode(replies.more.cursor as string) }
      : { has_more: false, next_cursor: null };
    replies.items.forEach(visit);
  };
  comments.forEach(visit);
}

/** Every cursor entry of the microblog timeline carries the service form, like `cursor.bottom`. */
function timelineCursors(payload: Json, encode: (cursor: string) => string): void {
  const instructions = (payload.result as { instructions: Array<{ entries: Array<{ content: Json }> }> }).instructions;
  for (const { entries } of instructions) {
    for (const { content } of entries) {
      if (content.entryType === 'TimelineTimelineCursor') content.value = encode(content.value as string);
    }
  }
}

/** The rules of every operation; an operation without an entry only gets the envelope and arrays. */
const RULES: Record<string, ServiceRule> = {
  'shortvideo/profile': { drop: ['statsV2'], cached: true },
  'shortvideo/videos': {
    records: 'aweme_list',
    cursors: [{ param: 'max_cursor', path: 'max_cursor', form: 'same' }],
    trimDrops: ['has_more'],
    extras: { is_ads: false, content_type: 'video' },
  },
  'shortvideo/videos/popular': { records: 'videos' },
  'shortvideo/comment-replies': { records: 'comments', cursors: [{ param: 'cursor', path: 'cursor', form: 'same' }] },
  'shortvideo-shop/products': { records: 'products', cursors: [{ param: 'cursor', path: 'cursor', form: 'base64' }] },
  'socialnet/profile/reels': {
    records: 'reels',
    cursors: [
      { param: 'cursor', path: 'cursor', form: 'urltext' },
      { param: 'next_page_id', path: 'next_page_id', form: 'base64' },
    ],
    nullAtEnd: true,
  },
  'socialnet/group/posts': {
    records: 'posts',
    cursors: [{ param: 'cursor', path: 'cursor', form: 'base64' }],
    nulls: ['text'],
  },
  'socialnet-marketplace/search': {
    records: 'listings',
    cursors: [{ param: 'cursor', path: 'cursor', form: 'base64' }],
    extras: { if_gk_just_listed_tag_on_search_feed: false },
  },
  'socialnet-marketplace/location-search': { dataEnvelope: true },
  'socialnet-ad-library/search': {
    records: 'searchResults',
    cursors: [{ param: 'cursor', path: 'cursor', form: 'urltext' }],
    emptyPageEnd: true,
  },
  'videosite/channel/shorts': { records: 'shorts', cursors: [{ param: 'continuationToken', path: 'continuationToken', form: 'urltext' }] },
  'videosite/video/comments': {
    records: 'comments',
    cursors: [{ param: 'continuationToken', path: 'continuationToken', form: 'urltext' }],
    extras: { isPinned: false },
  },
  'microblog/tweet/transcript': { dataEnvelope: true },
  'microblog/comments': {
    cursors: [{ param: 'cursor', path: 'cursor.bottom', form: 'base64' }],
    custom: timelineCursors,
  },
  'search-ad-library/company-ads': {
    records: 'ads',
    cursors: [{ param: 'cursor', path: 'cursor', form: 'page' }],
    emptyPageEnd: true,
    nulls: ['domain', 'imageUrl'],
  },
  'photoshare/search/hashtag': {
    records: 'posts',
    cursors: [{ param: 'cursor', path: 'cursor', form: 'urltext' }],
    emptyPageEnd: true,
  },
  'photoshare/post-info': { cached: true },
  'forum/post/comments': { records: 'comments', cursors: [{ param: 'cursor', form: 'ids' }], custom: forumTree },
  'forum/subforum': { records: 'posts', cursors: [{ param: 'after', path: 'after', form: 'same' }], nullAtEnd: true },
  'threadtext/user-posts': { records: 'posts', cached: true },
};

/** When the service says its answer came from cache (a fixed time, so bodies stay deterministic). */
const CACHED_AT = '2025-11-21T23:41:07+00:00';
/** Empty objects that are objects, not empty collections: they stay `{}`. */
const EMPTY_OBJECTS = new Set(['media_embed', 'videoDetails']);
/** What only an envelope carries; the rest of a `spec`-dialect body's top level stays at the top. */
const ENVELOPE_ONLY = new Set(['success', 'data', 'credits_used', 'endpoint']);

function get(payload: Json, path: string): unknown {
  let value: unknown = payload;
  for (const key of path.split('.')) value = (value as Json | undefined)?.[key];
  return value;
}

function parentOf(payload: Json, path: string): [Json, string] {
  const keys = path.split('.');
  const last = keys.pop() as string;
  let parent = payload;
  for (const key of keys) parent = parent[key] as Json;
  return [parent, last];
}

/** API reference 2.2's keyed collections as JSON arrays, anywhere; `{}` as `[]` except where it is an object. */
function arrays(value: unknown, name = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => arrays(item));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 0) return EMPTY_OBJECTS.has(name) ? {} : [];
  if (entries.every(([key], index) => key === String(index))) return entries.map(([, item]) => arrays(item));
  return Object.fromEntries(entries.map(([key, item]) => [key, arrays(item, key)]));
}

/** `arrays` applied to the fields of an object that stays an object, however empty. */
function arraysIn(object: Json): Json {
  return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, arrays(item, key)]));
}

/** `spec`-dialect cursors are base64url, so they never start with this. */
const END_MARKER = 'end.';

/**
 * What the cursor of a flagless last page wraps: a tag of the request without its cursors, so the
 * marker is good for that walk only.
 */
function endMarker(id: string, query: URLSearchParams, cursorParams: readonly string[]): string {
  const rest = [...query].filter(([name]) => !cursorParams.includes(name)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${END_MARKER}${hash(`${id}|${JSON.stringify(rest)}`).toString(36)}`;
}

function without(query: URLSearchParams, names: readonly string[]): URLSearchParams {
  const copy = new URLSearchParams(query);
  for (const name of names) copy.delete(name);
  return copy;
}

/** A page-like cursor: "2", "3", … (the page a request asks for; absent = 1). */
function pageNumber(value: string): number {
  if (!/^[1-9]\d{0,8}$/.test(value) || value === '1') throw new SandboxValidationError('Invalid cursor');
  return Number(value);
}

function payloadOf(body: Json): Json {
  return typeof body.data === 'object' && body.data !== null && 'credits_used' in body ? (body.data as Json) : body;
}

/** What a service request asks of the `spec`-dialect handler. */
interface Translated {
  /** The query with every service cursor turned back into the `spec`-dialect cursor it wraps. */
  query: URLSearchParams;
  /** The request follows a flagless last page: it is answered with an empty page. */
  ended: boolean;
  /** The page asked for, for page-like cursors (1 without a cursor). */
  page: number;
}

/** Reads a request's service cursors; `400 Invalid cursor` for any value the dialect did not issue for this walk. */
function translate(operation: SandboxOperation, rule: ServiceRule, request: SandboxRequest): Translated {
  const { query } = request;
  const cursors = rule.cursors ?? [];
  const cursorParams = cursors.map((cursor) => cursor.param);
  const translated: Translated = { query: new URLSearchParams(query), ended: false, page: 1 };
  for (const cursor of cursors) {
    const value = query.get(cursor.param) ?? '';
    if (value === '') continue;
    if (cursor.form === 'page') {
      translated.page = pageNumber(value);
      const first = payloadOf(operation.handle({ ...request, query: without(query, cursorParams) }) as Json);
      const next = get(first, cursor.path as string);
      // The first page's cursor names the resource; page N starts N-1 pages of its size further.
      if (typeof next === 'string') translated.query.set(cursor.param, moveCursor(next, cursorOffset(next) * (translated.page - 1)));
      else translated.ended = true;
      continue;
    }
    const decoded = decodeServiceCursor(cursor.form, value);
    if (rule.emptyPageEnd === true && decoded.startsWith(END_MARKER)) {
      if (decoded !== endMarker(operation.id, query, cursorParams)) throw new SandboxValidationError('Invalid cursor');
      translated.ended = true;
    } else {
      translated.query.set(cursor.param, decoded);
    }
  }
  if (translated.ended) translated.query = without(query, cursorParams);
  return translated;
}

/** Writes a payload's continuations in the service's forms (`payload` already has arrays). */
function continuations(operation: SandboxOperation, rule: ServiceRule, query: URLSearchParams, payload: Json, page: number): void {
  const cursors = rule.cursors ?? [];
  const hasRecords = rule.records !== undefined && (get(payload, rule.records) as Json[]).length > 0;
  for (const cursor of cursors) {
    if (cursor.path === undefined) continue;
    const [parent, key] = parentOf(payload, cursor.path);
    const value = parent[key];
    if (cursor.form === 'page') {
      if (hasRecords) parent[key] = String(page + 1);
      else delete parent[key];
    } else if (typeof value === 'string') {
      parent[key] = encodeServiceCursor(cursor.form, value);
    } else if (value === undefined && rule.emptyPageEnd === true && hasRecords) {
      const cursorParams = cursors.map((item) => item.param);
      parent[key] = encodeServiceCursor(cursor.form, endMarker(operation.id, query, cursorParams));
    } else if (value === undefined && rule.nullAtEnd === true) {
      parent[key] = null;
    }
  }
  if (rule.custom !== undefined) {
    const form = cursors[0]?.form;
    rule.custom(payload, (cursor) => (form === undefined || form === 'page' ? cursor : encodeServiceCursor(form, cursor)));
  }
}

/** Nulls, dropped and unnamed fields (`payload` already has arrays). */
function fields(rule: ServiceRule, query: URLSearchParams, payload: Json): void {
  const records = rule.records === undefined ? [] : (get(payload, rule.records) as Json[]);
  for (const record of records) {
    // Chosen by content, not position, so a record is nulled alike on every page it appears on.
    if (hash(toJson(record)) % 3 === 0) for (const field of rule.nulls ?? []) record[field] = null;
    Object.assign(record, rule.extras);
  }
  for (const field of rule.drop ?? []) delete payload[field];
  if (query.get('trim') === 'true' || query.get('trim') === '1') {
    for (const field of rule.trimDrops ?? []) delete payload[field];
  }
}

/** The operation as the service answers it. */
function serviceOperation(operation: SandboxOperation, rule: ServiceRule): SandboxOperation {
  function handle(request: SandboxRequest): unknown {
    const { query, ended, page } = translate(operation, rule, request);
    const body = operation.handle({ ...request, query }) as Json;
    const specPayload = payloadOf(body);
    if (ended) {
      const [parent, key] = parentOf(specPayload, rule.records as string);
      parent[key] = [];
      for (const { path } of rule.cursors ?? []) {
        if (path === undefined) continue;
        const [holder, name] = parentOf(specPayload, path);
        delete holder[name];
      }
    }
    const payload = arraysIn(specPayload);
    delete payload.success;
    fields(rule, request.query, payload);
    continuations(operation, rule, request.query, payload, page);

    if (rule.dataEnvelope === true) return { ...arraysIn(body), data: { success: true, ...payload } };
    // Fields a `spec`-dialect body carries beside its envelope (photoshare's `note`) stay at the top.
    const outside = specPayload === body ? {} : Object.fromEntries(Object.entries(body).filter(([key]) => !ENVELOPE_ONLY.has(key)));
    return {
      success: true,
      ...payload,
      ...arraysIn(outside),
      credits_remaining: 0,
      credits_charged: 1,
      ...(rule.cached === true ? { cached: true, cached_at: CACHED_AT } : {}),
    };
  }

  return {
    ...operation,
    handle,
    settle(body, remaining) {
      const top = body as Json;
      if ('credits_remaining' in top) top.credits_remaining = remaining;
      return top;
    },
  };
}

/** The `service` dialect of a list of `spec`-dialect operations. */
export function serviceOperations(operations: readonly SandboxOperation[]): SandboxOperation[] {
  return operations.map((operation) => serviceOperation(operation, RULES[operation.id] ?? {}));
}
