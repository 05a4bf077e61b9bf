/**
 * Compressed answers, as a proxy or CDN may send them unasked: the client asks for gzip, deflate and
 * br, decodes them, and counts the size limit in decoded bytes. A body it cannot decode fails as one
 * `ResponseFormatError` attempt: the same bytes would come again, so a retry would only pay again.
 * Served by a tiny `node:http` server that compresses with `node:zlib`; the requests it receives are
 * the attempts.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createClient, ResponseFormatError } from '../../src/index.ts';
import { collect, type TestServer, testServer } from './helpers.ts';

const KEY = 'sk_live_sandbox_compression';

let server: TestServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

/** Subforum pages: page 1 points at page 2, which ends the walk. */
function page(query: URLSearchParams): object {
  return query.has('after')
    ? { success: true, data: { posts: [{ id: 'c' }], after: null }, credits_used: 1 }
    : { success: true, data: { posts: [{ id: 'a' }, { id: 'b' }], after: 't3_b' }, credits_used: 1 };
}

/** A server sending each page encoded by `encode` under `content-encoding: encoding`, and a client of it. */
async function serving(encoding: string, encode: (body: Buffer) => Buffer, options: { maxBodyBytes?: number } = {}): Promise<Client> {
  server = await testServer((request, response) => {
    const body = encode(Buffer.from(JSON.stringify(page(new URL(request.url ?? '/', 'http://x').searchParams))));
    response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': String(body.length) });
    response.end(body);
  });
  // Retries allowed, so a test sees whether the client chose not to retry.
  client = createClient({ baseUrl: server.url, apiKey: KEY, retry: { retries: 3, minDelayMs: 1, maxDelayMs: 2 }, ...options });
  return client;
}

describe('a compressed answer', () => {
  it.each([
    ['gzip', gzipSync],
    ['br', brotliCompressSync],
    ['deflate', deflateSync],
  ] as const)('in %s is decoded, every page of the walk', async (encoding, encode) => {
    const c = await serving(encoding, (body) => encode(body));
    const posts = await collect(c.forum.subforum({ subforum: 'typescript' }));
    expect(posts.map((post) => post.id)).toEqual(['a', 'b', 'c']);
    expect(c.stats.requests).toBe(2);
  });

  it('in two codings (gzip, then br) is decoded in the reverse order', async () => {
    const c = await serving('gzip, br', (body) => brotliCompressSync(gzipSync(body)));
    expect(await collect(c.forum.subforum({ subforum: 'typescript' }))).toHaveLength(3);
  });

  it('is asked for: every request says accept-encoding gzip, deflate and br', async () => {
    const c = await serving('gzip', (body) => gzipSync(body));
    await collect(c.forum.subforum({ subforum: 'typescript' }));
    for (const { headers } of server?.received ?? []) expect(headers['accept-encoding']).toBe('gzip, deflate, br');
  });

  it('counts the size limit in decoded bytes, so a small body cannot unpack into a large one', async () => {
    const c = await serving('gzip', (body) => gzipSync(Buffer.concat([body.subarray(0, -1), Buffer.from(`,"pad":"${' '.repeat(200_000)}"}`)])), { maxBodyBytes: 100_000 });
    const walk = collect(c.forum.subforum({ subforum: 'typescript' }));
    await expect(walk).rejects.toBeInstanceOf(ResponseFormatError);
    await expect(walk).rejects.toThrow(/larger than the limit/);
  });
});

describe('an answer the client cannot decode', () => {
  it('in an encoding it does not know is one ResponseFormatError attempt, naming the encoding', async () => {
    const c = await serving('zstd', (body) => body);
    const walk = collect(c.forum.subforum({ subforum: 'typescript' }));
    await expect(walk).rejects.toBeInstanceOf(ResponseFormatError);
    await expect(walk).rejects.toThrow(/encoded as "zstd"/);
    expect(server?.received).toHaveLength(1);
    expect(c.stats).toMatchObject({ requests: 1, retries: 0, credits: 1 });
  });

  it('that is not what its header says (gzip that is plain JSON) is one ResponseFormatError attempt', async () => {
    const c = await serving('gzip', (body) => body);
    const walk = collect(c.forum.subforum({ subforum: 'typescript' }));
    await expect(walk).rejects.toBeInstanceOf(ResponseFormatError);
    await expect(walk).rejects.toThrow(/not valid gzip data/);
    expect(server?.received).toHaveLength(1);
    expect(c.stats.retries).toBe(0);
  });

  it('that is br cut short is one ResponseFormatError attempt', async () => {
    const c = await serving('br', (body) => brotliCompressSync(body).subarray(0, 8));
    await expect(collect(c.forum.subforum({ subforum: 'typescript' }))).rejects.toBeInstanceOf(ResponseFormatError);
    expect(server?.received).toHaveLength(1);
  });
});
