import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientEvent, controlOf, createClient, type RequestGate, UpstreamError } from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { charged, clientOf, collect, json, PAGED_WALKS, testServer } from './helpers.ts';
import { stringifyExact } from '../../src/exact-json.ts';

let clean: Sandbox;
let faulty: Sandbox;

beforeAll(async () => {
  const accounts = [{ apiKey: 'sk_live_sandbox_resilience', credits: 1_000_000 }];
  clean = await startSandbox({ port: 0, accounts });
  faulty = await startSandbox({ port: 0, accounts, seed: 'sandbox', faults: { rate: 0.1, reset: 0.1, truncate: 0.1, html: 0.1 } });
});
afterAll(async () => {
  await clean.close();
  await faulty.close();
});

describe('retries under the sandbox faults', () => {
  for (const walk of PAGED_WALKS) {
    it(`give the same records for ${walk.id} as a clean run: none lost, none twice`, async () => {
      const reference = clientOf(clean);
      const client = clientOf(faulty, { retry: { retries: 12, minDelayMs: 1, maxDelayMs: 5 } });
      const expected = await collect(reference.stream(walk.id as never, walk.params as never));
      const records = await collect(client.stream(walk.id as never, walk.params as never));
      expect(records).toEqual(expected);
      await reference.close();
      await client.close();
    });
  }

  it('actually retried (faults happened) and counted every attempt as a request', async () => {
    const client = clientOf(faulty, { retry: { retries: 12, minDelayMs: 1, maxDelayMs: 5 } });
    const before = faulty.requests.total;
    await collect(client.forum.subforum({ subforum: 'count-n2000' }));
    expect(client.stats.retries).toBeGreaterThan(0);
    expect(client.stats.requests).toBe(faulty.requests.total - before);
    expect(client.stats.pages).toBe(20);
    await client.close();
  });
});

describe('Retry-After', () => {
  it('is waited for before the retry', async () => {
    const server = await testServer((_request, response, index) => {
      if (index === 0) json(response, 429, { error: 'Too many requests' }, { 'retry-after': '0.2' });
      else json(response, 200, { success: true, data: { success: true, posts: {} }, credits_used: 1 });
    });
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x', retry: { minDelayMs: 1, maxDelayMs: 1_000 } });
    const retries: ClientEvent[] = [];
    client.events$.subscribe((event) => event.type === 'retry' && retries.push(event));
    await collect(client.forum.subforum({ subforum: 'x' }));
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ type: 'retry', attempt: 1 });
    expect((retries[0] as { delayMs: number }).delayMs).toBeGreaterThanOrEqual(200);
    await client.close();
    await server.close();
  });

  it('longer than maxDelayMs ends the retries with the error', async () => {
    const server = await testServer((_request, response) => json(response, 503, { error: 'Failed to fetch forum subforum' }, { 'retry-after': '3600' }));
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x', retry: { minDelayMs: 1, maxDelayMs: 1_000 } });
    await expect(collect(client.forum.subforum({ subforum: 'x' }))).rejects.toThrow(UpstreamError);
    expect(server.received).toHaveLength(1);
    await client.close();
    await server.close();
  });
});

describe('gates', () => {
  it('are asked before every attempt, retries included', async () => {
    const server = await testServer((_request, response, index) => {
      if (index === 0) json(response, 500, { error: 'Failed to fetch forum subforum' });
      else json(response, 200, { success: true, data: { success: true, posts: { 0: { id: 'a' } } }, credits_used: 1 });
    });
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x', retry: { minDelayMs: 1, maxDelayMs: 2 } });
    let asked = 0;
    const stream = client.forum.subforum({ subforum: 'x' });
    controlOf(stream)?.addGate({ acquire: async () => (asked++, true) });
    expect(await collect(stream)).toHaveLength(1);
    expect(asked).toBe(2);
    await client.close();
    await server.close();
  });

  it('end the walk cleanly when they refuse, with the checkpoint at the unfetched page', async () => {
    const client = clientOf(clean);
    const reference = await collect(client.forum.subforum({ subforum: 'gate-n250' }));
    let allowed = 2;
    const gate: RequestGate = { acquire: async () => allowed-- > 0 };
    const stream = client.forum.subforum({ subforum: 'gate-n250' });
    controlOf(stream)?.addGate(gate);
    const before = charged(clean);
    const head = await collect(stream);
    expect(head).toHaveLength(200);
    expect(charged(clean) - before).toBe(2);
    const checkpoint = stream.checkpoint();
    expect(checkpoint).toMatchObject({ pagesDone: 2, skip: 0 });
    const tail = await collect(client.resume(checkpoint));
    expect([...head, ...tail]).toEqual(reference);
    await client.close();
  });

  it('from rateLimit space the requests of every stream of the client', async () => {
    const server = await testServer((_request, response) => {
      json(response, 200, { success: true, data: { success: true, posts: { 0: { id: 'a' } } }, credits_used: 1 });
    });
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x', rateLimit: { requestsPerSecond: 50 } });
    // When each request is sent (past every gate), read on the client: arrival times at the server also
    // carry each new connection's set-up, which makes a first request late and shrinks the span.
    const times: number[] = [];
    const sent = client.events$.subscribe((event) => {
      if (event.type === 'request') times.push(performance.now());
    });
    await Promise.all([0, 1, 2, 3].map((i) => collect(client.forum.subforum({ subforum: `s${i}` }))));
    sent.unsubscribe();
    expect(times).toHaveLength(4);
    const gaps = times.slice(1).map((time, i) => time - times[i]);
    // 50 per second is one every 20 ms. A callback that runs late on a busy machine may shrink one gap
    // by a few ms; a burst would show gaps near 0, and the span cannot shrink by more than that delay.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(10);
    expect(times[times.length - 1] - times[0]).toBeGreaterThanOrEqual(gaps.length * 20 - 5);
    await client.close();
    await server.close();
  });
});

describe('metering', () => {
  it('counts requests, pages, records and credits of a walk', async () => {
    const client = clientOf(clean);
    await collect(client.forum.subforum({ subforum: 'meter-n250' }));
    expect(client.stats).toEqual({ requests: 3, pages: 3, records: 250, credits: 3, retries: 0, duplicates: 0, overfetched: 0, overfetchedPages: 0, ignoredContinuations: 0 });
    await client.close();
  });

  it('takes credits from data.credits_charged when credits_used is absent', async () => {
    const server = await testServer((_request, response) =>
      json(response, 200, { success: true, data: { success: true, credits_charged: 2, posts: {} } }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x' });
    await collect(client.professional.searchPosts({ query: 'x' }));
    expect(client.stats.credits).toBe(2);
    await client.close();
    await server.close();
  });

  it('emits a request and a page event per page, in order', async () => {
    const client = clientOf(clean);
    const events: ClientEvent[] = [];
    client.events$.subscribe((event) => events.push(event));
    await collect(client.forum.subforum({ subforum: 'events-n150' }));
    expect(events.map((event) => event.type)).toEqual(['request', 'page', 'request', 'page']);
    expect(events[1]).toEqual({ type: 'page', endpoint: 'forum/subforum', records: 100, credits: 1 });
    await client.close();
  });

  it('adds what operators report to stats and events', async () => {
    const client = clientOf(clean);
    const events: ClientEvent[] = [];
    client.events$.subscribe((event) => events.push(event));
    controlOf(client.forum.subforum({ subforum: 'x' }))?.report({ type: 'duplicate', operator: 'dedupe', count: 3 });
    expect(client.stats.duplicates).toBe(3);
    expect(events).toEqual([{ type: 'duplicate', operator: 'dedupe', count: 3 }]);
    await client.close();
  });
});

describe('limit and maxPages', () => {
  it('limit yields that many records and reads no page past them', async () => {
    const client = clientOf(clean);
    const records = await collect(client.forum.subforum({ subforum: 'limit-n1000' }, { limit: 150 }));
    expect(records).toHaveLength(150);
    expect(client.stats.pages).toBe(2);
    await client.close();
  });

  it('limit 0 reads nothing', async () => {
    const client = clientOf(clean);
    expect(await collect(client.forum.subforum({ subforum: 'x' }, { limit: 0 }))).toEqual([]);
    expect(client.stats.requests).toBe(0);
    await client.close();
  });

  it('maxPages reads at most that many pages', async () => {
    const client = clientOf(clean);
    const records = await collect(client.videosite.channelShorts({ handle: '@max-n500' }, { maxPages: 2 }));
    expect(records).toHaveLength(96);
    expect(client.stats.pages).toBe(2);
    await client.close();
  });

  it('pages() yields raw bodies and honours maxPages', async () => {
    const client = clientOf(clean);
    const pages = await collect(client.forum.subforum({ subforum: 'pages-n1000' }, { maxPages: 3 }).pages());
    expect(pages).toHaveLength(3);
    for (const page of pages) expect(Object.keys(page.data.posts)).toHaveLength(100);
    await client.close();
  });

  it('return() during a page read waits for it to settle, so no request outlives the walk', async () => {
    const server = await testServer((_request, response) =>
      setTimeout(() => json(response, 200, { success: true, data: { success: true, posts: { 0: { id: 'a' } }, after: 'next' }, credits_used: 1 }), 30),
    );
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x' });
    const iterator = client.forum.subforum({ subforum: 'x' })[Symbol.asyncIterator]();
    const pending = iterator.next();
    await iterator.return?.();
    expect(client.stats.pages).toBe(1);
    expect(await pending).toEqual({ done: false, value: { id: 'a' } });
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(server.received).toHaveLength(1);
    await client.close();
    await server.close();
  });

  it('a stream cannot be iterated twice at the same time', async () => {
    const client = clientOf(clean);
    const stream = client.forum.subforum({ subforum: 'busy-n300' });
    const first = stream[Symbol.asyncIterator]();
    await first.next();
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toThrow(/already being iterated/);
    await first.return?.();
    await client.close();
  });
});

describe('the duplicate fault (pages repeat the last record of the page before)', () => {
  it('still ends every walk, with every record of the resource present', async () => {
    const repeating = await startSandbox({ port: 0, faults: { duplicates: true } });
    const client = clientOf(repeating);
    for (const walk of PAGED_WALKS) {
      const records = await collect(client.stream(walk.id as never, walk.params as never));
      expect(new Set(records.map((record) => stringifyExact(record))).size, walk.id).toBe(walk.count);
    }
    await client.close();
    await repeating.close();
  });
});
