/**
 * Pages of one walk bought concurrently (`concurrency`, `overfetch`): records in the walk's own order,
 * exact checkpoints, no waste where the rule knows its pages, and every cap still holding. The sandbox
 * sits behind a loopback forwarder that counts the requests open at once and those the client cancelled.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, creditCap, mergeMap, pipe, throttle, type ClientOptions, type ForumComment } from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { charged, collect } from './helpers.ts';

interface Forwarder {
  url: string;
  /** Paths with queries, in the order they came. */
  received: string[];
  open: number;
  maxOpen: number;
  /** Requests the client gave up on before the answer was sent. */
  cancelled: number;
  close(): Promise<void>;
}

async function forwardTo(sandbox: Sandbox): Promise<Forwarder> {
  const forwarder = { received: [] as string[], open: 0, maxOpen: 0, cancelled: 0 };
  const server = createServer((request, response) => {
    forwarder.received.push(request.url ?? '');
    forwarder.open++;
    forwarder.maxOpen = Math.max(forwarder.maxOpen, forwarder.open);
    response.on('close', () => {
      forwarder.open--;
      if (!response.writableFinished) forwarder.cancelled++;
    });
    fetch(sandbox.url + (request.url ?? ''), { headers: { 'x-api-key': String(request.headers['x-api-key']) } })
      .then(async (answer) => {
        const text = await answer.text();
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(text);
      })
      .catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(forwarder, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

const THREAD = { url: 'https://forum.example/r/x/comments/conc/thread-n400' };
/** 209 popular videos (period 7, hot, KR): 11 pages of 20. */
const POPULAR = { period: 7, orderBy: 'hot', countryCode: 'KR' } as const;

let sandbox: Sandbox;
let forwarder: Forwarder;
let sequential: ForumComment[];

function clientOf(options: ClientOptions = {}) {
  return createClient({ baseUrl: forwarder.url, apiKey: sandbox.apiKey, retry: { retries: 8, minDelayMs: 0, maxDelayMs: 2 }, maxConcurrentRequests: 32, ...options });
}

/** What a walk of `run` costs, as the sandbox counts it, and what the forwarder saw. */
async function measured<T>(run: () => Promise<T>): Promise<{ result: T; charged: number; maxOpen: number; received: string[] }> {
  const before = charged(sandbox);
  const from = forwarder.received.length;
  forwarder.maxOpen = 0;
  const result = await run();
  return { result, charged: charged(sandbox) - before, maxOpen: forwarder.maxOpen, received: forwarder.received.slice(from) };
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 15, accounts: [{ apiKey: 'sk_live_sandbox_concurrency', credits: 1_000_000 }] });
  forwarder = await forwardTo(sandbox);
  const client = clientOf();
  sequential = await collect(client.forum.postComments(THREAD, { concurrency: 1 }));
  await client.close();
});
afterAll(async () => {
  await forwarder.close();
  await sandbox.close();
});

describe('a forum thread walked with page concurrency', () => {
  it('yields exactly the records of a one-page-at-a-time walk, depth first, buying each cursor once', async () => {
    const client = clientOf();
    const walk = await measured(() => collect(client.forum.postComments(THREAD, { concurrency: 8 })));
    expect(walk.result).toEqual(sequential);
    expect(new Set(walk.received).size).toBe(walk.received.length);
    expect(walk.charged).toBe(walk.received.length);
    expect(client.stats.overfetched).toBe(0);
    await client.close();
  });

  it('has several pages in flight at once, never more than its concurrency', async () => {
    const client = clientOf();
    const walk = await measured(() => collect(client.forum.postComments(THREAD, { concurrency: 4 })));
    expect(walk.maxOpen).toBeGreaterThan(1);
    expect(walk.maxOpen).toBeLessThanOrEqual(4);
    await client.close();
  });

  it("never has more requests in flight than the client's maxConcurrentRequests", async () => {
    const client = clientOf({ maxConcurrentRequests: 3 });
    const walk = await measured(() => collect(client.forum.postComments(THREAD, { concurrency: 16 })));
    expect(walk.result).toEqual(sequential);
    expect(walk.maxOpen).toBeLessThanOrEqual(3);
    await client.close();
  });

  it('gives the same records through resets, cut-short bodies and upstream failures', async () => {
    const faulty = await startSandbox({ port: 0, faults: { reset: 0.1, truncate: 0.1, rate: 0.1 } });
    try {
      const client = createClient({ baseUrl: faulty.url, apiKey: faulty.apiKey, retry: { retries: 12, minDelayMs: 0, maxDelayMs: 2 }, maxConcurrentRequests: 16 });
      expect(await collect(client.forum.postComments(THREAD, { concurrency: 8 }))).toEqual(sequential);
      expect(client.stats.retries).toBeGreaterThan(0);
      await client.close();
    } finally {
      await faulty.close();
    }
  });

  it('resumes from a checkpoint taken at any point without a record twice or missing, and buys no finished page again', async () => {
    const client = clientOf();
    // The pages a walk has finished are the first `pagesDone` pages of the one-at-a-time order.
    const order = (await measured(() => collect(client.forum.postComments(THREAD, { concurrency: 1 })))).received;
    for (const stopAfter of [1, 37, 150, 260, 399]) {
      const first = client.forum.postComments(THREAD, { concurrency: 8 });
      const head: ForumComment[] = [];
      for await (const comment of first) {
        head.push(comment);
        if (head.length === stopAfter) break;
      }
      const checkpoint = JSON.parse(JSON.stringify(first.checkpoint()));
      const finished = new Set(order.slice(0, checkpoint.pagesDone));
      const resumed = await measured(() => collect(client.resume(checkpoint, { concurrency: 8 })));
      expect([...head, ...resumed.result]).toEqual(sequential);
      expect(resumed.received.filter((path) => finished.has(path)), `stopped after ${stopAfter}`).toEqual([]);
    }
    await client.close();
  });

  it('under creditCap(N) spends exactly N credits and yields the records of those pages in order', async () => {
    const client = clientOf();
    for (const cap of [1, 5, 23]) {
      const walk = await measured(() => collect(pipe(client.forum.postComments(THREAD, { concurrency: 8 }), creditCap(cap, { onCap: 'stop' }))));
      expect(walk.charged).toBe(cap);
      expect(walk.result).toEqual(sequential.slice(0, walk.result.length));
    }
    await client.close();
  });

  it('under one creditCap(N) over three concurrent walks with faults never spends an N+1th credit', async () => {
    const faulty = await startSandbox({ port: 0, faults: { reset: 0.1, truncate: 0.1, rate: 0.1 } });
    try {
      const client = createClient({ baseUrl: faulty.url, apiKey: faulty.apiKey, retry: { retries: 12, minDelayMs: 0, maxDelayMs: 2 }, maxConcurrentRequests: 32 });
      const urls = ['a', 'b', 'c'].map((name) => `https://forum.example/r/x/comments/cap${name}/t-n300`);
      const merged = mergeMap((url: string) => client.forum.postComments({ url }, { concurrency: 8 }), { concurrency: 3 });
      const before = faulty.requests.charged[faulty.apiKey] ?? 0;
      await collect(pipe(urls, merged, creditCap(40, { onCap: 'stop' })));
      expect((faulty.requests.charged[faulty.apiKey] ?? 0) - before).toBeLessThanOrEqual(40);
      await client.close();
    } finally {
      await faulty.close();
    }
  });

  it('under throttle still spaces its requests, never in bursts', async () => {
    const client = clientOf();
    const times: number[] = [];
    const subscription = client.events$.subscribe((event) => {
      if (event.type === 'request') times.push(performance.now());
    });
    const stream = pipe(client.forum.postComments(THREAD, { concurrency: 8 }), throttle({ requestsPerSecond: 20 }));
    for await (const _ of stream) if (times.length >= 12) break;
    subscription.unsubscribe();
    // The events come a moment after the gate lets each attempt through; a burst would show a gap near 0.
    expect(times.length).toBeGreaterThanOrEqual(12);
    const gaps = times.slice(1).map((time, index) => time - times[index]);
    expect(Math.min(...gaps)).toBeGreaterThan(40);
    await client.close();
  });

  it('on abort stops every page in flight and rejects with the reason', async () => {
    const slow = await startSandbox({ port: 0, latencyMs: 400 });
    try {
      const client = createClient({ baseUrl: slow.url, apiKey: slow.apiKey, maxConcurrentRequests: 32 });
      const controller = new AbortController();
      const reason = new Error('enough');
      let inFlight = 0;
      client.events$.subscribe((event) => {
        if (event.type === 'request') inFlight++;
        if (event.type === 'request' && inFlight === 6) controller.abort(reason);
      });
      const walk = collect(client.forum.postComments(THREAD, { concurrency: 8, lookahead: 'eager', signal: controller.signal }));
      await expect(walk).rejects.toBe(reason);
      const requests = client.stats.requests;
      await new Promise((resolve) => setTimeout(resolve, 600));
      // Nothing went on after the abort: no page arrived and no request was sent.
      expect(client.stats.requests).toBe(requests);
      expect(client.stats.pages).toBe(1);
      await client.close();
    } finally {
      await slow.close();
    }
  });
});

describe('popular videos walked with page concurrency', () => {
  it('buy every page once the first says how many there are, and not one more', async () => {
    const client = clientOf();
    const walk = await measured(() => collect(client.shortvideo.popularVideos(POPULAR)));
    expect(walk.result).toHaveLength(209);
    expect(walk.charged).toBe(11);
    expect(walk.maxOpen).toBeGreaterThan(1);
    expect(client.stats.overfetched).toBe(0);
    await client.close();
  });

  it('with a limit buy only the pages the limit needs', async () => {
    const client = clientOf();
    const walk = await measured(() => collect(client.shortvideo.popularVideos(POPULAR, { limit: 50 })));
    expect(walk.result).toHaveLength(50);
    expect(walk.charged).toBe(3);
    await client.close();
  });
});

describe('web search', () => {
  const QUERY = { query: 'concurrent-n57' };

  it('reads one page at a time by default and buys no empty page past the first', async () => {
    const client = clientOf();
    const walk = await measured(() => collect(client.search.web(QUERY)));
    expect(walk.result).toHaveLength(57);
    // Pages 1-6 hold the results; page 7 is the empty page that says the walk is over.
    expect(walk.charged).toBe(7);
    expect(walk.maxOpen).toBe(1);
    expect(client.stats.overfetched).toBe(0);
    await client.close();
  });

  it('with overfetch buys pages ahead up to the last one and reports the empty pages it never read', async () => {
    const client = clientOf();
    const overfetches: number[] = [];
    client.events$.subscribe((event) => {
      if (event.type === 'overfetch') overfetches.push(event.credits);
    });
    const walk = await measured(() => collect(client.search.web(QUERY, { concurrency: 11, overfetch: true, lookahead: 'eager' })));
    expect(walk.result).toHaveLength(57);
    expect(walk.charged).toBe(11);
    expect(walk.maxOpen).toBeGreaterThan(1);
    expect(client.stats.overfetched).toBe(4);
    expect(client.stats.overfetchedPages).toBe(4);
    expect(overfetches).toEqual([4]);
    await client.close();
  });
});

describe('the stream options', () => {
  it('refuse a concurrency that is not a positive integer, and an overfetch that is not a boolean', () => {
    const client = clientOf();
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => client.forum.postComments(THREAD, { concurrency })).toThrow(/concurrency must be a positive integer/);
    }
    expect(() => client.search.web({ query: 'x' }, { overfetch: 'yes' as never })).toThrow(/overfetch must be a boolean/);
  });
});
