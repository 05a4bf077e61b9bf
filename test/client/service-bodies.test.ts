/**
 * The client against bodies in the forms the service itself publishes, served byte for byte by a
 * tiny `node:http` server: the payload at the top level beside `success`, JSON arrays, the forum
 * tree's top-level `more`, trimmed bodies without their flag, and the service's cursor forms.
 */
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createClient, ResponseFormatError } from '../../src/index.ts';
import { collect, json, type TestServer, testServer, ignoredEvents, topLevel } from './helpers.ts';

const KEY = 'sk_live_sandbox_service_bodies';
const FAST = { retries: 0 };

let server: TestServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

/** A server answering each request with `answer(query)` as JSON, and a client of it. */
async function serving(answer: (query: URLSearchParams, index: number) => unknown): Promise<Client> {
  server = await testServer((request: IncomingMessage, response, index) => {
    json(response, 200, answer(new URL(request.url ?? '/', 'http://x').searchParams, index));
  });
  client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
  return client;
}


/** API reference 2.1's envelope, for the regressions whose bodies differ from the API reference's in one thing only. */
function wrapped(payload: object): object {
  return { success: true, data: { success: true, ...payload }, credits_used: 1, endpoint: 'x' };
}


describe('a payload at the top level beside success', () => {
  it('yields the records of every page, where the old reader refused the body', async () => {
    const c = await serving((query) =>
      query.has('max_cursor')
        ? topLevel({ aweme_list: [{ aweme_id: '3' }], max_cursor: 1_700_000_000_000, has_more: 0 })
        : topLevel({ aweme_list: [{ aweme_id: '1' }, { aweme_id: '2' }], max_cursor: 1_700_000_000_001, has_more: 1 }),
    );
    const videos = await collect(c.shortvideo.videos({ handle: 'someone' }));
    expect(videos.map((video) => video.aweme_id)).toEqual(['1', '2', '3']);
  });

  it('meters the credits the body says it charged', async () => {
    const c = await serving(() => ({ success: true, aweme_list: [{ aweme_id: '1' }], has_more: 0, credits_remaining: 5, credits_charged: 3 }));
    await collect(c.shortvideo.videos({ handle: 'someone' }));
    expect(c.stats.credits).toBe(3);
  });

  it('yields a single record without the envelope-only fields', async () => {
    const c = await serving(() =>
      topLevel({ user: { uniqueId: 'someone' }, stats: { followerCount: 1 }, itemList: [], cached: true, cached_at: '2026-01-01T00:00:00+00:00' }),
    );
    const [profile] = await collect(c.shortvideo.profile({ handle: 'someone' }));
    expect(profile).toEqual({ user: { uniqueId: 'someone' }, stats: { followerCount: 1 }, itemList: [] });
  });

  it('finds post info one level up: data.xdt_shortcode_media of the payload', async () => {
    const c = await serving(() => topLevel({ data: { xdt_shortcode_media: { id: '42', shortcode: 'abc' } }, cached: true }));
    expect(await collect(c.photoshare.postInfo({ url: 'https://photoshare.example/p/abc' }))).toEqual([{ id: '42', shortcode: 'abc' }]);
  });

  it('still reads the form of the API reference beside it, credits_used and all', async () => {
    const c = await serving(() => ({
      success: true,
      data: { success: true, data: { xdt_shortcode_media: { id: '42' } } },
      credits_used: 1,
      endpoint: 'photoshare/post-info',
    }));
    expect(await collect(c.photoshare.postInfo({ url: 'https://photoshare.example/p/abc' }))).toEqual([{ id: '42' }]);
  });

  it('finds a payload under data that lacks the API reference\'s marks (no credits_used, endpoint or inner success)', async () => {
    const c = await serving(() => ({ success: true, data: { aweme_list: [{ aweme_id: '1' }], has_more: 0 }, credits_remaining: 5, credits_charged: 1 }));
    expect((await collect(c.shortvideo.videos({ handle: 'someone' }))).map((video) => video.aweme_id)).toEqual(['1']);
  });

  it('refuses a body whose records are in neither place with a ResponseFormatError', async () => {
    const c = await serving(() => topLevel({ something_else: [] }));
    await expect(collect(c.shortvideo.videos({ handle: 'someone' }))).rejects.toBeInstanceOf(ResponseFormatError);
  });
});

describe('collections', () => {
  it('are read as JSON arrays or keyed objects, empty as [] or {}', async () => {
    const c = await serving((query) => {
      switch (query.get('after')) {
        case null:
          return topLevel({ posts: [{ id: 'a', tags: [] }], after: 't3_a' });
        case 't3_a':
          return topLevel({ posts: { 0: { id: 'b', tags: {} } }, after: 't3_b' });
        default:
          return topLevel({ posts: [], after: 't3_c' });
      }
    });
    const posts = await collect(c.forum.subforum({ subforum: 'x' }));
    expect(posts.map((post) => post.id)).toEqual(['a', 'b']);
  });
});

describe('the end of a walk', () => {
  it('comes with a flag that says stop, though the last page still carries a cursor', async () => {
    const c = await serving(() => topLevel({ products: [{ product_id: '1' }], cursor: 'bmV4dA==', has_more: false }));
    expect(await collect(c.shortvideoShop.products({ url: 'https://shop.example/s' }))).toHaveLength(1);
    expect(server?.received).toHaveLength(1);
  });

  it('of trimmed short videos without has_more goes on while pages have records and a new cursor, where the old reader stopped after page 1', async () => {
    const c = await serving((query) => {
      const cursor = Number(query.get('max_cursor') ?? 0);
      if (cursor === 0) return wrapped({ aweme_list: [{ aweme_id: '1' }, { aweme_id: '2' }], max_cursor: 1_700_000_000_200 });
      if (cursor === 1_700_000_000_200) return wrapped({ aweme_list: [{ aweme_id: '3' }], max_cursor: 1_700_000_000_100 });
      return wrapped({ aweme_list: [], max_cursor: 1_700_000_000_100 });
    });
    const videos = await collect(c.shortvideo.videos({ handle: 'someone', trim: true }));
    expect(videos.map((video) => video.aweme_id)).toEqual(['1', '2', '3']);
    expect(server?.received).toHaveLength(3);
  });

  it('of trimmed short videos whose cursor comes back ends there, reported, without buying the page again', async () => {
    const c = await serving((query) =>
      query.has('max_cursor')
        ? topLevel({ aweme_list: [{ aweme_id: '2' }], max_cursor: 1_700_000_000_200 })
        : topLevel({ aweme_list: [{ aweme_id: '1' }], max_cursor: 1_700_000_000_200 }),
    );
    const events = ignoredEvents(c);
    const videos = await collect(c.shortvideo.videos({ handle: 'someone', trim: true }));
    expect(videos.map((video) => video.aweme_id)).toEqual(['1', '2']);
    expect(server?.received).toHaveLength(2);
    expect(events).toEqual([
      { type: 'ignored-continuation', endpoint: 'shortvideo/videos', detail: '"17000000…" (13 characters) came back in a body without its has-more flag' },
    ]);
  });

  it('of popular videos without pagination.has_more goes on to the empty page', async () => {
    const c = await serving((query) => (query.get('page') === '3' ? topLevel({ videos: [] }) : topLevel({ videos: [{ id: query.get('page') }] })));
    expect((await collect(c.shortvideo.popularVideos())).map((video) => video.id)).toEqual(['1', '2']);
  });

  it('at an empty page whose flag still says more is reported, not silent', async () => {
    const c = await serving(() => topLevel({ listings: [], cursor: 'Y3Vyc29y', has_next_page: true }));
    const events = ignoredEvents(c);
    expect(await collect(c.socialnetMarketplace.search({ lat: 1, lng: 2 }))).toEqual([]);
    expect(events).toEqual([{ type: 'ignored-continuation', endpoint: 'socialnet-marketplace/search', detail: 'cursor = "Y3Vyc29y"' }]);
  });

  it('with reels sending null for both cursors ends quietly', async () => {
    const c = await serving(() => topLevel({ reels: [{ id: 'r' }], cursor: null, next_page_id: null }));
    const events = ignoredEvents(c);
    expect(await collect(c.socialnet.profileReels({ url: 'https://socialnet.example/p' }))).toHaveLength(1);
    expect(events).toEqual([]);
  });
});

describe('a continuation the rule does not follow', () => {
  it('on an unpaged operation is reported once per walk: an event, a stats counter', async () => {
    const c = await serving(() => topLevel({ locations: [{ name: 'Lyon' }], cursor: 'bW9yZQ==' }));
    const events = ignoredEvents(c);
    expect(await collect(c.socialnetMarketplace.locationSearch({ query: 'lyon' }))).toEqual([{ name: 'Lyon' }]);
    expect(events).toEqual([{ type: 'ignored-continuation', endpoint: 'socialnet-marketplace/location-search', detail: 'cursor = "bW9yZQ=="' }]);
    expect(c.stats.ignoredContinuations).toBe(1);
  });

  it('is reported only once in a walk that meets it on every page', async () => {
    const c = await serving((query) => (query.has('cursor') ? topLevel({ reels: [{ id: '2' }], cursor: 'c2' }) : topLevel({ reels: [{ id: '1' }], cursor: 'c1', next_page_id: 'p1' })));
    const events = ignoredEvents(c);
    // Page 1 pairs its values; page 2 offers a cursor without its next_page_id.
    expect(await collect(c.socialnet.profileReels({ url: 'https://socialnet.example/p' }))).toHaveLength(2);
    expect(events).toHaveLength(1);
    expect(c.stats.ignoredContinuations).toBe(1);
  });
});

describe('the forum comment tree', () => {
  /** A comment with `replies` of its own, in the service's form. */
  const comment = (id: string, parent: string, items: object[] = [], more: object = { has_more: false, next_cursor: null }) => ({
    id,
    parent_id: parent,
    body: `text of ${id}`,
    replies: { items, more },
  });

  it('fetches the top-level more beside comments, where the old reader lost 5 of 39 comments', async () => {
    // 34 comments in the first answer (17 top-level, each with one reply), 5 more top-level behind the cursor.
    const first = Array.from({ length: 17 }, (_, i) => comment(`c${i}`, 't3_p', [comment(`c${i}r`, `t1_c${i}`)]));
    const rest = Array.from({ length: 5 }, (_, i) => comment(`d${i}`, 't3_p'));
    const c = await serving((query) =>
      query.get('cursor') === 'd0,d1,d2,d3,d4'
        ? wrapped({ comments: rest, more: { has_more: false, cursor: null } })
        : wrapped({ post: { id: 'p' }, comments: first, more: { has_more: true, cursor: 'd0,d1,d2,d3,d4' } }),
    );
    const comments = await collect(c.forum.postComments({ url: 'https://forum.example/r/x/comments/p/t' }));
    expect(comments).toHaveLength(39);
    expect(new Set(comments.map((each) => each.id)).size).toBe(39);
    expect(comments.slice(-5).map((each) => each.id)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4']);
  });

  it('follows replies.more and skips one that says has_more false with next_cursor null', async () => {
    const c = await serving((query) =>
      query.get('cursor') === 'a1,a2'
        ? topLevel({ comments: [comment('a1', 't1_a'), comment('a2', 't1_a')], more: { has_more: false, cursor: null } })
        : topLevel({ comments: [comment('a', 't3_p', [], { has_more: true, cursor: 'a1,a2' }), comment('b', 't3_p')] }),
    );
    const comments = await collect(c.forum.postComments({ url: 'https://forum.example/r/x/comments/p/t' }));
    expect(comments.map((each) => [each.id, each.depth])).toEqual([
      ['a', 0],
      ['a1', 1],
      ['a2', 1],
      ['b', 0],
    ]);
    expect(server?.received).toHaveLength(2);
  });

  it('resumed after its first page was read through pages() yields exactly the rest, each comment once', async () => {
    const c = await serving((query) => {
      switch (query.get('cursor')) {
        case 'x1':
          return topLevel({ comments: [comment('a1', 't1_a')], more: { has_more: false, cursor: null } });
        case 'x2':
          return topLevel({ comments: [comment('c', 't3_p'), comment('d', 't3_p')], more: { has_more: false, cursor: null } });
        default:
          return topLevel({
            comments: [comment('a', 't3_p', [comment('a0', 't1_a')], { has_more: true, cursor: 'x1' }), comment('b', 't3_p', [comment('b0', 't1_b')])],
            more: { has_more: true, cursor: 'x2' },
          });
      }
    });
    const url = 'https://forum.example/r/x/comments/p/t';
    const stream = c.forum.postComments({ url });
    for await (const _body of stream.pages()) break;
    const rest = await collect(c.resume(JSON.parse(JSON.stringify(stream.checkpoint()))));
    // a, a0, b, b0 came inside the first body; a1 (behind x1) and c, d (behind x2) are the rest.
    expect(rest.map((each) => (each as { id: string }).id)).toEqual(['a1', 'c', 'd']);
  });
});

describe('cursors', () => {
  /** The raw query value of `name` in the request line the server received. */
  const rawValue = (url: string, name: string): string | undefined =>
    url
      .split('?')[1]
      ?.split('&')
      .find((pair) => pair.startsWith(`${name}=`))
      ?.slice(name.length + 1);

  it.each([
    ['an integer of 13-digit milliseconds', 1_700_000_000_123, 'max_cursor'],
    ['base64 with = and + and /', 'ab+c/d==', 'max_cursor'],
    ['URL-encoded text holding %2F and %2B', 'v1%2Fab%2Bcd%3D', 'max_cursor'],
    ['a page-like string', '2', 'max_cursor'],
  ] as const)('go back byte for byte: %s', async (_label, cursor, param) => {
    const c = await serving((query) =>
      query.has(param) ? topLevel({ aweme_list: [], has_more: 0 }) : topLevel({ aweme_list: [{ aweme_id: '1' }], max_cursor: cursor, has_more: 1 }),
    );
    await collect(c.shortvideo.videos({ handle: 'someone' }));
    const raw = rawValue(server?.received[1]?.url ?? '', param);
    expect(raw).toBeDefined();
    // Percent-decoding and form-decoding (as URLSearchParams reads it) both give back the very value sent.
    expect(decodeURIComponent(raw as string)).toBe(String(cursor));
    expect(new URLSearchParams(`v=${raw}`).get('v')).toBe(String(cursor));
  });

  it('keep a space unambiguous: %20, never the + that URLSearchParams writes', async () => {
    const c = await serving((query) => (query.has('after') ? topLevel({ posts: [] }) : topLevel({ posts: [{ id: 'a' }], after: 'a b+c' })));
    await collect(c.forum.subforum({ subforum: 'x' }));
    expect(rawValue(server?.received[1]?.url ?? '', 'after')).toBe('a%20b%2Bc');
  });
});
