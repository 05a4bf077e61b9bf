/**
 * A service that misbehaves on purpose: it never answers, stalls or trickles a body, sends one without
 * end or records nested 100,000 levels deep, and echoes the key back in disguise. The client must end each
 * attempt with a typed error, on time, in bounded memory, and never repeat the key.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { AuthError, createClient, NetworkError, ResponseFormatError, type Client } from '../../src/index.ts';
import { json, testServer, type TestServer } from './helpers.ts';

const KEY = 'sk_live_sandbox_HOSTILE_c0ffee42d1';
const ONE_PAGE = { success: true, data: { posts: { 0: { id: 'a' } }, after: null } };

async function failure(client: Client): Promise<Error> {
  try {
    for await (const _ of client.forum.subforum({ subforum: 'x' })) {
      // reading to the end
    }
  } catch (error) {
    return error as Error;
  } finally {
    await client.close();
  }
  throw new Error('the walk did not fail');
}

function clientOf(server: TestServer, options: Parameters<typeof createClient>[0] = {}): Client {
  return createClient({ baseUrl: server.url, apiKey: KEY, retry: { retries: 0 }, ...options });
}

/** Writes `chunk` every few milliseconds until the client goes away. */
function trickle(response: ServerResponse, chunk: string | Buffer, everyMs: number): void {
  const timer = setInterval(() => {
    if (response.destroyed) clearInterval(timer);
    else response.write(chunk);
  }, everyMs);
  response.on('close', () => clearInterval(timer));
}

describe('the API key as given', () => {
  it('is sent without the trailing \\r a Windows .env leaves on it', async () => {
    const server = await testServer((_request, response) => json(response, 200, ONE_PAGE));
    const client = createClient({ baseUrl: server.url, apiKey: `  ${KEY}\r\n` });
    for await (const _ of client.forum.subforum({ subforum: 'x' })) break;
    await client.close();
    await server.close();
    expect(server.received[0].headers['x-api-key']).toBe(KEY);
  });

  it('is refused by createClient with an AuthError, naming the position and not the key, when it holds a control character', () => {
    const attempt = () => createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: `sk_live_\u0007sandbox` });
    expect(attempt).toThrow(AuthError);
    expect(attempt).toThrow(/control character \(U\+0007 at position 9\)/);
    expect(attempt).not.toThrow(/sandbox/);
  });
});

describe('timeoutMs bounds every attempt', () => {
  it('when the server never answers', async () => {
    const server = await testServer(() => undefined);
    const error = await failure(clientOf(server, { timeoutMs: 150 }));
    await server.close();
    expect(error).toBeInstanceOf(NetworkError);
  });

  it('when the server sends the headers and then stalls the body', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"success": true, "data": {"posts": {');
    });
    const error = await failure(clientOf(server, { timeoutMs: 150 }));
    await server.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/no complete response within 150 ms/);
  });

  it('when the server trickles the body a few bytes at a time', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"success": true, "data": {"text": "');
      trickle(response, 'aaaa', 5);
    });
    const error = await failure(clientOf(server, { timeoutMs: 150 }));
    await server.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/no complete response within 150 ms/);
  });
});

describe('response bodies are bounded', () => {
  it('an endless chunked body fails as a ResponseFormatError once it passes maxBodyBytes, and is not asked again', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"success": true, "data": {"text": "');
      trickle(response, Buffer.alloc(64 * 1024, 'a'), 1);
    });
    const error = await failure(createClient({ baseUrl: server.url, apiKey: KEY, maxBodyBytes: 1024 * 1024, retry: { retries: 3, minDelayMs: 1, maxDelayMs: 2 } }));
    await server.close();
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error.message).toMatch(/larger than the limit of 1048576 bytes/);
    expect(server.received).toHaveLength(1);
  });

  it('a Content-Length over maxBodyBytes is refused before the body is read', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) });
      response.write('{"success": true');
    });
    const error = await failure(clientOf(server, { maxBodyBytes: 1024 * 1024 }));
    await server.close();
    expect(error).toBeInstanceOf(ResponseFormatError);
  });

  it('createClient refuses a maxBodyBytes that is not a positive integer', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: KEY, maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
  });
});

describe('deeply nested JSON', () => {
  const deep = `{"success": true, "data": {"posts": {"0": {"id": "a", "x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}}}`;

  it('ends a walk with a ResponseFormatError, not a stack overflow', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(deep);
    });
    const error = await failure(clientOf(server));
    await server.close();
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error.message).toMatch(/deeper than 1000 levels/);
  });

  it('ends pages() with a ResponseFormatError too', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`{"success": true, "data": {"posts": [${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}]}}`);
    });
    const client = clientOf(server);
    const pages = client.forum.subforum({ subforum: 'x' }).pages();
    await expect(pages.next()).rejects.toBeInstanceOf(ResponseFormatError);
    await client.close();
    await server.close();
  });

  it('yields a record nested 900 levels deep whole', async () => {
    const server = await testServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`{"success": true, "data": {"posts": {"0": {"id": "a", "x": ${'['.repeat(900)}${']'.repeat(900)}}}, "after": null}}`);
    });
    const client = clientOf(server);
    const records: unknown[] = [];
    for await (const record of client.forum.subforum({ subforum: 'x' })) records.push(record);
    await client.close();
    await server.close();
    expect(JSON.stringify(records)).toContain('['.repeat(900));
  });
});

describe('the key echoed back in disguise', () => {
  const base64 = (text: string) => Buffer.from(text).toString('base64');
  const forms = {
    'upper-cased': KEY.toUpperCase(),
    'base64-encoded': base64(KEY),
    'base64-encoded inside a longer value': base64(`user:${KEY}`),
    'URL-safe base64 at another alignment': base64(`ab${KEY}!`).replace(/\+/g, '-').replace(/\//g, '_'),
    'hex-encoded': Buffer.from(KEY).toString('hex'),
  };
  for (const [name, echoed] of Object.entries(forms)) {
    it(`is scrubbed from an error body when ${name}`, async () => {
      const server = await testServer((_request, response) => json(response, 400, { success: false, error: `Invalid value for subforum: token ${echoed}` }));
      const error = await failure(clientOf(server));
      await server.close();
      expect(error.message).toContain('[redacted]');
      expect(error.message).not.toContain(echoed);
      expect(error.message.toLowerCase()).not.toContain(KEY.toLowerCase());
    });
  }

  it('refuses a cursor that carries it before sending it back or keeping it, naming neither', async () => {
    const cursor = `${'c'.repeat(20)}${KEY}${'d'.repeat(1000)}`;
    const server = await testServer((_request, response) => json(response, 200, { success: true, data: { posts: { 0: { id: 'a' } }, after: cursor } }));
    const error = await failure(clientOf(server));
    await server.close();
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error.message).toMatch(/continuation value that holds the API key/);
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain('cccccccc');
  });
});
