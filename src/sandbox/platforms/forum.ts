/**
 * Forum: a post with its nested comment tree (E23) and a subforum's posts (E24).
 *
 * The comment tree is never stored. Comments are numbered 0..N-1 in depth-first order, and the
 * size of the subtree starting at a position is a pure function of (seed, url, position, depth):
 * so a node's children are found by stepping from `position + 1` over their subtrees, and a cursor
 * only has to name where a run of siblings resumes, where it ends, and whose children they are.
 * Every comment then sits in exactly one run, and every run is reached by exactly one cursor.
 */
import type { SandboxClockReading } from '../clock.ts';
import {
  Rng,
  decodeCursor,
  encodeCursor,
  hash,
  isoFromSeconds,
  keyed,
  grownBy,
  newestFirstSeconds,
  recordSeconds,
  pageIndices,
  sizeOf,
  unixSecondsAgo,
} from '../data.ts';
import { envelope } from '../envelope.ts';
import { feedSeconds, keyless, withPinned } from '../feed.ts';
import { flag, oneOf, optional, required } from '../params.ts';
import { SandboxValidationError, type FeedFaults, type SandboxOperation, type SandboxRequest } from '../platform.ts';

const DAY = 86_400;
/** Depths run 0 (top level) to 3 (docs/wire.md "Forum comment tree"). */
const MAX_DEPTH = 3;
/** Top-level comments in the first response, and siblings in the answer to a cursor. */
const TOP_LEVEL_BATCH = 10;
const SIBLING_BATCH = 5;
/** At most this many replies of a comment are nested inline; the rest sit behind `replies.more`. */
const MAX_INLINE_REPLIES = 2;

/** A run of siblings: positions [start, end) at one depth under one parent (-1 = the post). */
interface Run {
  start: number;
  end: number;
  depth: number;
  parent: number;
  /** Where the sibling before `start` begins (-1 when none): the duplicate fault repeats it. */
  previous: number;
}

interface More {
  has_more: boolean;
  cursor: string;
}

interface Comment {
  url: string;
  id: string;
  author: string;
  author_fullname: string | null;
  body: string;
  body_html: string;
  name: string;
  parent_id: string;
  permalink: string;
  created_at_iso: string;
  created_utc: number;
  ups: number;
  downs: number;
  score: number;
  collapsed: boolean;
  replies: { items: Record<string, Comment>; more: More };
  more?: More;
}

const NO_MORE: More = { has_more: false, cursor: '' };

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function titleCase(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

class CommentTree {
  readonly post;
  private readonly idPrefix: string;

  constructor(
    private readonly seed: string,
    private readonly url: string,
    readonly total: number,
  ) {
    const rng = new Rng(seed, 'forum/post', url);
    const id = /\/comments\/([a-z0-9]+)/i.exec(url)?.[1] ?? rng.token(7);
    const subforum = /\/r\/([^/?#]+)/.exec(url)?.[1] ?? rng.words(1);
    const created = unixSecondsAgo(rng, 200);
    const selftext = rng.sentence(8, 40);
    const ups = rng.int(1, 50_000);
    const author = `${rng.words(1)}_${rng.token(5)}`;
    this.idPrefix = rng.token(2);
    this.post = {
      id,
      author,
      author_fullname: `t2_${rng.token(8)}`,
      subforum,
      title: titleCase(rng.words(rng.int(4, 12))),
      selftext,
      selftext_html: `<div class="md"><p>${escapeHtml(selftext)}</p></div>`,
      name: `t3_${id}`,
      url,
      permalink: `/r/${subforum}/comments/${id}/`,
      created_at_iso: isoFromSeconds(created),
      downs: 0,
      ups,
      score: ups,
      total_awards_received: rng.int(0, 3),
      num_comments: total,
      created,
      created_utc: created,
      upvote_ratio: Math.round((0.5 + rng.next() / 2) * 100) / 100,
      subforum_subscribers: rng.nullable(rng.int(100, 5_000_000)),
      is_video: false,
      archived: false,
      locked: rng.bool(0.05),
      over_18: false,
      spoiler: false,
    };
  }

  /** Sibling runs reach one response through a cursor that only this tree (url, seed) accepts. */
  encode(run: Run): string {
    const fields = [run.start, run.end, run.depth, run.parent, run.previous];
    return Buffer.from(JSON.stringify({ r: this.check(fields), f: fields })).toString('base64url');
  }

  decode(cursor: string): Run {
    try {
      const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { r?: unknown; f?: unknown };
      const fields = parsed.f;
      if (Array.isArray(fields) && fields.length === 5 && fields.every(Number.isSafeInteger) && parsed.r === this.check(fields)) {
        const [start, end, depth, parent, previous] = fields as number[];
        if (start >= 0 && start < end && end <= this.total && depth >= 0 && depth <= MAX_DEPTH) {
          return { start, end, depth, parent, previous };
        }
      }
    } catch {
      // fall through to the validation error
    }
    throw new SandboxValidationError('Invalid cursor');
  }

  private check(fields: readonly number[]): number {
    return hash(`${this.seed}|forum/post/comments|${this.url}|${fields.join(',')}`);
  }

  /** How many comments the subtree starting at `position` holds, at most `remaining`. */
  private subtreeSize(position: number, depth: number, remaining: number): number {
    if (depth === MAX_DEPTH) return 1;
    const rng = new Rng(this.seed, this.url, 'subtree', position);
    const roll = rng.next();
    let size = 1;
    if (depth === 0) {
      if (roll > 0.9) size = rng.int(16, 40);
      else if (roll > 0.65) size = rng.int(5, 15);
      else if (roll > 0.35) size = rng.int(2, 4);
    } else if (roll > 0.45) {
      size = rng.int(2, depth === 1 ? 8 : 5);
    }
    return Math.min(size, remaining);
  }

  /** The first response: the post's top-level comments, a batch at a time. */
  topLevel(duplicates: boolean): Comment[] {
    return this.siblings({ start: 0, end: this.total, depth: 0, parent: -1, previous: -1 }, TOP_LEVEL_BATCH, duplicates);
  }

  /** The answer to a cursor: the next batch of the run it continues. */
  continued(run: Run, duplicates: boolean): Comment[] {
    return this.siblings(run, SIBLING_BATCH, duplicates);
  }

  private siblings(run: Run, batch: number, duplicates: boolean): Comment[] {
    const out: Comment[] = [];
    // Duplicate fault: the sibling that ended the previous batch comes again, without its replies
    // (those were delivered once already, and their cursors must not be handed out twice).
    if (duplicates && run.previous >= 0) out.push(this.comment(run.previous, run.depth, run.parent, 1));
    let position = run.start;
    let previous = run.previous;
    for (let count = 0; count < batch && position < run.end; count++) {
      const size = this.subtreeSize(position, run.depth, run.end - position);
      out.push(this.comment(position, run.depth, run.parent, size));
      previous = position;
      position += size;
    }
    if (position < run.end && out.length > 0) {
      out[out.length - 1].more = { has_more: true, cursor: this.encode({ ...run, start: position, previous }) };
    }
    return out;
  }

  /** The comment at `position` with up to MAX_INLINE_REPLIES replies nested, recursively. */
  private comment(position: number, depth: number, parent: number, size: number): Comment {
    const rng = new Rng(this.seed, this.url, 'comment', position);
    const id = this.idOf(position);
    const deleted = rng.bool(0.04);
    const body = deleted ? '[deleted]' : rng.sentence(2, 40);
    const created = this.post.created_utc + rng.int(60, 30 * DAY);
    const ups = rng.int(-20, 3_000);
    const items: Comment[] = [];
    const end = position + size;
    let child = position + 1;
    let previous = -1;
    const inline = rng.int(0, MAX_INLINE_REPLIES);
    while (child < end && items.length < inline) {
      const childSize = this.subtreeSize(child, depth + 1, end - child);
      items.push(this.comment(child, depth + 1, position, childSize));
      previous = child;
      child += childSize;
    }
    const more =
      child < end ? { has_more: true, cursor: this.encode({ start: child, end, depth: depth + 1, parent: position, previous }) } : NO_MORE;
    return {
      url: `https://forum.example${this.post.permalink}${id}/`,
      id,
      author: deleted ? '[deleted]' : `${rng.words(1)}_${rng.token(5)}`,
      author_fullname: deleted ? null : `t2_${rng.token(8)}`,
      body,
      body_html: `<div class="md"><p>${escapeHtml(body)}</p></div>`,
      name: `t1_${id}`,
      parent_id: parent < 0 ? this.post.name : `t1_${this.idOf(parent)}`,
      permalink: `${this.post.permalink}${id}/`,
      created_at_iso: isoFromSeconds(created),
      created_utc: created,
      ups,
      downs: 0,
      score: ups,
      collapsed: ups < 0,
      replies: { items: keyed(items), more },
    };
  }

  private idOf(position: number): string {
    return `${this.idPrefix}${position.toString(36)}`;
  }
}

function postComments(request: SandboxRequest) {
  const url = required(request.query, 'url');
  // Cursors carry positions as safe integers, so an absurd `-n` is held to the largest one.
  const tree = new CommentTree(request.seed, url, Math.min(sizeOf(url), Number.MAX_SAFE_INTEGER));
  const cursor = optional(request.query, 'cursor');
  const comments = cursor === undefined ? tree.topLevel(request.duplicates) : tree.continued(tree.decode(cursor), request.duplicates);
  return envelope('forum/post/comments', { credits_charged: 1, post: tree.post, comments: keyed(comments) });
}

const TIMEFRAMES = ['all', 'day', 'week', 'month', 'year'] as const;
const SORTS = ['best', 'hot', 'new', 'top', 'rising'] as const;
const TIMEFRAME_DAYS: Record<(typeof TIMEFRAMES)[number], number> = { all: 5 * 365, day: 1, week: 7, month: 30, year: 365 };

/** What every post of one subforum listing shares. */
interface Listing {
  resource: string;
  name: string;
  id: string;
  subscribers: number;
  sort: (typeof SORTS)[number];
  days: number;
  /** Records before any `advance()`: the spacing of `new` times. */
  base: number;
  growth: number;
  clock: SandboxClockReading;
  feed: FeedFaults | undefined;
}

function subforumPost({ resource, name, id: subforumId, subscribers, sort, days, base, growth, clock, feed }: Listing, index: number, pinned = false) {
  const rng = new Rng(resource, index);
  const id = rng.token(7);
  // `new` lists newest first and `top` highest first, so those two orders hold across pages.
  const seeded = () => (sort === 'new' ? newestFirstSeconds(rng, index, base, (days * DAY) / Math.max(base, 1)) : unixSecondsAgo(rng, days));
  const created = feedSeconds(feed, index, recordSeconds(clock, rng, index, seeded));
  const ups = (sort === 'top' ? Math.floor(100_000 / (1 + Math.max(index, 0) / 5)) + rng.int(0, 3) : rng.int(0, 40_000)) + grownBy(growth, index);
  const isSelf = rng.bool(0.6);
  const selftext = isSelf ? rng.sentence(6, 60) : '';
  const title = titleCase(rng.words(rng.int(3, 14)));
  const author = `${rng.words(1)}_${rng.token(5)}`;
  const permalink = `/r/${name}/comments/${id}/${title.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 40)}/`;
  const host = `${rng.words(1)}.example`;
  const url = isSelf ? `https://forum.example${permalink}` : `https://${host}/${rng.token(10)}`;
  const numComments = rng.int(0, 2_000) + grownBy(growth, index);
  return {
    id: keyless(feed, index) ? null : id,
    name: `t3_${id}`,
    title,
    selftext,
    author,
    subforum: name,
    url,
    permalink,
    score: ups,
    num_comments: numComments,
    created_utc: created,
    over_18: rng.bool(0.02),
    is_self: isSelf,
    selftext_html: isSelf ? `<!-- SC_OFF --><div class="md"><p>${escapeHtml(selftext)}</p></div><!-- SC_ON -->` : '',
    author_fullname: `t2_${rng.token(8)}`,
    subforum_name_prefixed: `r/${name}`,
    subforum_id: subforumId,
    subforum_type: 'public',
    domain: isSelf ? `self.${name}` : host,
    thumbnail: isSelf ? 'self' : `https://thumbs.forum.example/${id}.jpg`,
    ups,
    downs: 0,
    num_crossposts: rng.int(0, 5),
    created,
    subforum_subscribers: subscribers,
    gilded: rng.int(0, 2),
    total_awards_received: rng.int(0, 4),
    upvote_ratio: Math.round((0.5 + rng.next() / 2) * 100) / 100,
    is_video: !isSelf && rng.bool(0.1),
    spoiler: rng.bool(0.02),
    locked: rng.bool(0.03),
    archived: false,
    stickied: pinned || (index < 2 && sort === 'hot'),
    pinned,
    quarantine: false,
    hidden: false,
    saved: false,
    link_flair_text: rng.nullable(rng.words(1), 0.5),
    link_flair_css_class: null,
    link_flair_richtext: {},
    author_flair_text: rng.nullable(rng.words(2), 0.7),
    all_awardings: {},
    awarders: {},
    distinguished: null,
    removed_by_category: null,
    mod_reports: {},
    user_reports: {},
    num_reports: null,
    media: null,
    secure_media: null,
    media_embed: {},
  };
}

/** API reference E24's "trimmed-down response": the fields docs/wire.md "Trimmed subforum posts" lists. */
const TRIMMED_FIELDS = [
  'id',
  'name',
  'title',
  'selftext',
  'author',
  'subforum',
  'url',
  'permalink',
  'score',
  'num_comments',
  'created_utc',
  'over_18',
  'is_self',
] as const;

function trimmed(post: ReturnType<typeof subforumPost>) {
  return Object.fromEntries(TRIMMED_FIELDS.map((field) => [field, post[field]]));
}

function subforum(request: SandboxRequest) {
  const { query } = request;
  const name = required(query, 'subforum').trim().replace(/^\/?r\//, '');
  const timeframe = oneOf(query, 'timeframe', TIMEFRAMES, 'all');
  const sort = oneOf(query, 'sort', SORTS, 'hot');
  const trim = flag(query, 'trim');
  const pageSize = trim ? 25 : 100;
  const resource = [request.seed, 'forum/subforum', name.toLowerCase(), timeframe, sort].join('|');
  const base = sizeOf(name, 150, 1_200);
  const total = base + request.growth;
  const offset = decodeCursor(resource, query.get('after'));
  const community = new Rng(resource, 'subforum');
  const listing: Listing = {
    resource,
    name,
    id: `t5_${community.token(6)}`,
    subscribers: community.int(1_000, 5_000_000),
    sort,
    days: TIMEFRAME_DAYS[timeframe],
    base,
    growth: request.growth,
    clock: request.clock,
    feed: request.feed,
  };
  const indices = pageIndices(total, pageSize, offset, request.duplicates, request.growth);
  const listed = withPinned(indices, request.feed, offset, total, request.growth);
  const posts = listed.map((index, position) => {
    const post = subforumPost(listing, index, position < listed.length - indices.length);
    return trim ? trimmed(post) : post;
  });
  const next = offset + pageSize;
  return envelope(null, { posts: keyed(posts), ...(next < total ? { after: encodeCursor(resource, next) } : {}) });
}

export const operations: SandboxOperation[] = [
  { id: 'forum/post/comments', operation: 'post comments', handle: postComments },
  { id: 'forum/subforum', operation: 'subforum', handle: subforum },
];
