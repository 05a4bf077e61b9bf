/**
 * How far a walk buys ahead of its reader (`lookahead`, `limit`, `take(n)`), counted by the sandbox's
 * charged credits in both dialects. A `for await` loop may stop at any record, so what is at risk
 * grows with what it has taken: pages bought and not yet read stay ≤ ⌊pages read / 4⌋ + 2; a reader
 * that says how much it will take risks at most 2 pages past it; an export (`'eager'`) buys at full
 * page concurrency. Every page bought and never read is counted in `stats` and the `overfetch` event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientEvent, createClient, filter, map, pipe, take } from '../../src/index.ts';
import { type Sandbox, type SandboxDialect, startSandbox } from '../../src/sandbox/index.ts';
import { collect } from './helpers.ts';

const DIALECTS: readonly SandboxDialect[] = ['spec', 'service'];
const KEY = 'sk_live_sandbox_lookahead';
/** 2,000 comments in 536 pages (runs between fetches) of 1 to 9 comments. */
const THREAD = { url: 'https://forum.example/r/x/comments/ahead/thread-n2000' };
/** 209 popular videos: 11 pages of 20. */
const POPULAR = { period: 7, orderBy: 'hot', countryCode: 'KR' } as const;

const sandboxes = {} as Record<SandboxDialect, Sandbox>;
/** Records of each page of the thread, in the order a walk reads them. */
let pageSizes: number[];

beforeAll(async () => {
  for (const dialect of DIALECTS) {
    // Some latency, so pages bought ahead are still in flight while the reader reads.
    sandboxes[dialect] = await startSandbox({ port: 0, dialect, latencyMs: 5, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
  }
  const client = clientOf('spec');
  pageSizes = [];
  client.events$.subscribe((event) => {
    if (event.type === 'page') pageSizes.push(event.records);
  });
  await collect(client.forum.postComments(THREAD, { concurrency: 1 }));
  await client.close();
});
afterAll(async () => {
  for (const dialect of DIALECTS) await sandboxes[dialect].close();
});

function clientOf(dialect: SandboxDialect) {
  return createClient({ baseUrl: sandboxes[dialect].url, apiKey: KEY, retry: { retries: 0 }, maxConcurrentRequests: 32 });
}

const charged = (dialect: SandboxDialect): number => sandboxes[dialect].requests.charged[KEY] ?? 0;

/** Pages a walk must read to yield its first `records` records. */
function pagesFor(records: number): number {
  let sum = 0;
  const index = pageSizes.findIndex((size) => (sum += size) >= records);
  expect(index).toBeGreaterThanOrEqual(0);
  return index + 1;
}

/** What a walk cost: credits the sandbox charged, pages the walk read, and the most pages bought ahead of the reader at once. */
async function costOf(dialect: SandboxDialect, read: (client: ReturnType<typeof clientOf>) => Promise<unknown>) {
  const client = clientOf(dialect);
  let requests = 0;
  let pages = 0;
  let worstExcess = -Infinity;
  const overfetches: ClientEvent[] = [];
  client.events$.subscribe((event) => {
    if (event.type === 'page') pages++;
    if (event.type === 'overfetch') overfetches.push(event);
    if (event.type !== 'request') return;
    requests++;
    // Bought and not yet read, this request included, against what the reader has taken so far.
    worstExcess = Math.max(worstExcess, requests - pages - (Math.floor(pages / 4) + 2));
  });
  const before = charged(dialect);
  await read(client);
  const cost = { credits: charged(dialect) - before, pages: client.stats.pages, worstExcess, stats: client.stats, overfetches };
  await client.close();
  return cost;
}

async function firstOf(source: AsyncIterable<unknown>, count: number): Promise<number> {
  let taken = 0;
  for await (const _ of source) if (++taken === count) break;
  return taken;
}

describe.each(DIALECTS)('a for-await loop at default options (%s dialect)', (dialect) => {
  it('that breaks after the first 20 comments of a 2,000-comment thread buys at most pages read + ⌊pages read / 4⌋ + 2', async () => {
    const cost = await costOf(dialect, (client) => firstOf(client.forum.postComments(THREAD), 20));
    expect(cost.pages).toBe(pagesFor(20));
    expect(cost.credits).toBeLessThanOrEqual(cost.pages + Math.floor(cost.pages / 4) + 2);
    expect(cost.worstExcess).toBeLessThanOrEqual(0);
  });

  it("that reads docs/guide/operators.md's 120 records and breaks buys at most pages read + ⌊pages read / 4⌋ + 2, never more ahead at any moment", async () => {
    const cost = await costOf(dialect, (client) => firstOf(client.forum.postComments(THREAD), 120));
    expect(cost.pages).toBe(pagesFor(120));
    expect(cost.credits).toBeLessThanOrEqual(cost.pages + Math.floor(cost.pages / 4) + 2);
    expect(cost.worstExcess).toBeLessThanOrEqual(0);
  });

  it('reports the pages it bought and never read, and what they cost, when the reader breaks', async () => {
    const cost = await costOf(dialect, (client) => firstOf(client.forum.postComments(THREAD), 120));
    const unread = cost.credits - cost.pages;
    expect(unread).toBeGreaterThan(0);
    expect(cost.stats.overfetchedPages).toBe(unread);
    expect(cost.stats.overfetched).toBe(unread);
    expect(cost.overfetches).toEqual([{ type: 'overfetch', endpoint: 'forum/post/comments', pages: unread, credits: unread }]);
  });

  it('widens as the reader takes pages: a whole thread with pages in flight together, none bought twice or left unread', async () => {
    const cost = await costOf(dialect, (client) => collect(client.forum.postComments(THREAD)));
    expect(cost.credits).toBe(pageSizes.length);
    expect(cost.pages).toBe(pageSizes.length);
    expect(cost.worstExcess).toBeLessThanOrEqual(0);
    expect(cost.stats.overfetchedPages).toBe(0);
    // Not one page at a time: the window grew past its first 2 pages.
    const client = clientOf(dialect);
    let requests = 0;
    let pages = 0;
    let mostAhead = 0;
    client.events$.subscribe((event) => {
      if (event.type === 'page') pages++;
      if (event.type === 'request') mostAhead = Math.max(mostAhead, ++requests - pages);
    });
    await collect(client.forum.postComments(THREAD));
    await client.close();
    expect(mostAhead).toBeGreaterThan(4);
  });
});

describe.each(DIALECTS)('a reader that says how much it will read (%s dialect)', (dialect) => {
  it('take(120) buys at most the pages its 120 records need + 2', async () => {
    const cost = await costOf(dialect, (client) => collect(pipe(client.forum.postComments(THREAD), take(120))));
    expect(cost.credits).toBeLessThanOrEqual(pagesFor(120) + 2);
    expect(cost.stats.overfetchedPages).toBe(cost.credits - pagesFor(120));
  });

  it('take(120) below a map still reaches the walk, also an eager one', async () => {
    for (const lookahead of ['cautious', 'eager'] as const) {
      const cost = await costOf(dialect, (client) => collect(pipe(client.forum.postComments(THREAD, { lookahead }), map((c) => c.id), take(120))));
      expect(cost.credits, lookahead).toBeLessThanOrEqual(pagesFor(120) + 2);
    }
  });

  it('limit: 120 on an eager walk buys at most the pages its records need + 2, where the eager window alone would buy many more', async () => {
    const limited = await costOf(dialect, (client) => collect(client.forum.postComments(THREAD, { limit: 120, lookahead: 'eager' })));
    expect(limited.credits).toBeLessThanOrEqual(pagesFor(120) + 2);
    const broken = await costOf(dialect, (client) => firstOf(client.forum.postComments(THREAD, { lookahead: 'eager' }), 120));
    expect(broken.credits).toBeGreaterThan(pagesFor(120) + 2);
  });

  it('take(n) below a filter does not tell the walk (any number of records may be dropped) and still reads on correctly', async () => {
    const cost = await costOf(dialect, (client) =>
      collect(pipe(client.forum.postComments(THREAD), filter((c) => c.depth === 0), take(30))),
    );
    expect(cost.worstExcess).toBeLessThanOrEqual(0);
    expect(cost.credits).toBeLessThanOrEqual(cost.pages + Math.floor(cost.pages / 4) + 2);
  });

  it('a stream read again after take(n) is no longer held to n', async () => {
    const client = clientOf(dialect);
    const stream = client.forum.postComments(THREAD);
    expect(await collect(pipe(stream, take(10)))).toHaveLength(10);
    expect(await collect(stream)).toHaveLength(1990);
    await client.close();
  });
});

describe.each(DIALECTS)('an eager walk (%s dialect)', (dialect) => {
  it('reads a whole thread with no page bought twice and none left unread', async () => {
    const cost = await costOf(dialect, (client) => collect(client.forum.postComments(THREAD, { lookahead: 'eager' })));
    expect(cost.credits).toBe(pageSizes.length);
    expect(cost.stats.overfetchedPages).toBe(0);
  });

  it('buys further ahead than a cautious one from the start', async () => {
    const cost = await costOf(dialect, (client) => collect(client.forum.postComments(THREAD, { lookahead: 'eager' })));
    expect(cost.worstExcess).toBeGreaterThan(0);
  });
});

describe.each(DIALECTS)('popular videos whose total agrees with their pages (%s dialect)', (dialect) => {
  it('are bought ahead once page 1 is full and says the same as its total, and not one page more', async () => {
    for (const lookahead of ['cautious', 'eager'] as const) {
      const cost = await costOf(dialect, (client) => collect(client.shortvideo.popularVideos(POPULAR, { lookahead })));
      expect(cost.credits, lookahead).toBe(11);
      expect(cost.stats.overfetchedPages, lookahead).toBe(0);
    }
  });
});

describe('the lookahead option', () => {
  it("refuses anything but 'eager' or 'cautious' with a TypeError naming it", () => {
    const client = clientOf('spec');
    expect(() => client.forum.postComments(THREAD, { lookahead: 'greedy' as never })).toThrow(/lookahead must be 'eager' or 'cautious'/);
  });
});
