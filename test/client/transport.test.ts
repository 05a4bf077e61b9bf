import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError, createClient } from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf, collect, json, testServer } from './helpers.ts';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_sandbox_transport', credits: 100_000 }] });
});
afterAll(async () => {
  await sandbox.close();
});

describe('client options', () => {
  it('refuses a plain-HTTP base URL that is not loopback', () => {
    for (const baseUrl of ['http://api.example.com', 'http://10.0.0.1:8080', 'http://128.0.0.1']) {
      expect(() => createClient({ apiKey: 'sk_live_x', baseUrl })).toThrow(/https/);
    }
  });

  it('accepts HTTPS anywhere and plain HTTP on 127.0.0.0/8, ::1 and localhost', () => {
    for (const baseUrl of ['https://api.example.com', 'http://127.0.0.1:1', 'http://127.8.9.10', 'http://[::1]:5', 'http://localhost:3000']) {
      expect(() => createClient({ apiKey: 'sk_live_x', baseUrl }), baseUrl).not.toThrow();
    }
  });

  it('without a key fails at creation with an AuthError naming SOCIALSTREAM_API_KEY', () => {
    const saved = process.env.SOCIALSTREAM_API_KEY;
    delete process.env.SOCIALSTREAM_API_KEY;
    try {
      expect(() => createClient({ baseUrl: sandbox.url })).toThrow(AuthError);
      expect(() => createClient({ baseUrl: sandbox.url })).toThrow(/SOCIALSTREAM_API_KEY/);
    } finally {
      if (saved !== undefined) process.env.SOCIALSTREAM_API_KEY = saved;
    }
  });

  it('without a base URL fails at creation with a TypeError naming SOCIALSTREAM_BASE_URL', () => {
    const saved = process.env.SOCIALSTREAM_BASE_URL;
    delete process.env.SOCIALSTREAM_BASE_URL;
    try {
      expect(() => createClient({ apiKey: 'sk_live_x' })).toThrow(/SOCIALSTREAM_BASE_URL/);
    } finally {
      if (saved !== undefined) process.env.SOCIALSTREAM_BASE_URL = saved;
    }
  });

  it('reads the key and base URL from the environment by default', async () => {
    const saved = { key: process.env.SOCIALSTREAM_API_KEY, url: process.env.SOCIALSTREAM_BASE_URL };
    process.env.SOCIALSTREAM_API_KEY = sandbox.apiKey;
    process.env.SOCIALSTREAM_BASE_URL = sandbox.url;
    try {
      const client = createClient();
      expect((await client.credits()).credits).toBeGreaterThan(0);
      await client.close();
    } finally {
      for (const [name, value] of [['SOCIALSTREAM_API_KEY', saved.key], ['SOCIALSTREAM_BASE_URL', saved.url]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('refuses bad numbers with a TypeError naming the option', () => {
    expect(() => createClient({ apiKey: 'k', baseUrl: sandbox.url, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => createClient({ apiKey: 'k', baseUrl: sandbox.url, timeoutMs: 2 ** 31 })).toThrow(/timeoutMs/);
    expect(() => createClient({ apiKey: 'k', baseUrl: sandbox.url, rateLimit: null as never })).toThrow(/rateLimit/);
    expect(() => createClient({ apiKey: 'k', baseUrl: sandbox.url, maxConcurrentRequests: 0 })).toThrow(/maxConcurrentRequests/);
    expect(() => createClient({ apiKey: 'k', baseUrl: sandbox.url, retry: { retries: -1 } })).toThrow(/retry\.retries/);
    expect(() => createClient({ apiKey: 'k', baseUrl: sandbox.url, rateLimit: { requestsPerSecond: 0 } })).toThrow(/requestsPerSecond/);
  });
});

describe('credits() and request()', () => {
  it('credits() returns the balance record and costs nothing', async () => {
    const client = clientOf(sandbox);
    const first = await client.credits();
    const second = await client.credits();
    expect(second).toEqual(first);
    expect(first).toMatchObject({ subscriptionStatus: 'free', subscriptionId: null });
    expect(client.stats).toMatchObject({ requests: 2, credits: 0 });
    await client.close();
  });

  it('request() does one raw GET, returns the body as sent and meters it', async () => {
    const client = clientOf(sandbox);
    const body = (await client.request('/v1/scrape/forum/subforum', { subforum: 'raw-n5' })) as { data: { posts: object } };
    expect(Object.keys(body.data.posts)).toEqual(['0', '1', '2', '3', '4']);
    expect(client.stats).toMatchObject({ requests: 1, credits: 1 });
    await client.close();
  });

  it('request() refuses a path outside /v1/', async () => {
    const client = clientOf(sandbox);
    await expect(client.request('/admin')).rejects.toThrow(TypeError);
    await expect(client.request('https://elsewhere.example/v1/credits')).rejects.toThrow(TypeError);
    await expect(client.request('/v1/../admin')).rejects.toThrow(TypeError);
    await client.close();
  });
});

describe('aborting', () => {
  it('mid-walk ends the walk with the signal reason and sends nothing more', async () => {
    const client = clientOf(sandbox);
    const controller = new AbortController();
    const reason = new Error('enough');
    const seen: unknown[] = [];
    const walk = async () => {
      for await (const post of client.forum.subforum({ subforum: 'abort-n1000' }, { signal: controller.signal })) {
        seen.push(post);
        if (seen.length === 150) controller.abort(reason);
      }
    };
    await expect(walk()).rejects.toBe(reason);
    expect(seen).toHaveLength(150);
    expect(client.stats.requests).toBe(2);
    await client.close();
  });

  it('ends a request in flight at once', async () => {
    const server = await testServer(() => undefined);
    const controller = new AbortController();
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x', retry: { retries: 0 } });
    const walk = collect(client.forum.subforum({ subforum: 'x' }, { signal: controller.signal }));
    await new Promise((resolve) => setImmediate(resolve));
    while (server.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('stop'));
    await expect(walk).rejects.toThrow('stop');
    await client.close();
    await server.close();
  });

  it('ends a backoff sleep at once', async () => {
    const failing = await startSandbox({ port: 0, faults: { rate: 1 } });
    const client = createClient({ baseUrl: failing.url, apiKey: failing.apiKey, retry: { retries: 5, minDelayMs: 50_000, maxDelayMs: 50_000 } });
    const controller = new AbortController();
    const subscription = client.events$.subscribe((event) => {
      if (event.type === 'retry') controller.abort(new Error('no more waiting'));
    });
    await expect(collect(client.forum.subforum({ subforum: 'x' }, { signal: controller.signal }))).rejects.toThrow('no more waiting');
    expect(client.stats.requests).toBe(1);
    subscription.unsubscribe();
    await client.close();
    await failing.close();
  });

  it('through the client signal ends every stream of the client', async () => {
    const controller = new AbortController();
    const client = clientOf(sandbox, { signal: controller.signal });
    const first = client.forum.subforum({ subforum: 'all-n300' })[Symbol.asyncIterator]();
    await first.next();
    controller.abort(new Error('client closed'));
    await expect(first.next()).rejects.toThrow('client closed');
    await expect(collect(client.forum.subforum({ subforum: 'other' }))).rejects.toThrow('client closed');
    await client.close();
  });
});

describe('connections', () => {
  it('walks over one keep-alive connection when one request at a time is allowed (every body is read to the end)', async () => {
    const server = await testServer((_request, response, index) => {
      const page = index < 20 ? { posts: { 0: { id: String(index) } }, after: `c${index}` } : { posts: {} };
      json(response, 200, { success: true, data: { success: true, ...page }, credits_used: 1 });
    });
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x', maxConcurrentRequests: 1 });
    expect(await collect(client.forum.subforum({ subforum: 'x' }))).toHaveLength(20);
    expect(server.received).toHaveLength(21);
    expect(new Set(server.received.map((request) => request.remotePort)).size).toBe(1);
    await client.close();
    await server.close();
  });

  it('never has more than maxConcurrentRequests requests in flight across the client', async () => {
    let inFlight = 0;
    let peak = 0;
    const server = await testServer((_request, response) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        json(response, 200, { success: true, data: { success: true, posts: { 0: { id: 'a' } } }, credits_used: 1 });
      }, 20);
    });
    const client = createClient({ baseUrl: server.url, apiKey: 'sk_live_x', maxConcurrentRequests: 2 });
    await Promise.all(Array.from({ length: 6 }, (_, i) => collect(client.forum.subforum({ subforum: `s${i}` }))));
    expect(server.received).toHaveLength(6);
    expect(peak).toBe(2);
    await client.close();
    await server.close();
  });
});
