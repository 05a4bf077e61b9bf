/**
 * Every continuation shape is followed or reported, never taken for a silent end after page 1: a
 * continuation value of a shape no cursor has, records that are `null` beside a cursor, a flag that
 * promises more on an empty page. Each is served byte for byte by a tiny `node:http` server; the
 * walk yields what it has, reports once (`ignored-continuation`, `stats.ignoredContinuations`) and
 * buys nothing it cannot follow. Records missing where a cursor stands are a `ResponseFormatError`
 * naming the field.
 */
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createClient, ResponseFormatError } from '../../src/index.ts';
import { collect, json, type TestServer, testServer, ignoredEvents, topLevel } from './helpers.ts';

const KEY = 'sk_live_sandbox_continuation_shapes';

let server: TestServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

/** A server answering each request with `answer(query)` as JSON, and a client of it. */
async function serving(answer: (query: URLSearchParams) => unknown): Promise<Client> {
  server = await testServer((request: IncomingMessage, response) => {
    json(response, 200, answer(new URL(request.url ?? '/', 'http://x').searchParams));
  });
  client = createClient({ baseUrl: server.url, apiKey: KEY, retry: { retries: 0 } });
  return client;
}



describe('a continuation value of a shape no cursor has', () => {
  it('subforum `after` as an object is reported, naming the field (the value cut short), after the records of page 1', async () => {
    const c = await serving(() => topLevel({ posts: [{ id: 'a' }, { id: 'b' }], after: { next: 'x' } }));
    const events = ignoredEvents(c);
    expect(await collect(c.forum.subforum({ subforum: 'typescript' }))).toHaveLength(2);
    expect(events).toEqual([{ type: 'ignored-continuation', endpoint: 'forum/subforum', detail: 'after = {"next":"…' }]);
    expect(c.stats.ignoredContinuations).toBe(1);
    expect(server?.received).toHaveLength(1);
  });

  it('a cursor sent as an array beside has_more true is reported', async () => {
    const c = await serving(() => topLevel({ listings: [{ id: 'l' }], cursor: ['x'], has_next_page: true }));
    const events = ignoredEvents(c);
    expect(await collect(c.socialnetMarketplace.search({ lat: 1, lng: 2 }))).toHaveLength(1);
    expect(events.map((event) => event.type === 'ignored-continuation' && event.detail)).toEqual(['cursor = ["x"]']);
  });

  it('one of the reels pair as an object is reported, even with the other beside it', async () => {
    const c = await serving(() => topLevel({ reels: [{ id: 'r' }], cursor: 'c1', next_page_id: { id: 'p1' } }));
    const events = ignoredEvents(c);
    expect(await collect(c.socialnet.profileReels({ url: 'https://socialnet.example/p' }))).toHaveLength(1);
    expect(events.map((event) => event.type === 'ignored-continuation' && event.detail)).toEqual(['next_page_id = {"id":"p1…']);
  });

  it("a forum comment's more.cursor as an object is reported, the rest of the tree still read", async () => {
    const c = await serving(() =>
      topLevel({
        comments: [
          { id: 'a', parent_id: 't3_p', replies: { items: [], more: { cursor: { id: 'x' } } } },
          { id: 'b', parent_id: 't3_p' },
        ],
      }),
    );
    const events = ignoredEvents(c);
    const comments = await collect(c.forum.postComments({ url: 'https://forum.example/r/x/comments/p/t' }));
    expect(comments.map((comment) => comment.id)).toEqual(['a', 'b']);
    expect(events.map((event) => event.type === 'ignored-continuation' && event.detail)).toEqual(['more.cursor = {"id":"x"}']);
  });

  it("microblog comments' cursor.bottom as a number after new posts is reported", async () => {
    const post = { entryId: 'tweet-1', content: { entryType: 'TimelineTimelineItem', itemContent: { tweet_results: { result: { rest_id: '1' } } } } };
    const c = await serving(() => topLevel({ cursor: { bottom: 42 }, result: { instructions: [{ entries: [post] }] } }));
    const events = ignoredEvents(c);
    expect(await collect(c.microblog.comments({ url: 'https://microblog.example/u/status/1' }))).toHaveLength(1);
    expect(events.map((event) => event.type === 'ignored-continuation' && event.detail)).toEqual(['cursor.bottom = 42']);
  });

  it('an end written as null, an empty string or 0 still ends the walk quietly', async () => {
    for (const after of [null, '', 0]) {
      const c = await serving(() => topLevel({ posts: [{ id: 'a' }], after }));
      const events = ignoredEvents(c);
      expect(await collect(c.forum.subforum({ subforum: 'typescript' }))).toHaveLength(1);
      expect(events, JSON.stringify(after)).toEqual([]);
      await c.close();
      await server?.close();
    }
    client = server = undefined;
  });
});

describe('records that are not there beside a continuation', () => {
  it('null posts beside an after cursor are reported, not taken for the end', async () => {
    const c = await serving(() => topLevel({ posts: null, after: 't3_next' }));
    const events = ignoredEvents(c);
    expect(await collect(c.forum.subforum({ subforum: 'typescript' }))).toEqual([]);
    expect(events).toEqual([{ type: 'ignored-continuation', endpoint: 'forum/subforum', detail: 'after = "t3_next" beside records that are null' }]);
  });

  it('null reels beside both cursors are reported', async () => {
    const c = await serving(() => topLevel({ reels: null, cursor: 'c1', next_page_id: 'p1' }));
    const events = ignoredEvents(c);
    expect(await collect(c.socialnet.profileReels({ url: 'https://socialnet.example/p' }))).toEqual([]);
    expect(events.map((event) => event.type === 'ignored-continuation' && event.detail)).toEqual(['cursor = "c1" beside records that are null']);
  });

  it('posts missing beside an after cursor are a ResponseFormatError naming the field', async () => {
    const c = await serving(() => topLevel({ after: 't3_next' }));
    const walk = collect(c.forum.subforum({ subforum: 'typescript' }));
    await expect(walk).rejects.toBeInstanceOf(ResponseFormatError);
    await expect(walk).rejects.toThrow(/posts/);
  });

  it('popular videos whose has_more says true on a page with no videos are reported', async () => {
    const c = await serving(() => topLevel({ videos: [], pagination: { has_more: true, limit: 20, page: 1, total_count: 500 } }));
    const events = ignoredEvents(c);
    expect(await collect(c.shortvideo.popularVideos({ period: 7 }))).toEqual([]);
    expect(events.map((event) => event.type === 'ignored-continuation' && event.detail)).toEqual(['pagination.has_more = true on page 1, which holds no records']);
  });
});
