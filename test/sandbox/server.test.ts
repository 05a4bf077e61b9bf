import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/sandbox/accounts.ts';
import { SandboxClock } from '../../src/sandbox/clock.ts';
import { FaultInjector } from '../../src/sandbox/faults.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { SandboxValidationError, type SandboxOperation } from '../../src/sandbox/platform.ts';
import { createSandboxServer } from '../../src/sandbox/server.ts';
import { get } from './helpers.ts';

const PROFILE = '/v1/scrape/shortvideo/profile';
const POPULAR = '/v1/scrape/shortvideo/videos/popular';
const COMMENTS = '/v1/scrape/videosite/video/comments';

/** The 27 operations of API reference part 4 with a query each accepts. */
const EVERY_OPERATION: Array<[path: string, query: Record<string, string>]> = [
  ['/v1/credits', {}],
  ['/v1/scrape/shortvideo/profile', { handle: 'creator' }],
  ['/v1/scrape/shortvideo/videos', { handle: 'creator' }],
  ['/v1/scrape/shortvideo/videos/popular', {}],
  ['/v1/scrape/shortvideo/comment-replies', { comment_id: '7301', url: 'https://www.shortvideo.example/@a/video/7301' }],
  ['/v1/scrape/shortvideo-shop/products', { url: 'https://www.shortvideo.example/shop/store/acme' }],
  ['/v1/scrape/socialnet/profile/reels', { url: 'https://www.socialnet.example/acme' }],
  ['/v1/scrape/socialnet/group/posts', { group_id: '12345' }],
  ['/v1/scrape/socialnet-marketplace/search', { lat: '30.26', lng: '-97.74' }],
  ['/v1/scrape/socialnet-marketplace/location-search', { query: 'austin' }],
  ['/v1/scrape/videosite/channel/shorts', { handle: '@acme' }],
  ['/v1/scrape/videosite/video/comments', { url: 'https://www.videosite.example/watch?v=abc' }],
  ['/v1/scrape/videosite/video/transcript', { url: 'https://www.videosite.example/watch?v=abc' }],
  ['/v1/scrape/microblog/tweet/transcript', { url: 'https://microblog.example/acme/status/1' }],
  ['/v1/scrape/microblog/community', { url: 'https://microblog.example/i/communities/1' }],
  ['/v1/scrape/microblog/comments', { url: 'https://microblog.example/acme/status/1' }],
  ['/v1/scrape/search-ad-library/company-ads', { domain: 'acme.example' }],
  ['/v1/scrape/socialnet-ad-library/search', { query: 'shoes' }],
  ['/v1/scrape/photoshare/transcript', { url: 'https://photoshare.example/p/abc/' }],
  ['/v1/scrape/photoshare/search/hashtag', { hashtag: 'coffee' }],
  ['/v1/scrape/photoshare/highlight-detail', { id: '17900000000000000' }],
  ['/v1/scrape/photoshare/post-info', { url: 'https://photoshare.example/p/abc/' }],
  ['/v1/scrape/forum/post/comments', { url: 'https://forum.example/r/typescript/comments/abc/title/' }],
  ['/v1/scrape/forum/subforum', { subforum: 'typescript' }],
  ['/v1/scrape/professional/search/posts', { query: 'hiring' }],
  ['/v1/scrape/search/search', { query: 'coffee' }],
  ['/v1/scrape/threadtext/user-posts', { handle: 'acme' }],
];

const started: Sandbox[] = [];
async function sandboxWith(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox({ port: 0, slowMs: 0, ...options });
  started.push(sandbox);
  return sandbox;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((sandbox) => sandbox.close()));
});

let shared: Sandbox;
beforeAll(async () => {
  shared = await startSandbox({ port: 0, slowMs: 0 });
});
afterAll(async () => {
  await shared.close();
});

describe('routing', () => {
  it.each(EVERY_OPERATION)('answers %s with 200', async (path, query) => {
    const { status, body } = await get(shared.url, path, query);
    expect(status).toBe(200);
    expect(body).toBeTypeOf('object');
  });

  it('answers an unknown path with a 404 JSON body naming the path', async () => {
    const { status, body } = await get(shared.url, '/v1/scrape/nowhere/at-all');
    expect(status).toBe(404);
    expect(body).toEqual({ error: 'Not found', path: '/v1/scrape/nowhere/at-all' });
  });

  it('answers a POST with 405 and Allow: GET', async () => {
    const { status, body, headers } = await get(shared.url, PROFILE, { handle: 'a' }, { method: 'POST' });
    expect(status).toBe(405);
    expect(body).toEqual({ error: 'Method not allowed' });
    expect(headers.get('allow')).toBe('GET');
  });

  it('answers HEAD like GET but without a body', async () => {
    const { status, text, headers } = await get(shared.url, '/v1/credits', {}, { method: 'HEAD' });
    expect(status).toBe(200);
    expect(headers.get('content-type')).toContain('application/json');
    expect(text).toBe('');
  });
});

describe('authentication', () => {
  it('refuses a request without X-API-Key with 401 and a docs link', async () => {
    const { status, body } = await get(shared.url, PROFILE, { handle: 'a' }, { key: null });
    expect(status).toBe(401);
    expect(body.error).toBe('Invalid or missing API key');
    expect(body.docs).toMatch(/^https:\/\//);
  });

  it('refuses a key no account owns with 401 Invalid API key', async () => {
    const { status, body } = await get(shared.url, PROFILE, { handle: 'a' }, { key: 'sk_live_nobody' });
    expect(status).toBe(401);
    expect(body.error).toBe('Invalid API key');
  });

  it('refuses an Authorization: Bearer header even beside a valid key', async () => {
    const { status, body } = await get(shared.url, '/v1/credits', {}, {
      headers: { authorization: 'Bearer sk_live_sandbox' },
    });
    expect(status).toBe(401);
    expect(body.error).toBe('Invalid API key');
  });

  it('never echoes the key in a 401 body', async () => {
    const { text } = await get(shared.url, PROFILE, { handle: 'a' }, { key: 'sk_live_secret_value_123' });
    expect(text).not.toContain('sk_live_secret_value_123');
  });

  it('checks the key before the query, so a bad query with a bad key is a 401', async () => {
    const { status } = await get(shared.url, PROFILE, {}, { key: 'sk_live_nobody' });
    expect(status).toBe(401);
  });
});

describe('credits and billing', () => {
  it('starts the default account with sk_live_sandbox, 10,000 credits and the free state', async () => {
    const sandbox = await sandboxWith();
    expect(sandbox.apiKey).toBe('sk_live_sandbox');
    const { status, body } = await get(sandbox.url, '/v1/credits');
    expect(status).toBe(200);
    expect(body).toEqual({ credits: 10_000, subscriptionStatus: 'free', subscriptionId: null });
  });

  it('does not charge for /v1/credits', async () => {
    const sandbox = await sandboxWith();
    for (let i = 0; i < 3; i++) await get(sandbox.url, '/v1/credits');
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(10_000);
  });

  it('charges exactly one credit for a 200', async () => {
    const sandbox = await sandboxWith();
    const { status, body } = await get(sandbox.url, PROFILE, { handle: 'a' });
    expect(status).toBe(200);
    expect(body.credits_used).toBe(1);
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(9_999);
  });

  it('answers a validation failure with 400, endpoint and credits_required, and charges nothing', async () => {
    const sandbox = await sandboxWith();
    const { status, body } = await get(sandbox.url, PROFILE, {});
    expect(status).toBe(400);
    expect(body).toEqual({
      error: 'Missing required parameter: handle',
      endpoint: 'shortvideo/profile',
      credits_required: 1,
    });
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(10_000);
  });

  it('answers 402 with required and available once the balance is spent', async () => {
    const sandbox = await sandboxWith({ accounts: [{ apiKey: 'sk_live_small', credits: 1 }] });
    expect((await get(sandbox.url, PROFILE, { handle: 'a' }, { key: 'sk_live_small' })).status).toBe(200);
    const { status, body } = await get(sandbox.url, PROFILE, { handle: 'a' }, { key: 'sk_live_small' });
    expect(status).toBe(402);
    expect(body).toEqual({ error: 'Insufficient credits', required: 1, available: 0 });
  });

  it('validates before the credit check, so a bad query on an empty account is a 400', async () => {
    const sandbox = await sandboxWith({ accounts: [{ apiKey: 'sk_live_empty', credits: 0 }] });
    const { status } = await get(sandbox.url, PROFILE, {}, { key: 'sk_live_empty' });
    expect(status).toBe(400);
  });

  it('keeps balances of several accounts apart', async () => {
    const sandbox = await sandboxWith({
      accounts: [
        { apiKey: 'sk_live_a', credits: 10 },
        { apiKey: 'sk_live_b', credits: 5 },
        { apiKey: 'sk_live_c', credits: 0 },
      ],
    });
    expect(sandbox.apiKey).toBe('sk_live_a');
    for (let i = 0; i < 3; i++) await get(sandbox.url, PROFILE, { handle: `a${i}` }, { key: 'sk_live_a' });
    await get(sandbox.url, PROFILE, { handle: 'b' }, { key: 'sk_live_b' });
    const credits = async (key: string) => (await get(sandbox.url, '/v1/credits', {}, { key })).body.credits;
    expect([await credits('sk_live_a'), await credits('sk_live_b'), await credits('sk_live_c')]).toEqual([7, 4, 0]);
    expect(sandbox.requests.charged).toEqual({ sk_live_a: 3, sk_live_b: 1 });
  });

  it('replaces the default account when accounts are given', async () => {
    const sandbox = await sandboxWith({ accounts: [{ apiKey: 'sk_live_only', credits: 3 }] });
    expect((await get(sandbox.url, '/v1/credits', {}, { key: 'sk_live_sandbox' })).status).toBe(401);
  });

  it('turns a purchase into credits, the active state and a cs_ id on that account only', async () => {
    const sandbox = await sandboxWith({
      accounts: [
        { apiKey: 'sk_live_buyer', credits: 2 },
        { apiKey: 'sk_live_other', credits: 2 },
      ],
    });
    sandbox.purchase('sk_live_buyer', 500);
    const buyer = (await get(sandbox.url, '/v1/credits', {}, { key: 'sk_live_buyer' })).body;
    const other = (await get(sandbox.url, '/v1/credits', {}, { key: 'sk_live_other' })).body;
    expect(buyer.credits).toBe(502);
    expect(buyer.subscriptionStatus).toBe('active');
    expect(buyer.subscriptionId).toMatch(/^cs_/);
    expect(other).toEqual({ credits: 2, subscriptionStatus: 'free', subscriptionId: null });
  });

  it('gives each purchase its own checkout session id', () => {
    const accounts = new Accounts([{ apiKey: 'sk_live_a', credits: 0 }]);
    const first = accounts.purchase('sk_live_a', 10).subscriptionId;
    const second = accounts.purchase('sk_live_a', 10).subscriptionId;
    expect(first).not.toBe(second);
  });

  it('refuses a purchase for an unknown key or a non-positive amount with a TypeError', async () => {
    const sandbox = await sandboxWith();
    expect(() => sandbox.purchase('sk_live_nobody', 10)).toThrow(TypeError);
    expect(() => sandbox.purchase(sandbox.apiKey, 0)).toThrow(TypeError);
    expect(() => sandbox.purchase(sandbox.apiKey, 1.5)).toThrow(TypeError);
  });

  it('never overdraws an account under concurrent requests', async () => {
    const sandbox = await sandboxWith({ accounts: [{ apiKey: 'sk_live_race', credits: 5 }], latencyMs: 30 });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => get(sandbox.url, PROFILE, { handle: `h${i}` }, { key: 'sk_live_race' })),
    );
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 402)).toHaveLength(15);
    expect(sandbox.balance('sk_live_race').credits).toBe(0);
  });

  it('counts every request and the charged ones per key', async () => {
    const sandbox = await sandboxWith();
    await get(sandbox.url, PROFILE, { handle: 'a' });
    await get(sandbox.url, PROFILE, {});
    await get(sandbox.url, '/v1/credits');
    expect(sandbox.requests).toEqual({ total: 3, charged: { sk_live_sandbox: 1 } });
  });
});

describe('hostile queries', () => {
  it('answers bad percent-encoding with a clean 400', async () => {
    const response = await fetch(`${shared.url}${PROFILE}?handle=%E0%A4%zz`, { headers: { 'x-api-key': shared.apiKey } });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe('Malformed query string');
  });

  it('answers a non-numeric number with a 400 naming the parameter', async () => {
    const { status, body } = await get(shared.url, POPULAR, { page: 'abc' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid value for page: abc');
  });

  it('answers a number too large to be an integer with a 400', async () => {
    const { status } = await get(shared.url, POPULAR, { page: '9'.repeat(400) });
    expect(status).toBe(400);
  });

  it('answers a huge request line cleanly and keeps serving', async () => {
    const { status } = await get(shared.url, PROFILE, { handle: 'x'.repeat(100_000) });
    expect([400, 414, 431]).toContain(status);
    expect((await get(shared.url, '/v1/credits')).status).toBe(200);
  });

  it('keeps the first value of a repeated key', async () => {
    const headers = { 'x-api-key': shared.apiKey };
    const repeated = await (await fetch(`${shared.url}${PROFILE}?handle=first&handle=second`, { headers })).json();
    expect(repeated.data.user.uniqueId).toBe('first');
  });

  it('refuses a made-up cursor with 400 Invalid cursor', async () => {
    const { status, body } = await get(shared.url, COMMENTS, { url: 'v', continuationToken: 'not-a-cursor' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });

  it('refuses a cursor issued for another resource', async () => {
    const first = await get(shared.url, COMMENTS, { url: 'video-one-n100' });
    const token = first.body.data.continuationToken;
    const { status, body } = await get(shared.url, COMMENTS, { url: 'video-two-n100', continuationToken: token });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });

  it('echoes a huge bad value clipped, never whole', async () => {
    const { status, body } = await get(shared.url, POPULAR, { orderBy: 'z'.repeat(5_000) });
    expect(status).toBe(400);
    expect(body.error.length).toBeLessThan(100);
  });
});

describe('faults', () => {
  it('answers 500 Failed to fetch <platform> <operation> at rate 1 and charges nothing', async () => {
    const sandbox = await sandboxWith({ faults: { rate: 1 } });
    const { status, body } = await get(sandbox.url, PROFILE, { handle: 'a' });
    expect(status).toBe(500);
    expect(body).toEqual({ error: 'Failed to fetch shortvideo profile' });
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(10_000);
  });

  it('names the platform of a nested path in the upstream failure message', async () => {
    const sandbox = await sandboxWith({ faults: { rate: 1 } });
    const { status, body } = await get(sandbox.url, '/v1/scrape/socialnet-marketplace/location-search', { query: 'austin' });
    expect(status).toBe(500);
    expect(body).toEqual({ error: 'Failed to fetch socialnet-marketplace location search' });
  });

  it('destroys the socket at reset 1 and charges nothing', async () => {
    const sandbox = await sandboxWith({ faults: { reset: 1 } });
    await expect(get(sandbox.url, PROFILE, { handle: 'a' })).rejects.toThrow();
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(10_000);
  });

  it('cuts a 200 body short mid-JSON at truncate 1 and charges for it', async () => {
    const sandbox = await sandboxWith({ faults: { truncate: 1 } });
    const { status, text } = await get(sandbox.url, PROFILE, { handle: 'a' });
    expect(status).toBe(200);
    expect(text.startsWith('{"success":true')).toBe(true);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(9_999);
  });

  it('answers a 502 HTML page at html 1 and charges nothing', async () => {
    const sandbox = await sandboxWith({ faults: { html: 1 } });
    const { status, text, headers } = await get(sandbox.url, PROFILE, { handle: 'a' });
    expect(status).toBe(502);
    expect(headers.get('content-type')).toContain('text/html');
    expect(text).toContain('<html>');
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(10_000);
  });

  it('leaves /v1/credits alone whatever the faults', async () => {
    const sandbox = await sandboxWith({ faults: { rate: 1 } });
    expect((await get(sandbox.url, '/v1/credits')).status).toBe(200);
  });

  it('fails the same requests for the same seed and others for another seed', async () => {
    const statuses = async (seed: string) => {
      const sandbox = await sandboxWith({ seed, faults: { rate: 0.5 } });
      const out: number[] = [];
      for (let i = 0; i < 24; i++) out.push((await get(sandbox.url, PROFILE, { handle: 'a' })).status);
      return out;
    };
    const first = await statuses('fault-seed');
    expect(first).toContain(500);
    expect(first).toContain(200);
    expect(await statuses('fault-seed')).toEqual(first);
    expect(await statuses('another-seed')).not.toEqual(first);
  });

  it('changes faults at run time with setFaults', async () => {
    const sandbox = await sandboxWith();
    expect((await get(sandbox.url, PROFILE, { handle: 'a' })).status).toBe(200);
    sandbox.setFaults({ rate: 1 });
    expect((await get(sandbox.url, PROFILE, { handle: 'a' })).status).toBe(500);
    sandbox.setFaults({});
    expect((await get(sandbox.url, PROFILE, { handle: 'a' })).status).toBe(200);
  });

  it('refuses a fault that is not a probability with a TypeError naming it', async () => {
    await expect(startSandbox({ faults: { rate: 2 } })).rejects.toThrow(/faults\.rate/);
    const sandbox = await sandboxWith();
    expect(() => sandbox.setFaults({ html: -1 })).toThrow(/faults\.html/);
  });

  it('delays every response by latencyMs', async () => {
    const sandbox = await sandboxWith({ latencyMs: 120 });
    const started = performance.now();
    const { status } = await get(sandbox.url, PROFILE, {});
    expect(status).toBe(400);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });

  it('makes the slow AI transcript operations wait slowMs', async () => {
    const sandbox = await sandboxWith({ slowMs: 150 });
    const started = performance.now();
    const { status } = await get(sandbox.url, '/v1/scrape/microblog/tweet/transcript', { url: 'https://microblog.example/a/status/1' });
    expect(status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });
});

describe('determinism', () => {
  it('answers the same bytes for the same seed and request', async () => {
    const a = await sandboxWith({ seed: 'same' });
    const b = await sandboxWith({ seed: 'same' });
    const query = { handle: 'creator-n80', sort_by: 'popular' };
    const first = await get(a.url, '/v1/scrape/shortvideo/videos', query);
    const second = await get(b.url, '/v1/scrape/shortvideo/videos', query);
    expect(first.status).toBe(200);
    expect(second.text).toBe(first.text);
  });

  it('answers different data for another seed', async () => {
    const a = await sandboxWith({ seed: 'one' });
    const b = await sandboxWith({ seed: 'two' });
    const first = await get(a.url, PROFILE, { handle: 'creator' });
    const second = await get(b.url, PROFILE, { handle: 'creator' });
    expect(second.text).not.toBe(first.text);
  });
});

describe('robustness', () => {
  const broken: SandboxOperation = {
    id: 'test/broken',
    operation: 'broken',
    handle() {
      throw new Error('handler bug');
    },
  };
  const strict: SandboxOperation = {
    id: 'test/strict',
    operation: 'strict',
    handle({ query }) {
      if (!query.has('x')) throw new SandboxValidationError('Missing required parameter: x', { hint: 'x' });
      return { ok: true };
    },
  };

  async function serve(): Promise<{ url: string; close: () => Promise<void> }> {
    const server = createSandboxServer({
      operations: new Map([
        [broken.id, broken],
        [strict.id, strict],
      ]),
      accounts: new Accounts([{ apiKey: 'sk_live_sandbox', credits: 5 }]),
      faults: new FaultInjector({}, 'seed'),
      seed: 'seed',
      latencyMs: 0,
      slowMs: 0,
      counters: { total: 0, charged: new Map() },
      clock: new SandboxClock(),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    };
  }

  it('answers a handler bug with 500 JSON and keeps serving', async () => {
    const server = await serve();
    try {
      const { status, body } = await get(server.url, '/v1/scrape/test/broken');
      expect(status).toBe(500);
      expect(body).toEqual({ error: 'Internal sandbox error' });
      expect((await get(server.url, '/v1/credits')).body.credits).toBe(5);
    } finally {
      await server.close();
    }
  });

  it('adds the extra fields of a validation error to the 400 body', async () => {
    const server = await serve();
    try {
      const { body } = await get(server.url, '/v1/scrape/test/strict');
      expect(body).toEqual({ error: 'Missing required parameter: x', endpoint: 'test/strict', credits_required: 1, hint: 'x' });
    } finally {
      await server.close();
    }
  });

  it('survives a client that hangs up mid-request', async () => {
    const url = new URL(shared.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: `${PROFILE}?handle=a`, headers: { 'x-api-key': shared.apiKey } });
      req.on('error', () => resolve());
      req.on('socket', (socket) => socket.on('connect', () => {
        req.destroy();
        resolve();
      }));
      req.end();
    });
    expect((await get(shared.url, '/v1/credits')).status).toBe(200);
  });

  it('refuses bad options with a TypeError naming them', async () => {
    await expect(startSandbox({ port: -1 })).rejects.toThrow(/port/);
    await expect(startSandbox({ accounts: [] })).rejects.toThrow(/accounts/);
    await expect(startSandbox({ accounts: [{ apiKey: 'nope', credits: 1 }] })).rejects.toThrow(/apiKey/);
    await expect(startSandbox({ accounts: [{ apiKey: 'sk_live_x', credits: -1 }] })).rejects.toThrow(/credits/);
    await expect(startSandbox({ latencyMs: Number.NaN })).rejects.toThrow(/latencyMs/);
  });

  it('binds to loopback and closes twice without error', async () => {
    const sandbox = await startSandbox({ port: 0 });
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await sandbox.close();
    await sandbox.close();
    await expect(fetch(`${sandbox.url}/v1/credits`)).rejects.toThrow();
  });
});
