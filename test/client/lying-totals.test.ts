/**
 * Popular videos buy pages ahead from `total_count / limit`, but only while the page read last agrees
 * with its total: a full page of `limit` videos and a `has_more` that says what `page × limit <
 * total_count` says. A tiny `node:http` server serves totals that lie (and a page it refuses); the
 * requests it receives are the pages bought. (Truthful totals bought ahead: `lookahead.test.ts`, on
 * the sandbox.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createClient, ValidationError } from '../../src/index.ts';
import { collect, json, type TestServer, testServer } from './helpers.ts';

const KEY = 'sk_live_sandbox_lying_totals';

let server: TestServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

/**
 * A server whose page `n` holds `videos(n)` videos and says `hasMore(n)`, with `limit` 10 and
 * `total_count` 500; the pages in `refused` are answered with a 400.
 */
async function serving(videos: (page: number) => number, hasMore: (page: number) => boolean, refused: readonly number[] = []): Promise<Client> {
  server = await testServer((request, response) => {
    const page = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
    if (refused.includes(page)) return json(response, 400, { error: 'Invalid value for page' });
    const list = Array.from({ length: videos(page) }, (_, i) => ({ id: `${page}-${i}`, item_id: `${page}-${i}` }));
    // A little latency, so pages bought ahead are still in flight when the walk reads on.
    setTimeout(() => json(response, 200, { success: true, data: { success: true, videos: list, pagination: { has_more: hasMore(page), limit: 10, page, total_count: 500 } }, credits_used: 1, endpoint: 'x' }), 5);
  });
  client = createClient({ baseUrl: server.url, apiKey: KEY, retry: { retries: 0 }, maxConcurrentRequests: 32 });
  return client;
}

const pagesBought = (): number[] => (server?.received ?? []).map((request) => Number(new URL(request.url, 'http://x').searchParams.get('page') ?? '1'));

describe("popular videos whose total lies, as in the service's own example", () => {
  it.each(['cautious', 'eager'] as const)('(page 1 holds 1 video of a limit of 10, total_count 500; page 2 says has_more false) buy only the 2 pages there are, %s', async (lookahead) => {
    const c = await serving(() => 1, (page) => page < 2);
    expect(await collect(c.shortvideo.popularVideos({ period: 7 }, { lookahead }))).toHaveLength(2);
    expect(pagesBought().sort()).toEqual([1, 2]);
    expect(c.stats.overfetchedPages).toBe(0);
  });
});

describe('popular videos whose total agrees with page 1 and then lies', () => {
  it('read by a for-await loop buy at most the pages there are + 1, and report the page never read', async () => {
    // Page 1 is full and promises more; page 2 is full too but says it is the last.
    const c = await serving(() => 10, (page) => page < 2);
    const overfetches: number[] = [];
    c.events$.subscribe((event) => {
      if (event.type === 'overfetch') overfetches.push(event.pages);
    });
    expect(await collect(c.shortvideo.popularVideos({ period: 7 }))).toHaveLength(20);
    expect(pagesBought().length).toBeLessThanOrEqual(3);
    expect(c.stats.overfetchedPages).toBe(pagesBought().length - 2);
    expect(overfetches).toEqual(c.stats.overfetchedPages > 0 ? [c.stats.overfetchedPages] : []);
  });

  it('stop believing it once a page read disagrees: after a short page 3, pages are bought one at a time, none past the last', async () => {
    // Pages 1-2 agree with the total; page 3 holds 4 videos yet says there is more; pages 4-6 hold 1 each, page 6 the last.
    const c = await serving((page) => (page <= 2 ? 10 : page <= 3 ? 4 : 1), (page) => page < 6);
    expect(await collect(c.shortvideo.popularVideos({ period: 7 }))).toHaveLength(27);
    expect(pagesBought().sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(c.stats.overfetchedPages).toBe(0);
  });
});

describe('a walk that fails with pages bought ahead', () => {
  it('reports the pages it bought and never read before it rejects', async () => {
    // Page 1 is believed (500 videos, 50 pages); page 2 is refused while pages 3 on were bought ahead.
    const c = await serving(() => 10, () => true, [2]);
    const overfetches: number[] = [];
    c.events$.subscribe((event) => {
      if (event.type === 'overfetch') overfetches.push(event.pages);
    });
    await expect(collect(c.shortvideo.popularVideos({ period: 7 }, { lookahead: 'eager', concurrency: 4 }))).rejects.toBeInstanceOf(ValidationError);
    const unread = pagesBought().filter((page) => page > 2).length;
    expect(unread).toBeGreaterThan(0);
    expect(c.stats.overfetchedPages).toBe(unread);
    expect(overfetches).toEqual([unread]);
  });
});
