import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, randomDelays, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';
import { readNdjson } from './readers.ts';

// 2,000 trimmed posts, 25 a page: 80 pages, slowed down so that a kill lands mid-walk.
const WALK = ['export', 'forum/subforum', 'subforum=credits-n2000', 'trim=true'];
// 230 posts: 10 pages of 25.
const SHORT = ['export', 'forum/subforum', 'subforum=credits-n230', 'trim=true'];

let sandbox: Sandbox;
const reference: Record<string, Record<string, unknown>[]> = {};

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 8, accounts: [{ apiKey: 'sk_live_sandbox_reference', credits: 1000 }] });
  for (const [name, walk] of [['walk', WALK], ['short', SHORT]] as const) {
    const out = join(tempDir(), 'reference.ndjson');
    const result = await runCli([...walk, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    reference[name] = readNdjson(out);
  }
});
afterAll(() => sandbox.close());

/** A sandbox of its own, so its charge counter is this test's alone. */
async function account(credits: number, latencyMs = 0): Promise<{ service: Sandbox; env: NodeJS.ProcessEnv; charged: () => number }> {
  const key = 'sk_live_sandbox_credits';
  const service = await startSandbox({ port: 0, latencyMs, accounts: [{ apiKey: key, credits }] });
  return { service, env: sandboxEnv(service, key), charged: () => service.requests.charged[key] ?? 0 };
}

describe('--max-credits', () => {
  it('never lets the cap be passed across 10 kill -9 and resumes, and a higher cap then completes the export', async () => {
    const cap = 40;
    const { service, env, charged } = await account(1000, 8);
    try {
      const out = join(tempDir(), 'capped.ndjson');
      const delays = randomDelays(20261122, 10, 500);
      let killedMidRun = 0;
      for (const [run, delay] of delays.entries()) {
        const child = startCli([...WALK, '--out', out, '--max-credits', String(cap), ...(run === 0 ? [] : ['--resume'])], env);
        const done = finished(child);
        await waitFor(`${out}.lock`);
        await new Promise((resolve) => setTimeout(resolve, delay));
        child.kill('SIGKILL');
        const ended = await done;
        if (ended.signal === 'SIGKILL') killedMidRun++;
        else expect(ended.code, `run ${run}: ${ended.stderr}`).toBe(0);
        expect(charged(), `run ${run}`).toBeLessThanOrEqual(cap);
      }
      expect(killedMidRun).toBeGreaterThanOrEqual(5);
      const last = await runCli([...WALK, '--out', out, '--max-credits', String(cap), '--resume'], env);
      expect(last.code, last.stderr).toBe(0);
      expect(last.stderr).toMatch(/stopped at --max-credits 40 \(\d+ credits? this run\): resume to continue/);
      expect(charged()).toBeLessThanOrEqual(cap);
      // What was kept is the start of the export, each record once.
      const kept = readNdjson(out);
      expect(kept).toEqual(reference.walk.slice(0, kept.length));

      const rest = await runCli([...WALK, '--out', out, '--max-credits', '200', '--resume'], env);
      expect(rest.code, rest.stderr).toBe(0);
      expect(readNdjson(out)).toEqual(reference.walk);
      expect(existsSync(`${out}.checkpoint.json`)).toBe(false);
    } finally {
      await service.close();
    }
  }, 240_000);

  it('ends with a summary naming the cap and keeps the checkpoint, so a higher cap continues without buying a page again', async () => {
    const { service, env, charged } = await account(100);
    try {
      const out = join(tempDir(), 'cap.ndjson');
      const first = await runCli([...SHORT, '--out', out, '--max-credits', '3'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/stopped at --max-credits 3 \(3 credits this run\): resume to continue/);
      expect(readNdjson(out)).toHaveLength(75);
      expect(existsSync(`${out}.checkpoint.json`)).toBe(true);
      const second = await runCli([...SHORT, '--out', out, '--max-credits', '6', '--resume'], env);
      expect(second.code, second.stderr).toBe(0);
      // A clean stop ends a run: the resume is a new run, with 6 credits of its own.
      expect(readNdjson(out)).toHaveLength(225);
      expect(charged()).toBe(9);
      const last = await runCli([...SHORT, '--out', out, '--resume'], env);
      expect(last.code, last.stderr).toBe(0);
      expect(readNdjson(out)).toEqual(reference.short);
      expect(charged()).toBe(10);
    } finally {
      await service.close();
    }
  });

  it('does not count attempts that never reached the service', async () => {
    const { service, env, charged } = await account(100);
    const closed = await startSandbox({ port: 0 });
    await closed.close();
    try {
      const out = join(tempDir(), 'unreachable.ndjson');
      const unreachable = await runCli([...SHORT, '--out', out, '--max-credits', '4'], { ...env, SOCIALSTREAM_BASE_URL: closed.url });
      expect(unreachable.code, unreachable.stderr).toBe(5);
      const reached = await runCli([...SHORT, '--out', out, '--max-credits', '4'], env);
      expect(reached.code, reached.stderr).toBe(0);
      expect(readNdjson(out)).toHaveLength(100);
      expect(charged()).toBe(4);
    } finally {
      await service.close();
    }
  }, 120_000);
});

describe('--max-credits on stdout', () => {
  it('does not count attempts the service answered with an error (retried 500s), as a file export does not', async () => {
    const key = 'sk_live_sandbox_faults';
    const service = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits: 100 }], faults: { rate: 0.3 } });
    try {
      const result = await runCli([...SHORT, '--out', '-', '--max-credits', '10'], sandboxEnv(service, key));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(reference.short);
      expect(service.requests.charged[key]).toBe(10);
      // The faults did happen: attempts answered 500 and retried, beyond the 10 pages.
      expect(service.requests.total - 10).toBeGreaterThanOrEqual(3);
    } finally {
      await service.close();
    }
  });
});

describe('--max-pages and --limit', () => {
  it('--max-pages counts the pages of this run: a resume after a 402 starts a new run with its own', async () => {
    const { service, env, charged } = await account(4);
    try {
      const out = join(tempDir(), 'pages.ndjson');
      const first = await runCli([...SHORT, '--out', out, '--max-pages', '6'], env);
      expect(first.code, first.stderr).toBe(4);
      service.purchase('sk_live_sandbox_credits', 100);
      const second = await runCli([...SHORT, '--out', out, '--max-pages', '6', '--resume'], env);
      expect(second.code, second.stderr).toBe(0);
      // The 402 ended the first run: this one may buy 6 pages, and the 6 left finish the walk.
      expect(second.stderr).toMatch(/^wrote 130 records \(6 pages\)/m);
      expect(readNdjson(out)).toEqual(reference.short);
      expect(charged()).toBe(10);
    } finally {
      await service.close();
    }
  });

  it('--limit 0 buys nothing and writes nothing', async () => {
    const { service, env, charged } = await account(100);
    try {
      const out = join(tempDir(), 'none.ndjson');
      const result = await runCli([...SHORT, '--out', out, '--limit', '0'], env);
      expect(result.code, result.stderr).toBe(0);
      expect(charged()).toBe(0);
      expect(existsSync(out)).toBe(false);
    } finally {
      await service.close();
    }
  });

  it('a resume after a --limit stop is a new run with its own --limit, continuing inside the page the limit cut', async () => {
    const { service, env, charged } = await account(100);
    try {
      const out = join(tempDir(), 'limit.ndjson');
      const first = await runCli([...SHORT, '--out', out, '--limit', '110'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/stopped at --limit 110 \(110 records this run\): resume to continue/);
      expect(charged()).toBe(5);
      const lower = await runCli([...SHORT, '--out', out, '--limit', '50', '--resume'], env);
      expect(lower.code, lower.stderr).toBe(0);
      // The cut page is read again for its other 15 records, then 25 and 10 more: 3 pages.
      expect(charged()).toBe(8);
      expect(readNdjson(out)).toEqual(reference.short.slice(0, 160));
      const rest = await runCli([...SHORT, '--out', out, '--resume'], env);
      expect(rest.code, rest.stderr).toBe(0);
      expect(readNdjson(out)).toEqual(reference.short);
      // Each page a limit cut is read again for its other records; no finished page is.
      expect(charged()).toBe(12);
    } finally {
      await service.close();
    }
  });
});

/**
 * A service that speaks forum/subforum with exact bodies: `ok-nN` walks N posts 25 a page, `bad` is
 * rejected with a 400, `loop` serves the same page forever under new cursors. Counts every request
 * for pages; anything else (the free `/v1/credits`) is a 404.
 */
async function fakeService(): Promise<{ url: string; requests: Map<string, number>; close(): Promise<void> }> {
  const requests = new Map<string, number>();
  let cursors = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const name = url.searchParams.get('subforum') ?? '';
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (url.pathname !== '/v1/scrape/forum/subforum') return send(404, { success: false, error: 'Not found' });
    requests.set(name, (requests.get(name) ?? 0) + 1);
    if (name === 'bad') return send(400, { success: false, error: 'Invalid value for subforum: bad' });
    const from = Number(url.searchParams.get('after') ?? '0');
    if (name === 'loop') {
      const posts = Array.from({ length: 25 }, (_, index) => ({ id: `loop-${index}`, title: 'again' }));
      return send(200, { success: true, data: { posts, after: `${++cursors}` }, credits_used: 1 });
    }
    const total = Number(/-n(\d+)$/.exec(name)?.[1] ?? '0');
    const posts = Array.from({ length: Math.min(25, total - from) }, (_, index) => ({ id: `${name}-${from + index}`, title: name }));
    const after = from + 25 < total ? { after: String(from + 25) } : {};
    return send(200, { success: true, data: { posts, ...after }, credits_used: 1 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('--inputs with a parameter set the service rejects', () => {
  it('exports the other walks, names the file, line and error, exits 2, and resumes after the line is fixed', async () => {
    const service = await fakeService();
    try {
      const dir = tempDir();
      const inputs = join(dir, 'subforums.txt');
      writeFileSync(inputs, 'subforum=ok-n60\n# a comment\nsubforum=bad\nsubforum=ok-n40\n');
      const args = ['export', 'forum/subforum', '--inputs', inputs, '--out', join(dir, 'fan.ndjson')];
      const env = { ...process.env, SOCIALSTREAM_BASE_URL: service.url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox_fake' };
      const first = await runCli(args, env);
      expect(first.code, first.stderr).toBe(2);
      expect(first.stderr).toContain(`${inputs} line 3: rejected by the service:`);
      expect(first.stderr).toContain('Invalid value for subforum: bad');
      expect(first.stderr).toContain('--resume');
      expect(readNdjson(join(dir, 'fan.ndjson'))).toHaveLength(100);

      writeFileSync(inputs, 'subforum=ok-n60\n# a comment\nsubforum=ok-n30\nsubforum=ok-n40\n');
      const second = await runCli([...args, '--resume'], env);
      expect(second.code, second.stderr).toBe(0);
      const ids = readNdjson(join(dir, 'fan.ndjson')).map((record) => record.id);
      expect(ids).toHaveLength(130);
      expect(new Set(ids).size).toBe(130);
      // Every finished walk kept: 3 + 2 pages bought once, the rejected line once, the fixed line's 2.
      expect(Object.fromEntries(service.requests)).toEqual({ 'ok-n60': 3, bad: 1, 'ok-n40': 2, 'ok-n30': 2 });
    } finally {
      await service.close();
    }
  });
});

describe('a single parameter set the service rejects', () => {
  it('exits 2 naming the error and leaves nothing behind, so a plain re-run works', async () => {
    const service = await fakeService();
    try {
      const dir = tempDir();
      const out = join(dir, 'posts.ndjson');
      const env = { ...process.env, SOCIALSTREAM_BASE_URL: service.url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox_fake' };
      const rejected = await runCli(['export', 'forum/subforum', 'subforum=bad', '--out', out], env);
      expect(rejected.code).toBe(2);
      expect(rejected.stderr).toContain('Invalid value for subforum: bad');
      expect(readdirSync(dir)).toEqual([]);
      const plain = await runCli(['export', 'forum/subforum', 'subforum=ok-n30', '--out', out], env);
      expect(plain.code, plain.stderr).toBe(0);
      expect(readNdjson(out)).toHaveLength(30);
    } finally {
      await service.close();
    }
  });
});

describe('--inputs at width', () => {
  it('runs 30 walks at --concurrency 16 without a MaxListenersExceededWarning', async () => {
    const dir = tempDir();
    const inputs = join(dir, 'wide.txt');
    writeFileSync(inputs, Array.from({ length: 30 }, (_, index) => `subforum=wide${index}-n30\n`).join(''));
    const out = join(dir, 'wide.ndjson');
    const result = await runCli(['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--concurrency', '16', '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('MaxListenersExceededWarning');
    expect(readNdjson(out)).toHaveLength(30 * 30);
  });
});

describe('a walk that keeps yielding records it already read', () => {
  it('is stopped after 5 repeated pages under new cursors, with exit 5 and what it read kept, each record once', async () => {
    const service = await fakeService();
    try {
      const out = join(tempDir(), 'loop.ndjson');
      const env = { ...process.env, SOCIALSTREAM_BASE_URL: service.url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox_fake' };
      const result = await runCli(['export', 'forum/subforum', 'subforum=loop', '--out', out], env);
      expect(result.code, result.stderr).toBe(5);
      expect(result.stderr).toMatch(/5 pages in a row repeated records of earlier pages/);
      expect(service.requests.get('loop')).toBe(6);
      expect(readNdjson(out)).toHaveLength(25);
      expect(readFileSync(`${out}.checkpoint.json`, 'utf8')).not.toBe('');
    } finally {
      await service.close();
    }
  });
});
