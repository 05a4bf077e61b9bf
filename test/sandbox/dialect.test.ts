/**
 * The sandbox's `service` dialect over raw HTTP: every operation's body as the service writes it
 * (docs/wire.md "Service dialect"), walked by hand in both dialects to the same record ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { get, type Body } from './helpers.ts';

type Query = Record<string, string>;

interface Case {
  path: string;
  query: Query;
  /** The records of one payload (the body without its envelope). */
  records: (payload: Body) => Body[];
  /** A record's id. */
  id: (record: Body) => string;
  /** The query of the next page, from a payload of either dialect and its records; `undefined` ends the walk. */
  next?: (payload: Body, query: Query, records: Body[]) => Query | undefined;
}

/** A collection of either form as an array. */
function list(collection: Body): Body[] {
  return Array.isArray(collection) ? collection : Object.values(collection);
}

const at =
  (...keys: string[]) =>
  (payload: Body): Body[] =>
    list(keys.reduce((value, key) => value[key], payload));
const one = (payload: Body): Body[] => [payload];
const field = (name: string) => (record: Body) => String(record[name]);

/** Send `param` = the payload's `from` while it is a string or number (not null), and the page had records. */
const follow =
  (param: string, from: string, flag?: (payload: Body) => boolean) =>
  (payload: Body, query: Query, records: Body[]): Query | undefined => {
    const value = payload[from];
    if (value === undefined || value === null || records.length === 0) return undefined;
    if (flag !== undefined && !flag(payload)) return undefined;
    return { ...query, [param]: String(value) };
  };

/** A flag that ends the walk when it says stop, and lets the walk go on when absent (trimmed bodies). */
const flagOr = (name: string) => (payload: Body) => payload[name] === undefined || payload[name] === 1 || payload[name] === true;

const CASES: Case[] = [
  { path: 'shortvideo/profile', query: { handle: 'creator' }, records: one, id: (p) => p.user.id },
  {
    path: 'shortvideo/videos',
    query: { handle: 'creator-n75' },
    records: at('aweme_list'),
    id: field('aweme_id'),
    next: follow('max_cursor', 'max_cursor', flagOr('has_more')),
  },
  {
    path: 'shortvideo/videos/popular',
    query: { countryCode: 'FR' },
    records: at('videos'),
    id: field('id'),
    next: (payload, query) => (payload.pagination.has_more ? { ...query, page: String(payload.pagination.page + 1) } : undefined),
  },
  {
    path: 'shortvideo/comment-replies',
    query: { comment_id: 'c-n45', url: 'https://www.shortvideo.example/@x/video/7123456789' },
    records: at('comments'),
    id: field('cid'),
    next: follow('cursor', 'cursor', flagOr('has_more')),
  },
  {
    path: 'shortvideo-shop/products',
    query: { url: 'https://www.shortvideo.example/shop/store/s-n45' },
    records: at('products'),
    id: field('product_id'),
    next: follow('cursor', 'cursor', flagOr('has_more')),
  },
  {
    path: 'socialnet/profile/reels',
    query: { url: 'https://socialnet.example/page-n25' },
    records: at('reels'),
    id: field('id'),
    next: (payload, query, records) => {
      const cursor = follow('cursor', 'cursor')(payload, query, records);
      return cursor && follow('next_page_id', 'next_page_id')(payload, cursor, records);
    },
  },
  {
    path: 'socialnet/group/posts',
    query: { url: 'https://socialnet.example/groups/g-n8' },
    records: at('posts'),
    id: field('id'),
    next: follow('cursor', 'cursor'),
  },
  {
    path: 'socialnet-marketplace/search',
    query: { lat: '40.7', lng: '-74', query: 'bike-n50' },
    records: at('listings'),
    id: field('id'),
    next: follow('cursor', 'cursor', flagOr('has_next_page')),
  },
  { path: 'socialnet-marketplace/location-search', query: { query: 'berlin' }, records: at('locations'), id: field('page_id') },
  {
    path: 'socialnet-ad-library/search',
    query: { query: 'shoes-n65' },
    records: at('searchResults'),
    id: field('ad_archive_id'),
    next: follow('cursor', 'cursor'),
  },
  {
    path: 'videosite/channel/shorts',
    query: { handle: '@chan-n100' },
    records: at('shorts'),
    id: field('id'),
    next: follow('continuationToken', 'continuationToken'),
  },
  {
    path: 'videosite/video/comments',
    query: { url: 'https://videosite.example/watch?v=abc-n45' },
    records: at('comments'),
    id: field('id'),
    next: follow('continuationToken', 'continuationToken'),
  },
  {
    path: 'videosite/video/transcript',
    query: { url: 'https://videosite.example/watch?v=abc' },
    records: at('transcript'),
    id: (segment) => `${segment.startMs}`,
  },
  { path: 'microblog/tweet/transcript', query: { url: 'https://microblog.example/u/status/1' }, records: one, id: (p) => p.transcript },
  { path: 'microblog/community', query: { url: 'https://microblog.example/i/communities/123' }, records: one, id: field('rest_id') },
  {
    path: 'microblog/comments',
    query: { url: 'https://microblog.example/u/status/123456-n45' },
    records: (payload) =>
      list(payload.result.instructions)
        .flatMap((instruction: Body) => list(instruction.entries))
        .filter((entry: Body) => entry.content.entryType === 'TimelineTimelineItem')
        .map((entry: Body) => entry.content.itemContent.tweet_results.result),
    id: field('rest_id'),
    next: (payload, query, records) => (records.length > 0 ? { ...query, cursor: payload.cursor.bottom } : undefined),
  },
  {
    path: 'search-ad-library/company-ads',
    query: { domain: 'brand.example-n90' },
    records: at('ads'),
    id: field('creativeId'),
    next: follow('cursor', 'cursor'),
  },
  { path: 'photoshare/transcript', query: { url: 'https://photoshare.example/p/ABC/' }, records: at('transcripts'), id: field('id') },
  {
    path: 'photoshare/search/hashtag',
    query: { hashtag: 'travel-n50' },
    records: at('posts'),
    id: field('id'),
    next: follow('cursor', 'cursor'),
  },
  { path: 'photoshare/highlight-detail', query: { id: '17900000000000000' }, records: one, id: field('id') },
  {
    path: 'photoshare/post-info',
    query: { url: 'https://photoshare.example/p/ABC/' },
    records: (payload) => [payload.data.xdt_shortcode_media],
    id: field('id'),
  },
  // forum/post/comments is walked by `walkTree` below.
  { path: 'forum/post/comments', query: { url: 'https://forum.example/r/x/comments/abc/t-n60' }, records: at('comments'), id: field('id') },
  {
    path: 'forum/subforum',
    query: { subforum: 'travel-n230' },
    records: at('posts'),
    id: field('id'),
    next: follow('after', 'after'),
  },
  { path: 'professional/search/posts', query: { query: 'rust' }, records: at('posts'), id: field('url') },
  {
    path: 'search/search',
    query: { query: 'coffee-n25' },
    records: at('results'),
    id: field('url'),
    next: (payload, query, records) =>
      records.length > 0 && Number(query.page ?? 1) < 11 ? { ...query, page: String(Number(query.page ?? 1) + 1) } : undefined,
  },
  { path: 'threadtext/user-posts', query: { handle: 'someone' }, records: at('posts'), id: field('id') },
];

/** Operations the service still answers in the API reference's `data` form (docs/wire.md). */
const DATA_FORM = new Set(['socialnet-marketplace/location-search', 'microblog/tweet/transcript']);
const ENVELOPE_FIELDS = ['success', 'credits_used', 'credits_remaining', 'credits_charged', 'endpoint', 'cached', 'cached_at'];

function payloadOf(body: Body): Body {
  if ('credits_used' in body) return body.data;
  return Object.fromEntries(Object.entries(body).filter(([key]) => !ENVELOPE_FIELDS.includes(key)));
}

let spec: Sandbox;
let service: Sandbox;
beforeAll(async () => {
  spec = await startSandbox({ port: 0 });
  service = await startSandbox({ port: 0, dialect: 'service', accounts: [{ apiKey: 'sk_live_sandbox_service', credits: 100_000 }] });
});
afterAll(async () => {
  await spec?.close();
  await service?.close();
});

async function fetchBody(sandbox: Sandbox, path: string, query: Query): Promise<Body> {
  const reply = await get(sandbox.url, `/v1/scrape/${path}`, query, { key: sandbox.apiKey });
  if (reply.status !== 200) throw new Error(`${path} answered ${reply.status}: ${reply.text.slice(0, 200)}`);
  return reply.body;
}

/** Every page of a walk by hand, with its bodies. */
async function walkPages(sandbox: Sandbox, c: Case) {
  const ids: string[] = [];
  const bodies: Body[] = [];
  let query: Query | undefined = c.query;
  while (query !== undefined) {
    if (bodies.length > 100) throw new Error(`walk of ${c.path} did not end`);
    const body = await fetchBody(sandbox, c.path, query);
    bodies.push(body);
    const payload = payloadOf(body);
    const records = c.records(payload);
    ids.push(...records.map(c.id));
    query = c.next?.(payload, query, records);
  }
  return { ids, bodies };
}

/** The whole forum comment tree, depth first, following every `more` whose `has_more` is true. */
async function walkTree(sandbox: Sandbox, url: string): Promise<{ ids: string[]; requests: number }> {
  const ids: string[] = [];
  let requests = 0;
  const visit = async (query: Query): Promise<void> => {
    requests += 1;
    const payload = payloadOf(await fetchBody(sandbox, 'forum/post/comments', query));
    const comments = list(payload.comments);
    const walkComment = async (comment: Body): Promise<void> => {
      ids.push(comment.id);
      for (const reply of list(comment.replies.items)) await walkComment(reply);
      if (comment.replies.more.has_more === true) await visit({ url, cursor: comment.replies.more.cursor });
    };
    for (const comment of comments) await walkComment(comment);
    const siblings = payload.more ?? comments.at(-1)?.more;
    if (siblings?.has_more === true) await visit({ url, cursor: siblings.cursor });
  };
  await visit({ url });
  return { ids, requests };
}

/** Paths of every keyed collection (API reference 2.2) and every `{}` left in a body. */
function keyedLeft(value: Body, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => keyedLeft(item, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  const keys = Object.keys(value);
  const name = path.split('.').at(-1) ?? '';
  if (keys.length === 0) return ['media_embed', 'videoDetails'].includes(name) ? [] : [path];
  if (keys.every((key, index) => key === String(index))) return [path];
  return keys.flatMap((key) => keyedLeft(value[key], path === '' ? key : `${path}.${key}`));
}

describe('service dialect bodies', () => {
  it('covers all 26 operations', () => {
    expect(new Set(CASES.map((c) => c.path)).size).toBe(26);
  });

  it.each(CASES.filter((c) => !DATA_FORM.has(c.path)).map((c) => [c.path, c] as const))(
    '%s puts its payload at the top with credits_remaining and credits_charged, and no data wrapper',
    async (_, c) => {
      const body = await fetchBody(service, c.path, c.query);
      expect(body.success).toBe(true);
      expect(body).not.toHaveProperty('credits_used');
      expect(body).not.toHaveProperty('endpoint');
      expect(body.credits_charged).toBe(1);
      expect(body.credits_remaining).toBe(service.balance(service.apiKey).credits);
      if (c.path !== 'photoshare/post-info') expect(body).not.toHaveProperty('data');
      expect(c.records(payloadOf(body)).length).toBeGreaterThan(0);
    },
  );

  it.each([...DATA_FORM])('%s keeps the data form of API reference 2.1', async (path) => {
    const c = CASES.find((item) => item.path === path) as Case;
    const body = await fetchBody(service, c.path, c.query);
    expect(body).toMatchObject({ success: true, data: { success: true }, credits_used: 1 });
    expect(body).not.toHaveProperty('credits_charged');
  });

  it.each(CASES.map((c) => [c.path, c] as const))('%s sends every collection as a JSON array', async (_, c) => {
    const body = await fetchBody(service, c.path, c.query);
    expect(keyedLeft(body)).toEqual([]);
    expect(Array.isArray(c.records(payloadOf(body)))).toBe(true);
  });

  it('sends post-info media at data.xdt_shortcode_media, one level up from the API reference', async () => {
    const query = { url: 'https://photoshare.example/p/ABC/' };
    const [inSpec, inService] = await Promise.all([
      fetchBody(spec, 'photoshare/post-info', query),
      fetchBody(service, 'photoshare/post-info', query),
    ]);
    expect(inService.data.xdt_shortcode_media.id).toBe(inSpec.data.data.xdt_shortcode_media.id);
    expect(Object.keys(inService.data)).toEqual(['xdt_shortcode_media']);
  });

  it('marks cached answers with cached and cached_at', async () => {
    const body = await fetchBody(service, 'shortvideo/profile', { handle: 'creator' });
    expect(body.cached).toBe(true);
    expect(body.cached_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  });

  it('leaves statsV2 out of a profile', async () => {
    const body = await fetchBody(service, 'shortvideo/profile', { handle: 'creator' });
    expect(body.stats).toBeTypeOf('object');
    expect(body).not.toHaveProperty('statsV2');
  });

  it('sends some group posts with text null', async () => {
    const c = CASES.find((item) => item.path === 'socialnet/group/posts') as Case;
    const { bodies } = await walkPages(service, { ...c, query: { url: 'https://socialnet.example/groups/g-n30' } });
    const posts = bodies.flatMap((body) => body.posts);
    expect(posts.some((post: Body) => post.text === null)).toBe(true);
    expect(posts.some((post: Body) => typeof post.text === 'string')).toBe(true);
  });

  it('sends some company ads with domain and imageUrl null', async () => {
    const body = await fetchBody(service, 'search-ad-library/company-ads', { domain: 'brand.example-n90' });
    const nulled = body.ads.filter((ad: Body) => ad.domain === null);
    expect(nulled.length).toBeGreaterThan(0);
    expect(nulled.every((ad: Body) => ad.imageUrl === null)).toBe(true);
    expect(body.ads.some((ad: Body) => ad.domain === 'brand.example-n90')).toBe(true);
  });

  it('adds fields the API reference never names to records', async () => {
    const body = await fetchBody(service, 'shortvideo/videos', { handle: 'creator-n75' });
    expect(body.aweme_list[0]).toMatchObject({ is_ads: false, content_type: 'video' });
  });

  it('keeps the photo transcript note at the top level', async () => {
    const body = await fetchBody(service, 'photoshare/transcript', { url: 'https://photoshare.example/p/ABC/' });
    expect(body.note).toMatch(/AI-powered/);
  });
});

describe('service dialect continuations', () => {
  it('leaves has_more out of trimmed shortvideo/videos bodies and ends the walk with an empty page', async () => {
    const trimmed = { ...(CASES.find((c) => c.path === 'shortvideo/videos') as Case), query: { handle: 'creator-n75', trim: 'true' } };
    const { ids, bodies } = await walkPages(service, trimmed);
    expect(bodies.map((body) => body.aweme_list.length)).toEqual([30, 30, 15, 0]);
    for (const body of bodies) {
      expect(body).not.toHaveProperty('has_more');
      expect(body.max_cursor).toBeTypeOf('number');
    }
    expect(ids).toEqual((await walkPages(spec, trimmed)).ids);
  });

  it('keeps has_more in untrimmed shortvideo/videos bodies, 0 on the last page beside a cursor', async () => {
    const { bodies } = await walkPages(service, CASES.find((c) => c.path === 'shortvideo/videos') as Case);
    expect(bodies.map((body) => body.has_more)).toEqual([1, 1, 0]);
    expect(String(bodies[2].max_cursor)).toMatch(/^\d{13}$/);
  });

  it.each([
    ['shortvideo-shop/products', 'has_more', false],
    ['socialnet-marketplace/search', 'has_next_page', false],
    ['shortvideo/comment-replies', 'has_more', 0],
  ])('%s still carries a cursor on its last page, with %s saying stop', async (path, flag, stop) => {
    const { bodies } = await walkPages(service, CASES.find((c) => c.path === path) as Case);
    expect(bodies.length).toBeGreaterThan(1);
    expect(bodies.slice(0, -1).every((body) => body[flag] !== stop)).toBe(true);
    const last = bodies.at(-1);
    expect(last[flag]).toBe(stop);
    expect(['string', 'number']).toContain(typeof last.cursor);
  });

  it.each(['socialnet-ad-library/search', 'photoshare/search/hashtag', 'search-ad-library/company-ads'])(
    '%s carries a cursor on its last page and answers it with an empty page without one',
    async (path) => {
      const c = CASES.find((item) => item.path === path) as Case;
      const { bodies } = await walkPages(service, c);
      const [lastFull, empty] = bodies.slice(-2);
      expect(c.records(lastFull).length).toBeGreaterThan(0);
      expect(lastFull.cursor).toBeTypeOf('string');
      expect(c.records(empty)).toEqual([]);
      expect(empty).not.toHaveProperty('cursor');
    },
  );

  it('sends null cursors on the last page of reels and subforum posts', async () => {
    const reels = await walkPages(service, CASES.find((c) => c.path === 'socialnet/profile/reels') as Case);
    expect(reels.bodies.at(-1)).toMatchObject({ cursor: null, next_page_id: null });
    const subforum = await walkPages(service, CASES.find((c) => c.path === 'forum/subforum') as Case);
    expect(subforum.bodies.at(-1).after).toBeNull();
  });

  it('puts the forum top-level continuation in a more beside comments, never on a comment', async () => {
    const body = await fetchBody(service, 'forum/post/comments', { url: 'https://forum.example/r/x/comments/abc/t-n300' });
    expect(Object.keys(body).indexOf('more')).toBe(Object.keys(body).indexOf('comments') + 1);
    expect(body.more.has_more).toBe(true);
    expect(body.more.cursor).toMatch(/^-?[0-9a-z]+(,-?[0-9a-z]+)+$/);
    expect(body.comments.every((comment: Body) => !('more' in comment))).toBe(true);
  });

  it('sends a leaf comment replies.more as { has_more: false, next_cursor: null }', async () => {
    const body = await fetchBody(service, 'forum/post/comments', { url: 'https://forum.example/r/x/comments/abc/t-n60' });
    const leaves = body.comments.filter((comment: Body) => comment.replies.more.has_more === false);
    expect(leaves.length).toBeGreaterThan(0);
    for (const leaf of leaves) expect(leaf.replies.more).toEqual({ has_more: false, next_cursor: null });
  });

  it('ends the forum tree with a top more saying has_more false', async () => {
    const body = await fetchBody(service, 'forum/post/comments', { url: 'https://forum.example/r/x/comments/abc/t-n4' });
    expect(body.more).toEqual({ has_more: false, cursor: null });
  });
});

describe('service dialect cursors', () => {
  const comments = { url: 'https://videosite.example/watch?v=abc-n45' };

  it('sends URL-encoded text cursors holding %2F, accepted back byte for byte', async () => {
    const first = await fetchBody(service, 'videosite/video/comments', comments);
    expect(first.continuationToken).toContain('%2F');
    const reply = await get(service.url, '/v1/scrape/videosite/video/comments', { ...comments, continuationToken: first.continuationToken }, { key: service.apiKey });
    expect(reply.status).toBe(200);
    expect(reply.body.comments.length).toBe(20);
  });

  it('refuses a URL-encoded cursor sent decoded, free of charge', async () => {
    const first = await fetchBody(service, 'videosite/video/comments', comments);
    const before = service.balance(service.apiKey).credits;
    const decoded = decodeURIComponent(first.continuationToken);
    const reply = await get(service.url, '/v1/scrape/videosite/video/comments', { ...comments, continuationToken: decoded }, { key: service.apiKey });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'Invalid cursor', endpoint: 'videosite/video/comments', credits_required: 1 });
    expect(service.balance(service.apiKey).credits).toBe(before);
  });

  it('refuses a URL-encoded cursor sent raw in the URL (so the server decodes it once too often)', async () => {
    const first = await fetchBody(service, 'videosite/video/comments', comments);
    const target = `${service.url}/v1/scrape/videosite/video/comments?url=${encodeURIComponent(comments.url)}&continuationToken=${first.continuationToken}`;
    const response = await fetch(target, { headers: { 'x-api-key': service.apiKey } });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe('Invalid cursor');
  });

  it('refuses a URL-encoded cursor encoded twice', async () => {
    const first = await fetchBody(service, 'videosite/video/comments', comments);
    const twice = encodeURIComponent(first.continuationToken);
    const reply = await get(service.url, '/v1/scrape/videosite/video/comments', { ...comments, continuationToken: twice }, { key: service.apiKey });
    expect(reply.status).toBe(400);
  });

  it('sends base64 cursors ending in = and refuses them without their padding', async () => {
    const query = { url: 'https://www.shortvideo.example/shop/store/s-n45' };
    const first = await fetchBody(service, 'shortvideo-shop/products', query);
    expect(first.cursor).toMatch(/^[A-Za-z0-9+/]+={1,2}$/);
    const ok = await get(service.url, '/v1/scrape/shortvideo-shop/products', { ...query, cursor: first.cursor }, { key: service.apiKey });
    expect(ok.status).toBe(200);
    const trimmed = await get(service.url, '/v1/scrape/shortvideo-shop/products', { ...query, cursor: first.cursor.replace(/=+$/, '') }, { key: service.apiKey });
    expect(trimmed.status).toBe(400);
  });

  it('sends page-like cursors "2", "3" on company ads', async () => {
    const { bodies } = await walkPages(service, CASES.find((c) => c.path === 'search-ad-library/company-ads') as Case);
    expect(bodies.map((body) => body.cursor)).toEqual(['2', '3', '4', undefined]);
  });

  it.each(['0', '1', '02', '2.0', 'abc'])('refuses the company-ads cursor %j', async (cursor) => {
    const reply = await get(service.url, '/v1/scrape/search-ad-library/company-ads', { domain: 'brand.example-n90', cursor }, { key: service.apiKey });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('Invalid cursor');
  });

  it('refuses the end-of-walk cursor of one walk on another', async () => {
    const { bodies } = await walkPages(service, CASES.find((c) => c.path === 'photoshare/search/hashtag') as Case);
    const endCursor = bodies.at(-2).cursor;
    const reply = await get(service.url, '/v1/scrape/photoshare/search/hashtag', { hashtag: 'other-n50', cursor: endCursor }, { key: service.apiKey });
    expect(reply.status).toBe(400);
  });

  it('refuses a spec-dialect cursor', async () => {
    const query = { url: 'https://socialnet.example/groups/g-n8' };
    const fromSpec = await fetchBody(spec, 'socialnet/group/posts', query);
    const reply = await get(service.url, '/v1/scrape/socialnet/group/posts', { ...query, cursor: fromSpec.data.cursor }, { key: service.apiKey });
    expect(reply.status).toBe(400);
  });

  it('sends the forum tree cursors as comma-separated lists and refuses one with an id dropped', async () => {
    const url = 'https://forum.example/r/x/comments/abc/t-n300';
    const first = await fetchBody(service, 'forum/post/comments', { url });
    const ok = await get(service.url, '/v1/scrape/forum/post/comments', { url, cursor: first.more.cursor }, { key: service.apiKey });
    expect(ok.status).toBe(200);
    const cut = first.more.cursor.split(',').slice(1).join(',');
    const refused = await get(service.url, '/v1/scrape/forum/post/comments', { url, cursor: cut }, { key: service.apiKey });
    expect(refused.status).toBe(400);
  });
});

describe('both dialects serve the same records', () => {
  it.each(CASES.filter((c) => c.path !== 'forum/post/comments').map((c) => [c.path, c] as const))(
    '%s: a walk by hand reads the same ids in both dialects',
    async (_, c) => {
      const [inSpec, inService] = await Promise.all([walkPages(spec, c), walkPages(service, c)]);
      expect(inSpec.ids.length).toBeGreaterThan(0);
      expect(inService.ids).toEqual(inSpec.ids);
      if (c.next !== undefined && c.path !== 'search/search') expect(inSpec.bodies.length).toBeGreaterThan(1);
    },
  );

  it('forum/post/comments: the whole tree reads the same ids, each once, in both dialects', async () => {
    const url = 'https://forum.example/r/x/comments/abc/t-n300';
    const [inSpec, inService] = await Promise.all([walkTree(spec, url), walkTree(service, url)]);
    expect(inSpec.ids).toHaveLength(300);
    expect(new Set(inSpec.ids).size).toBe(300);
    expect(inService.ids).toEqual(inSpec.ids);
    expect(inService.requests).toBe(inSpec.requests);
  });

  it('the duplicate fault repeats the same records in both dialects', async () => {
    const duplicatingSpec = await startSandbox({ port: 0, faults: { duplicates: true } });
    const duplicatingService = await startSandbox({ port: 0, faults: { duplicates: true }, dialect: 'service' });
    try {
      const c = CASES.find((item) => item.path === 'socialnet/group/posts') as Case;
      const [inSpec, inService] = await Promise.all([walkPages(duplicatingSpec, c), walkPages(duplicatingService, c)]);
      expect(inService.ids).toEqual(inSpec.ids);
      expect(new Set(inSpec.ids).size).toBeLessThan(inSpec.ids.length);
    } finally {
      await duplicatingSpec.close();
      await duplicatingService.close();
    }
  });
});

describe('the Date header', () => {
  // Writers order the versions of a record by it (docs/datasets.md): the machine's clock, as a real service's.
  it.each(['spec', 'service'] as const)('is sent on every answer in the %s dialect, the machine’s time to the second', async (dialect) => {
    const sandbox = dialect === 'spec' ? spec : service;
    const before = Math.floor(Date.now() / 1000) * 1000;
    const reply = await get(sandbox.url, '/v1/scrape/forum/subforum', { subforum: 'date-n10' }, { key: sandbox.apiKey });
    expect(reply.status).toBe(200);
    const date = Date.parse(reply.headers.get('date') ?? '');
    expect(date).toBeGreaterThanOrEqual(before);
    expect(date).toBeLessThanOrEqual(Date.now());
  });
});

describe('service dialect errors', () => {
  it.each([
    ['a missing parameter (400)', 'shortvideo/videos', {}, 'sk_live_sandbox'],
    ['an unknown key (401)', 'shortvideo/videos', { handle: 'x' }, 'sk_live_sandbox_nobody'],
  ])('answers %s with the same body as the spec dialect', async (_, path, query, key) => {
    const [inSpec, inService] = await Promise.all([
      get(spec.url, `/v1/scrape/${path}`, query, { key }),
      get(service.url, `/v1/scrape/${path}`, query, { key: key === 'sk_live_sandbox' ? service.apiKey : key }),
    ]);
    expect(inService.status).toBe(inSpec.status);
    expect(inService.body).toEqual(inSpec.body);
  });

  it('answers an empty account with the API reference 402 body', async () => {
    const broke = await startSandbox({ port: 0, dialect: 'service', accounts: [{ apiKey: 'sk_live_sandbox_broke', credits: 0 }] });
    try {
      const reply = await get(broke.url, '/v1/scrape/shortvideo/profile', { handle: 'x' }, { key: 'sk_live_sandbox_broke' });
      expect(reply.status).toBe(402);
      expect(reply.body).toEqual({ error: 'Insufficient credits', required: 1, available: 0 });
    } finally {
      await broke.close();
    }
  });

  it('refuses an unknown dialect with a TypeError', async () => {
    await expect(startSandbox({ port: 0, dialect: 'real' as 'spec' })).rejects.toThrow(/dialect must be spec or service, got real/);
  });
});
