/**
 * A queue's workers with no shared disk, end to end: a real `redis-server`, s3rver (its locks are
 * Redis leases, so the store need not honour conditional writes), the sandbox, and three workers as
 * CLI processes, each staging in a `--work` folder of its own, filling one `s3://` dataset. A worker
 * killed -9 mid-walk leaves its staging log on the store, from which another continues the walk;
 * one killed while a publish pass is at work leaves the pass to the next. DuckDB reads the parts,
 * downloaded from the bucket: every record once.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/dataset/storage/open.ts';
import { queueStatus, type RunStatus } from '../../src/queue/index.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, type CliResult } from '../cli/helpers.ts';
import { BUCKET, downloadParts, startS3, type S3Harness } from '../helpers/s3.ts';
import { datasetCounts } from './dataset-counts.ts';
import { redisForSuite, redisServerHere } from './redis-server.ts';
import { stopWorkers } from './workers.ts';

const KEY = 'sk_live_sandbox_queue_s3_e2e';
const haveRedis = redisServerHere('queue-s3');
const redisServer = redisForSuite(haveRedis);

let s3: S3Harness;
beforeAll(async () => {
  if (haveRedis) s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

async function until(url: string, done: (run: RunStatus) => boolean, timeoutMs = 90_000): Promise<RunStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { runs } = await queueStatus(url);
    if (runs.length === 1 && done(runs[0])) return runs[0];
    if (Date.now() > deadline) throw new Error(`timed out; status: ${JSON.stringify(runs)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}


/** The publish passes that have a claim or a journal in the dataset at `location` now, by id. */
async function passesAtWork(location: string): Promise<Set<string>> {
  const storage = await openStorage(location, { env: s3.direct });
  const prefix = '_dataset/forum__subforum/publishing/';
  const passes = new Set<string>();
  try {
    for await (const { name } of storage.list(prefix)) if (name.endsWith('/journal.json') || name.endsWith('/claim.json')) passes.add(name.slice(prefix.length, name.indexOf('/', prefix.length)));
  } finally {
    await storage.close();
  }
  return passes;
}

/** Resolves once a pass not among `before` (those a killed worker may have left) is at work in the dataset at `location`. */
async function newPassAtWork(location: string, before: ReadonlySet<string>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const pass of await passesAtWork(location)) if (!before.has(pass)) return;
    if (Date.now() > deadline) throw new Error('no publish pass was seen at work');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!haveRedis)('queue workers without a shared disk, into an s3:// dataset', () => {
  it('three workers with their own --work, one killed -9 mid-walk and the other while its own pass publishes, leave every record once in the bucket', async () => {
    const service = await startSandbox({ port: 0, latencyMs: 20, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
    const env = { ...sandboxEnv(service, KEY), ...s3.direct };
    const charged = () => service.requests.charged[KEY] ?? 0;
    const url = redisServer.nextUrl();
    const location = `s3://${BUCKET}/${randomUUID()}`;
    const workers: ChildProcess[] = [];
    const start = (): { child: ChildProcess; done: Promise<CliResult> } => {
      const child = startCli(['worker', '--queue', url, '--concurrency', '2', '--lease', '1000', '--park', '500', '--work', tempDir()], env);
      if (process.env.DEBUG_E2E) child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[worker ${child.pid}] ${chunk.toString()}`));
      workers.push(child);
      return { child, done: finished(child) };
    };
    // 1,000 posts (40 pages) and five short walks: a long walk to kill mid-walk, and short ones publishing meanwhile.
    const COUNTS = [1000, 60, 90, 40, 75, 110];
    const inputs = join(tempDir(), 'inputs.txt');
    await writeFile(inputs, COUNTS.map((count, index) => `subforum=qs3-${index}-n${count}\n`).join(''));
    try {
      const enqueued = await runCli(['export', 'forum/subforum', 'trim=true', 'sort=new', '--inputs', inputs, '--dataset', location, '--partition', 'year', '--queue', url], env);
      expect(enqueued.code).toBe(0);
      expect(enqueued.stderr).toContain(`into ${location}: started run 1`);
      const [first, second] = [start(), start()];
      await until(url, () => charged() >= 15);
      first.child.kill('SIGKILL');
      await first.done;
      // A pass that appears now is the one live worker's: it is killed while that pass publishes.
      await newPassAtWork(location, await passesAtWork(location));
      second.child.kill('SIGKILL');
      await Promise.all([first.done, second.done]);
      start();
      const done = await until(url, (current) => current.state === 'finished');
      expect(done.walks).toMatchObject({ total: COUNTS.length, done: COUNTS.length, failed: 0 });
      const total = COUNTS.reduce((sum, count) => sum + count, 0);
      expect(await datasetCounts(await downloadParts(location, s3.direct))).toEqual({ rows: total, ids: total });
      // Every page once, and at most the pages in flight at each kill bought again (two walks a worker).
      const pages = COUNTS.reduce((sum, count) => sum + Math.ceil(count / 25), 0);
      expect(charged()).toBeGreaterThanOrEqual(pages);
      expect(charged()).toBeLessThanOrEqual(pages + 4);
    } finally {
      await stopWorkers(workers);
      await service.close();
    }
  });
});
