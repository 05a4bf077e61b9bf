/**
 * No walk ends early in silence. Every operation of the table is driven through bodies that lack
 * its has-more flag (as the service's trimmed bodies do), built from the row itself: a paged
 * operation must go on to the page its continuation asks for and end only at an end signal; an
 * unpaged one whose body offers a cursor anyway must report it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type ClientEvent, createClient, operations, type OperationSpec } from '../../src/index.ts';
import { collect, json, LIST_WALKS, PAGED_WALKS, SINGLE_WALKS, type TestServer, testServer } from './helpers.ts';

const PARAMS: Record<string, Record<string, string | number>> = Object.fromEntries(
  [...PAGED_WALKS, ...LIST_WALKS, ...SINGLE_WALKS].map((walk) => [walk.id, walk.params]),
);
PARAMS['shortvideo/videos/popular'] = {};
PARAMS['socialnet-marketplace/location-search'] = { query: 'lyon' };
PARAMS['photoshare/transcript'] = { url: 'https://photoshare.example/p/abc' };

/** A table path made relative to the payload, as the client reads it (`data.posts` → `posts`). */
const relative = (path: string): string => (path === 'data' ? '' : path.replace(/^data\./, ''));

/** `payload` with `value` set at the dotted payload-relative `path` (`''` merges into the payload). */
function put(payload: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  if (path === '') return { ...payload, ...(value as object) };
  const [head, ...rest] = path.split('.');
  const inner = (payload[head] ?? {}) as Record<string, unknown>;
  return { ...payload, [head]: rest.length === 0 ? value : put(inner, rest.join('.'), value) };
}

const post = (id: string) => ({
  entryId: `tweet-${id}`,
  content: { entryType: 'TimelineTimelineItem', itemContent: { tweet_results: { result: { rest_id: id } } } },
});

/** The records of page `page` (1, 2, or 3 = past the end) in the payload, in the row's own form. */
function records(op: OperationSpec, page: number): Record<string, unknown> {
  const at = relative(op.records.at);
  const ids = page === 1 ? ['1', '2'] : page === 2 ? ['3'] : [];
  switch (op.records.kind) {
    case 'one':
      return put({}, at, { id: 'one' });
    case 'list':
      return put({}, at, ids.map((id) => ({ id })));
    case 'timeline':
      return put({}, at, [{ type: 'TimelineAddEntries', entries: ids.map(post) }]);
    case 'tree':
      return put({}, at, ids.map((id) => ({ id, parent_id: 't3_p', replies: { items: [], more: { cursor: null } } })));
  }
}

/** Page `page`'s payload without any has-more flag: a continuation to page 2 on page 1, none after. */
function payload(op: OperationSpec, page: number): Record<string, unknown> {
  const body = records(op, page);
  const { continuation } = op;
  const next = page === 1 ? 'bmV4dA==' : undefined;
  switch (continuation.kind) {
    case 'none':
      return { ...body, cursor: 'bW9yZQ==' };
    case 'cursor':
    case 'timeline':
      return next === undefined ? body : put(body, relative(continuation.from), next);
    case 'cursorPair':
      return next === undefined ? body : put(put(body, relative(continuation.from[0]), next), relative(continuation.from[1]), 'cGFnZQ==');
    case 'page':
      return body;
    case 'tree':
      return next === undefined ? body : { ...body, more: { cursor: next } };
  }
}

/** Which page a request asks for: the first, the one the page-1 continuation points at, or past it. */
function pageAsked(op: OperationSpec, query: URLSearchParams): number {
  if (op.continuation.kind === 'page') return Number(query.get(op.continuation.param) ?? 1);
  return query.size === Object.keys(PARAMS[op.id]).length ? 1 : 2;
}

let server: TestServer;
let client: Client;
const ignored: ClientEvent[] = [];

beforeAll(async () => {
  server = await testServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const op = operations.find((row) => row.path === url.pathname) as OperationSpec;
    const page = pageAsked(op, url.searchParams);
    json(response, 200, { success: true, ...payload(op, page), credits_remaining: 100, credits_charged: 1 });
  });
  client = createClient({ baseUrl: server.url, apiKey: 'sk_live_sandbox_missing_flags', retry: { retries: 0 } });
  client.events$.subscribe((event) => {
    if (event.type === 'ignored-continuation') ignored.push(event);
  });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

describe('a body without its has-more flag', () => {
  it('is tried on every operation of the table', () => {
    expect(operations.filter((op) => PARAMS[op.id] === undefined).map((op) => op.id)).toEqual([]);
  });

  for (const op of operations as readonly OperationSpec[]) {
    if (op.continuation.kind === 'none') {
      it(`of ${op.id} offering a cursor is reported, not ignored in silence`, async () => {
        const before = ignored.length;
        const found = await collect(client.stream(op.id as never, PARAMS[op.id] as never));
        expect(found.length).toBeGreaterThan(0);
        expect(ignored.slice(before)).toEqual([{ type: 'ignored-continuation', endpoint: op.id, detail: 'cursor = "bW9yZQ=="' }]);
      });
    } else {
      it(`of ${op.id} goes on to the next page and ends at the end signal`, async () => {
        const before = ignored.length;
        const found = await collect(client.stream(op.id as never, PARAMS[op.id] as never));
        expect(found).toHaveLength(3);
        expect(ignored.slice(before)).toEqual([]);
      });
    }
  }
});
