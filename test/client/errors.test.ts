import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthError,
  type ClientEvent,
  createClient,
  InsufficientCreditsError,
  NetworkError,
  PaginationLoopError,
  ResponseFormatError,
  ServiceConfigError,
  UpstreamError,
  ValidationError,
} from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { collect, json, testServer } from './helpers.ts';

const KEY = 'sk_live_sandbox_LEAKCHECK_7f3a91c2e5';
const FAST = { retries: 2, minDelayMs: 1, maxDelayMs: 5 };

let sandbox: Sandbox;
let broke: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 1_000 }] });
  broke = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 0 }] });
});
afterAll(async () => {
  await sandbox.close();
  await broke.close();
});

/** The error a walk of `stream` ends with. */
async function failure(stream: AsyncIterable<unknown>): Promise<Error> {
  try {
    await collect(stream);
  } catch (error) {
    return error as Error;
  }
  throw new Error('the walk did not fail');
}

describe('errors from the service', () => {
  it('401 is an AuthError, not retried', async () => {
    const client = createClient({ baseUrl: sandbox.url, apiKey: 'sk_live_sandbox_not_an_account', retry: FAST });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ status: 401, endpoint: 'forum/subforum' });
    expect(client.stats.requests).toBe(1);
    await client.close();
  });

  it('402 is an InsufficientCreditsError with required and available, not retried', async () => {
    const client = createClient({ baseUrl: broke.url, apiKey: KEY, retry: FAST });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(InsufficientCreditsError);
    expect(error).toMatchObject({ status: 402, required: 1, available: 0 });
    expect(client.stats.requests).toBe(1);
    await client.close();
  });

  it('400 is a ValidationError naming the parameter, not retried', async () => {
    const client = createClient({ baseUrl: sandbox.url, apiKey: KEY, retry: FAST });
    const error = await client.request('/v1/scrape/forum/subforum', {}).catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 400, param: 'subforum' });
    expect(client.stats.requests).toBe(1);
    await client.close();
  });

  it('a cursor the service refuses ends the walk with a ValidationError', async () => {
    const client = createClient({ baseUrl: sandbox.url, apiKey: KEY, retry: FAST });
    const checkpoint = { version: 1 as const, operation: 'forum/subforum', params: { subforum: 'x' }, pending: { cursor: 'forged' }, skip: 0, pagesDone: 1, recordsYielded: 100 };
    expect(await failure(client.resume(checkpoint))).toBeInstanceOf(ValidationError);
    await client.close();
  });

  it('an upstream failure is retried, then raised as an UpstreamError', async () => {
    const failing = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 10 }], faults: { rate: 1 } });
    const client = createClient({ baseUrl: failing.url, apiKey: KEY, retry: FAST });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.message).toMatch(/Failed to fetch/);
    expect(client.stats).toMatchObject({ requests: 3, retries: 2, credits: 0 });
    await client.close();
    await failing.close();
  });

  it('a service configuration error is a ServiceConfigError, not retried', async () => {
    const server = await testServer((_request, response) => json(response, 503, { error: 'Service configuration error' }));
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    expect(await failure(client.forum.subforum({ subforum: 'x' }))).toBeInstanceOf(ServiceConfigError);
    expect(server.received).toHaveLength(1);
    await client.close();
    await server.close();
  });

  it('a body that is not JSON is retried, then raised as a ResponseFormatError', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"success":true,"data":{"posts":{');
    });
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    expect(await failure(client.forum.subforum({ subforum: 'x' }))).toBeInstanceOf(ResponseFormatError);
    expect(server.received).toHaveLength(3);
    await client.close();
    await server.close();
  });

  it('is classified by status when the body is not JSON (an HTML 401 from a proxy is still an AuthError)', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(401, { 'content-type': 'text/html' });
      response.end('<html>401 Authorization Required</html>');
    });
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toMatch(/HTTP 401, body not JSON/);
    expect(server.received).toHaveLength(1);
    await client.close();
    await server.close();
  });

  it('a 200 without the promised records is a ResponseFormatError', async () => {
    const server = await testServer((_request, response) => json(response, 200, { success: true, data: { success: true } }));
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error.message).toMatch(/payload has no collection at posts/);
    await client.close();
    await server.close();
  });

  it('a refused connection is retried, then raised as a NetworkError', async () => {
    const server = await testServer(() => undefined);
    const url = server.url;
    await server.close();
    const client = createClient({ baseUrl: url, apiKey: KEY, retry: FAST });
    expect(await failure(client.forum.subforum({ subforum: 'x' }))).toBeInstanceOf(NetworkError);
    expect(client.stats.retries).toBe(2);
    await client.close();
  });

  it('a connection reset through every retry is a NetworkError, which is an UpstreamError', async () => {
    const server = await testServer((request) => request.socket.destroy());
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'NETWORK', endpoint: 'forum/subforum' });
    expect(server.received).toHaveLength(3);
    await client.close();
    await server.close();
  });

  it('a 200 body cut short through every retry is a ResponseFormatError, each attempt counted as charged', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      response.write('{"success":true,"data":{"posts":{"0":');
      setImmediate(() => response.socket?.destroy());
    });
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error.message).toMatch(/cut short \(HTTP 200\)/);
    expect(client.stats).toMatchObject({ requests: 3, credits: 3 });
    await client.close();
    await server.close();
  });

  it('a response slower than timeoutMs is a NetworkError', async () => {
    const server = await testServer(() => undefined);
    const client = createClient({ baseUrl: server.url, apiKey: KEY, timeoutMs: 100, retry: { retries: 0 } });
    const error = await failure(client.forum.subforum({ subforum: 'x' }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/within 100 ms/);
    await client.close();
    await server.close();
  });
});

describe('a continuation value seen before', () => {
  it('raises PaginationLoopError instead of buying the same page again', async () => {
    const server = await testServer((_request, response) =>
      json(response, 200, { success: true, data: { success: true, posts: { 0: { id: 'a' } }, after: 'same' }, credits_used: 1 }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    const events: ClientEvent[] = [];
    client.events$.subscribe((event) => events.push(event));
    const records: unknown[] = [];
    const error = await failure(
      (async function* () {
        for await (const post of client.forum.subforum({ subforum: 'loop' })) {
          records.push(post);
          yield post;
        }
      })(),
    );
    expect(error).toBeInstanceOf(PaginationLoopError);
    expect(server.received.map((request) => request.url)).toEqual(['/v1/scrape/forum/subforum?subforum=loop', '/v1/scrape/forum/subforum?subforum=loop&after=same']);
    expect(records).toHaveLength(2);
    expect(events.filter((event) => event.type === 'error').map((event) => (event as { error: Error }).error)).toEqual([error]);
    await client.close();
    await server.close();
  });

  it('ends an A, B, A cursor cycle after two continuations', async () => {
    const cursors = ['A', 'B', 'A', 'B'];
    const server = await testServer((_request, response, index) =>
      json(response, 200, { success: true, data: { success: true, posts: { 0: { id: String(index) } }, after: cursors[index] }, credits_used: 1 }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: KEY, retry: FAST });
    expect(await failure(client.forum.subforum({ subforum: 'cycle' }))).toBeInstanceOf(PaginationLoopError);
    expect(server.received).toHaveLength(3);
    await client.close();
    await server.close();
  });
});

describe('the API key', () => {
  it('appears in no message, stack, cause or event of any error class', async () => {
    const events: ClientEvent[] = [];
    const errors: unknown[] = [];
    const capture = async (make: () => { client: ReturnType<typeof createClient>; run: () => Promise<unknown> }) => {
      const { client, run } = make();
      const subscription = client.events$.subscribe((event) => events.push(event));
      await run().catch((error: unknown) => errors.push(error));
      subscription.unsubscribe();
      await client.close();
    };
    const echo = await testServer((request, response) => json(response, 401, { error: `Invalid API key ${String(request.headers['x-api-key'])}` }));
    const config = await testServer((_request, response) => json(response, 503, { error: 'Service configuration error' }));
    const loop = await testServer((_request, response) =>
      json(response, 200, { success: true, data: { success: true, posts: { 0: { id: 'a' } }, after: 'same' }, credits_used: 1 }),
    );
    const garbage = await testServer((_request, response) => response.end(`not json ${KEY}`));
    const hang = await testServer(() => undefined);
    const upstream = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 10 }], faults: { rate: 1 } });
    const options = { apiKey: KEY, retry: FAST };
    const walk = (baseUrl: string, extra = {}) => () => {
      const client = createClient({ ...options, baseUrl, ...extra });
      return { client, run: () => collect(client.forum.subforum({ subforum: 'x' })) };
    };
    await capture(walk(echo.url));
    await capture(walk(broke.url));
    await capture(walk(config.url));
    await capture(walk(loop.url));
    await capture(walk(garbage.url));
    await capture(walk(hang.url, { timeoutMs: 50, retry: { retries: 0 } }));
    await capture(walk(upstream.url));
    await capture(walk('http://127.0.0.1:9'));
    await capture(() => {
      const client = createClient({ ...options, baseUrl: sandbox.url });
      return { client, run: () => client.request('/v1/scrape/forum/subforum') };
    });
    await capture(() => {
      const client = createClient({ ...options, baseUrl: sandbox.url });
      return { client, run: async () => client.forum.subforum({ subforum: 'x', sort: KEY as never }) };
    });
    const classes = new Set(errors.map((error) => (error as Error).name));
    expect([...classes].sort()).toEqual([
      'AuthError', 'InsufficientCreditsError', 'NetworkError', 'PaginationLoopError', 'ResponseFormatError',
      'ServiceConfigError', 'UpstreamError', 'ValidationError',
    ]);
    for (const error of errors) {
      const { message, stack, cause } = error as Error;
      expect(message).not.toContain(KEY);
      expect(stack ?? '').not.toContain(KEY);
      expect(JSON.stringify(error)).not.toContain(KEY);
      expect(inspect(cause)).not.toContain(KEY);
      expect(String((cause as Error | undefined)?.stack ?? '')).not.toContain(KEY);
    }
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      expect(JSON.stringify(event)).not.toContain(KEY);
      if ('error' in event) expect(`${event.error.message} ${event.error.stack}`).not.toContain(KEY);
    }
    for (const server of [echo, config, loop, garbage, hang, upstream]) await server.close();
  });

  it('is never sent in the URL or as a Bearer token', async () => {
    const server = await testServer((_request, response) =>
      json(response, 200, { success: true, data: { success: true, posts: {} }, credits_used: 1 }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: KEY });
    await collect(client.forum.subforum({ subforum: 'x' }));
    const [request] = server.received;
    expect(request.headers['x-api-key']).toBe(KEY);
    expect(request.headers.authorization).toBeUndefined();
    expect(request.url).not.toContain(KEY);
    await client.close();
    await server.close();
  });
});
