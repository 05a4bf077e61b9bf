/**
 * `--locks redis://…`, end to end: shards of one export run at once as real CLI processes, each
 * locking the dataset with leases in a real `redis-server` instead of lock files (as shards on
 * machines without a shared lock would), against the sandbox over loopback; DuckDB reads the result.
 * Without `redis-server` on this machine the suite is skipped, saying so; CI installs it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir } from '../cli/helpers.ts';
import { BUCKET, startS3, type S3Harness } from '../helpers/s3.ts';
import { datasetCounts } from './dataset-counts.ts';
import { redisForSuite, redisServerHere } from './redis-server.ts';

const KEY = 'sk_live_sandbox_locks_e2e_secret';
const haveRedis = redisServerHere('redis-locks');
const redisServer = redisForSuite(haveRedis);

/** Posts per subforum of the inputs file (25 a page). */
const COUNTS = [120, 60, 200, 35, 90, 150];
const TOTAL = COUNTS.reduce((sum, count) => sum + count, 0);
const PAGES = COUNTS.reduce((sum, count) => sum + Math.ceil(count / 25), 0);

async function setup(latencyMs = 5): Promise<{ url: string; service: Sandbox; env: NodeJS.ProcessEnv; charged: () => number; dir: string; inputs: string }> {
  const service = await startSandbox({ port: 0, latencyMs, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
  const inputs = join(tempDir(), 'inputs.txt');
  writeFileSync(inputs, COUNTS.map((count, index) => `subforum=locks${index}-n${count}\n`).join(''));
  return { url: redisServer.nextUrl(), service, env: sandboxEnv(service, KEY), charged: () => service.requests.charged[KEY] ?? 0, dir: join(tempDir(), 'ds'), inputs };
}

describe.skipIf(!haveRedis)('export --dataset --locks redis://… over a real Redis', () => {
  it('two shards run at once, each locking with Redis leases, leave every record once and pay each page once', async () => {
    const context = await setup();
    try {
      const shard = (k: number) => startCli(['export', 'forum/subforum', 'trim=true', '--inputs', context.inputs, '--shard', `${k}/2`, '--dataset', context.dir, '--locks', context.url], context.env);
      const results = await Promise.all([finished(shard(1)), finished(shard(2))]);
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      expect(await datasetCounts(context.dir)).toEqual({ rows: TOTAL, ids: TOTAL });
      expect(context.charged()).toBe(PAGES);
      // The dataset records its lock mechanism: a run with lock files is refused before any request, naming --locks.
      const schema = JSON.parse(readFileSync(join(context.dir, '_dataset', 'forum__subforum', 'schema.json'), 'utf8')) as { locks?: string };
      expect(schema.locks).toBe('queue');
      const plain = await runCli(['export', 'forum/subforum', 'trim=true', 'subforum=locks0-n120', '--dataset', context.dir], context.env);
      expect(plain.code).toBe(2);
      expect(plain.stderr).toMatch(/locked with Redis leases.*--locks redis:\/\//);
      expect(context.charged()).toBe(PAGES);
    } finally {
      await context.service.close();
    }
  });

  it('dataset compact of a dataset written with --locks is refused without them, naming --locks, and takes the same Redis leases with them', async () => {
    const context = await setup();
    try {
      const run = await runCli(['export', 'forum/subforum', 'trim=true', 'subforum=locks0-n120', '--dataset', context.dir, '--partition', 'day', '--locks', context.url], context.env);
      expect(run.code, run.stderr).toBe(0);
      const refused = await runCli(['dataset', 'compact', context.dir, '--partition', 'month'], process.env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/Redis leases .*--locks redis:\/\//);
      const compacted = await runCli(['dataset', 'compact', context.dir, '--partition', 'month', '--locks', context.url], process.env);
      expect(compacted.code, compacted.stderr).toBe(0);
      expect(compacted.stdout).toMatch(/120 rows, partitioned by day → month/);
      expect(await datasetCounts(context.dir)).toEqual({ rows: 120, ids: 120 });
    } finally {
      await context.service.close();
    }
  });

  it('a shard killed -9 mid-walk frees its leases by itself: its rerun after the lease continues it, nothing lost or doubled', async () => {
    const context = await setup(40);
    try {
      const args = ['export', 'forum/subforum', 'trim=true', '--inputs', context.inputs, '--shard', '1/2', '--dataset', context.dir, '--locks', context.url, '--lease', '1000'];
      const child = startCli(args, context.env);
      const exited = finished(child);
      // Some pages bought, the walk not done.
      const deadline = Date.now() + 30_000;
      while (context.charged() < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      child.kill('SIGKILL');
      await exited;
      const boughtBeforeKill = context.charged();
      // Its lease (1 s) runs out by itself; a rerun started before then is refused as the queue's workers are.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const rerun = await runCli([...args, '--resume'], context.env);
      expect(rerun.code, rerun.stderr).toBe(0);
      const other = await runCli(['export', 'forum/subforum', 'trim=true', '--inputs', context.inputs, '--shard', '2/2', '--dataset', context.dir, '--locks', context.url], context.env);
      expect(other.code, other.stderr).toBe(0);
      expect(await datasetCounts(context.dir)).toEqual({ rows: TOTAL, ids: TOTAL });
      // Each page once, but the pages in flight when the kill came (at most the run's concurrency of 4 walks).
      expect(context.charged()).toBeGreaterThanOrEqual(PAGES);
      expect(context.charged()).toBeLessThanOrEqual(PAGES + 4);
      expect(boughtBeforeKill).toBeGreaterThanOrEqual(3);
    } finally {
      await context.service.close();
    }
  });

  describe('on an s3:// dataset, with writers that stage in working folders of their own', () => {
    let s3: S3Harness;
    beforeAll(async () => {
      s3 = await startS3();
    });
    afterAll(async () => {
      await s3?.close();
    });

    it('names each lock by the dataset, not by the working folder: a second writer of the same export is refused while the first holds it', async () => {
      const context = await setup(150);
      try {
        const env = { ...context.env, ...s3.direct };
        const location = `s3://${BUCKET}/locks-${Date.now()}`;
        const args = (work: string) => ['export', 'forum/subforum', 'trim=true', 'subforum=locks0-n120', '--dataset', location, '--locks', context.url, '--work', work];
        const first = finished(startCli(args(tempDir()), env));
        // The first has bought a page, so it holds its writer lock.
        const deadline = Date.now() + 30_000;
        while (context.charged() < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        const second = await runCli(args(tempDir()), env);
        expect(second.code, second.stderr).not.toBe(0);
        expect(second.stderr).toMatch(/is writing/);
        expect((await first).code).toBe(0);
        // Each page once: the second bought nothing.
        expect(context.charged()).toBe(Math.ceil(120 / 25));
      } finally {
        await context.service.close();
      }
    });
  });

  it('a Redis that cannot be reached is one line before any request', async () => {
    const context = await setup();
    try {
      const result = await runCli(['export', 'forum/subforum', 'subforum=x-n50', '--dataset', context.dir, '--locks', 'redis://127.0.0.1:1/0'], context.env);
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/127\.0\.0\.1:1/);
      expect(result.stderr).not.toContain(KEY);
      expect(context.charged()).toBe(0);
    } finally {
      await context.service.close();
    }
  });
});

describe('--locks on the command line', () => {
  it('goes with --dataset only, and --lease with --locks only: usage errors before anything is read', async () => {
    const env = { ...process.env, SOCIALSTREAM_API_KEY: '' };
    const file = await runCli(['export', 'forum/subforum', 'subforum=a', '--out', join(tempDir(), 'a.ndjson'), '--locks', 'redis://127.0.0.1:6379/0'], env);
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/--locks .* goes with --dataset/);
    const lease = await runCli(['export', 'forum/subforum', 'subforum=a', '--dataset', tempDir(), '--lease', '1000'], env);
    expect(lease.code).toBe(2);
    expect(lease.stderr).toMatch(/--lease .* goes with --locks/);
  });
});
