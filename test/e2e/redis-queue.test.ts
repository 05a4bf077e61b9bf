/**
 * Beyond one machine, end to end: a real `redis-server` on a loopback port of its own, the sandbox
 * over loopback, and workers as real CLI processes (`socialstream worker`) filling one dataset that
 * DuckDB reads. Each test has a sandbox of its own (so its charge counter is its alone) and a Redis
 * database of its own. Without `redis-server` on this machine the suite is skipped, saying so; CI
 * installs it (`.ci/run`), and there a missing binary fails.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { PREFIX, QUEUE_NAME } from '../../src/queue/connection.ts';
import { queueStatus, type RunStatus } from '../../src/queue/index.ts';
import { lockKey, RedisLocks } from '../../src/queue/lease-lock.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, randomDelays, runCli, sandboxEnv, startCli, tempDir, type CliResult } from '../cli/helpers.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { freePort, spawnRedis } from '../../bench/_cluster.ts';
import { datasetCounts } from './dataset-counts.ts';
import { redisForSuite, redisServerHere } from './redis-server.ts';
import { stopWorkers } from './workers.ts';

const KEY = 'sk_live_sandbox_queue_e2e_secret';
const haveRedis = redisServerHere('redis-queue');

const redisServer = redisForSuite(haveRedis);

/** A queue (a Redis database) and a sandbox of this test's own, and workers to start against them. */
async function setup(latencyMs = 5): Promise<{ url: string; service: Sandbox; env: NodeJS.ProcessEnv; charged: () => number; dir: string; workers: ChildProcess[] }> {
  const service = await startSandbox({ port: 0, latencyMs, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
  const dir = tempDir();
  return { url: redisServer.nextUrl(), service, env: sandboxEnv(service, KEY), charged: () => service.requests.charged[KEY] ?? 0, dir, workers: [] };
}

function startWorker(context: { url: string; env: NodeJS.ProcessEnv; workers: ChildProcess[] }, env = context.env, leaseMs = 1_000): { child: ChildProcess; done: Promise<CliResult> } {
  // A short lease and park: a dead worker's walk is taken over within about twice the lease, a parked one looked at every 0.5 s.
  const child = startCli(['worker', '--queue', context.url, '--concurrency', '2', '--lease', String(leaseMs), '--park', '500'], env);
  if (process.env.DEBUG_E2E) child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[worker ${child.pid}] ${chunk.toString()}`));
  context.workers.push(child);
  return { child, done: finished(child) };
}


function enqueue(context: { url: string; env: NodeJS.ProcessEnv; dir: string }, inputs: string, extra: string[] = []): Promise<CliResult> {
  return runCli(['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--dataset', context.dir, '--queue', context.url, ...extra], context.env);
}

/** An inputs file of subforums with these record counts (25 posts a page). */
function inputsFile(counts: number[], tag: string): string {
  const path = join(tempDir(), 'inputs.txt');
  writeFileSync(path, counts.map((count, index) => `subforum=${tag}${index}-n${count}\n`).join(''));
  return path;
}

async function run(url: string): Promise<RunStatus> {
  const status = await queueStatus(url);
  expect(status.runs).toHaveLength(1);
  return status.runs[0];
}

async function until(url: string, done: (run: RunStatus) => boolean, timeoutMs = 60_000): Promise<RunStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await run(url);
    if (done(current)) return current;
    if (Date.now() > deadline) throw new Error(`timed out; status: ${JSON.stringify(current)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const pagesOf = (counts: number[]): number => counts.reduce((sum, count) => sum + Math.ceil(count / 25), 0);
const sum = (counts: number[]): number => counts.reduce((total, count) => total + count, 0);

describe.skipIf(!haveRedis)('socialstream export --queue, worker and status over a real Redis', () => {
  const COUNTS = [120, 60, 200, 35, 90, 150, 25, 75, 110, 50, 180, 40];
  const drained = { url: '', dir: '' };

  it('three workers drain one queue into one dataset that DuckDB reads with every record once', async () => {
    const context = await setup();
    try {
      const enqueued = await enqueue(context, inputsFile(COUNTS, 'drain'));
      expect(enqueued.code, enqueued.stderr).toBe(0);
      expect(enqueued.stderr).toMatch(/started run 1; 12 walks enqueued/);
      for (let index = 0; index < 3; index++) startWorker(context);
      const finishedRun = await until(context.url, (current) => current.state === 'finished');
      expect(finishedRun.walks).toMatchObject({ total: 12, done: 12, failed: 0 });
      expect(await datasetCounts(context.dir)).toEqual({ rows: sum(COUNTS), ids: sum(COUNTS) });
      expect(context.charged()).toBe(pagesOf(COUNTS));
      Object.assign(drained, { url: context.url, dir: context.dir });
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('--layout and --since reach the workers: a queued export lands the same rows in the same layout as one process', async () => {
    const context = await setup();
    const inputs = inputsFile([150, 90, 60], 'bounds');
    const oneProcess = (dir: string, extra: string[]) => runCli(['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--dataset', dir, ...extra], context.env);
    try {
      // The records' middle time, so that --since keeps some and drops some.
      const whole = join(tempDir(), 'whole');
      expect((await oneProcess(whole, [])).code).toBe(0);
      const [{ middle }] = (await query(`SELECT median(created_utc) AS middle FROM read_parquet(${sqlPath(`${whole}/**/*.parquet`)}, hive_partitioning = true)`)) as { middle: number }[];
      const since = new Date(Number(middle) * 1000).toISOString();
      const bounded = ['--layout', 'flat', '--since', since];
      const local = join(tempDir(), 'local');
      expect((await oneProcess(local, bounded)).code).toBe(0);

      const enqueued = await enqueue(context, inputs, bounded);
      expect(enqueued.code, enqueued.stderr).toBe(0);
      startWorker(context);
      await until(context.url, (current) => current.state === 'finished');
      const schemaOf = (dir: string) => JSON.parse(readFileSync(join(dir, '_dataset', 'forum__subforum', 'schema.json'), 'utf8')) as { parquetLayout?: string };
      expect(schemaOf(context.dir).parquetLayout).toBe('flat');
      expect(schemaOf(local).parquetLayout).toBe('flat');
      const ids = async (dir: string) => (await query(`SELECT id FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true) ORDER BY id`)).map((row) => row.id);
      const kept = await ids(context.dir);
      expect(kept).toEqual(await ids(local));
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(300);

      // A later enqueue asking for the other layout is refused before any job, naming the remedy.
      const other = await enqueue(context, inputs, ['--layout', 'nested']);
      expect(other.code).toBe(2);
      expect(other.stderr).toMatch(/in the flat Parquet layout .*dataset compact/);
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('walks that overlap (the same posts under other parameters) give the same rows from 3 workers as from one process, each key once', async () => {
    const context = await setup();
    // `r/ovl` and `/r/ovl` name the subforum `ovl` as the service reads them: three walks, one set of posts.
    const path = join(tempDir(), 'overlap.txt');
    const lines = ['subforum=ovl-n140 sort=new', 'subforum=r/ovl-n140 sort=new', 'subforum=/r/ovl-n140 sort=new', 'subforum=ovlb-n90', 'subforum=r/ovlb-n90', 'subforum=ovlc-n60 sort=new'];
    writeFileSync(path, lines.map((line) => `${line}\n`).join(''));
    const one = join(tempDir(), 'one-process');
    try {
      const single = await runCli(['export', 'forum/subforum', 'trim=true', '--inputs', path, '--dataset', one], context.env);
      expect(single.code, single.stderr).toBe(0);
      expect((await enqueue(context, path)).code).toBe(0);
      for (let index = 0; index < 3; index++) startWorker(context);
      await until(context.url, (current) => current.state === 'finished');
      const expected = 140 + 90 + 60;
      expect(await datasetCounts(one)).toEqual({ rows: expected, ids: expected });
      expect(await datasetCounts(context.dir)).toEqual({ rows: expected, ids: expected });
      // The fetch time is when each machine fetched a post: every other column is the same.
      const rows = (dir: string) => `SELECT * EXCLUDE (_fetched_at) FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
      const [{ onlyOne, onlyWorkers }] = await query(
        `SELECT (SELECT count(*) FROM (${rows(one)} EXCEPT ${rows(context.dir)})) AS onlyOne, (SELECT count(*) FROM (${rows(context.dir)} EXCEPT ${rows(one)})) AS onlyWorkers`,
      );
      expect([onlyOne, onlyWorkers]).toEqual([0, 0]);
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('status --json gives the walks, credits and records of the run', async () => {
    const result = await runCli(['status', '--queue', drained.url, '--json'], process.env);
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout) as { runs: RunStatus[] };
    expect(status.runs[0]).toMatchObject({
      op: 'forum/subforum',
      run: 1,
      state: 'finished',
      walks: { total: 12, done: 12, running: 0, waiting: 0, parked: 0, failed: 0 },
      credits: { spent: pagesOf(COUNTS), budget: null },
      records: sum(COUNTS),
      pages: pagesOf(COUNTS),
      failures: [],
    });
  });

  it('the API key is in no Redis key or value and in no dataset file', async () => {
    await expectKeyNowhere(drained.url, drained.dir);
  });

  it('holds one budget exactly across workers, stops them cleanly, and a raised budget finishes the run without buying a page twice', async () => {
    const context = await setup(10);
    const counts = [200, 150, 175, 125, 100, 225];
    const inputs = inputsFile(counts, 'budget');
    try {
      expect((await enqueue(context, inputs, ['--max-credits', '20'])).code).toBe(0);
      for (let index = 0; index < 3; index++) startWorker(context);
      const spent = await until(context.url, (current) => current.budgetSpent && current.walks.running === 0 && current.walks.parked + current.walks.done === current.walks.total);
      expect(spent.credits).toEqual({ spent: 20, budget: 20 });
      expect(context.charged()).toBeLessThanOrEqual(20);
      expect(context.workers.every((child) => child.exitCode === null)).toBe(true);
      const raised = await enqueue(context, inputs, ['--max-credits', '1000']);
      expect(raised.stderr).toMatch(/run 1 is still active: joined it; 0 walks enqueued/);
      const done = await until(context.url, (current) => current.state === 'finished');
      expect(done.walks.done).toBe(counts.length);
      expect(context.charged()).toBe(pagesOf(counts));
      expect(await datasetCounts(context.dir)).toEqual({ rows: sum(counts), ids: sum(counts) });
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('a walk whose worker is killed -9 is continued by another worker from its last staged page', async () => {
    // 2,000 posts, 80 pages a page at a time: slow enough to be killed mid-walk.
    const context = await setup(25);
    try {
      expect((await enqueue(context, inputsFile([2000], 'kill'))).code).toBe(0);
      const first = startWorker(context);
      await until(context.url, (current) => current.walks.running === 1 && context.charged() >= 20);
      first.child.kill('SIGKILL');
      await first.done;
      const beforeTakeover = context.charged();
      expect(beforeTakeover).toBeLessThan(80);
      startWorker(context);
      const done = await until(context.url, (current) => current.state === 'finished');
      expect(done.walks.done).toBe(1);
      // A page walk: one request in flight at the kill, bought again at most once.
      expect(context.charged()).toBeLessThanOrEqual(80 + 1);
      expect(await datasetCounts(context.dir)).toEqual({ rows: 2000, ids: 2000 });
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('walks handed to a publisher killed -9 (its publish lease running out) are published by their own jobs, and the run finishes only then', async () => {
    const context = await setup();
    const redis = new Redis(context.url);
    const COUNTS_HANDED = [90, 40, 65, 30];
    try {
      expect((await enqueue(context, inputsFile(COUNTS_HANDED, 'handed'))).code).toBe(0);
      // A publisher holding the dataset's publish lease while every page is bought, then killed: its lease runs out 3 s later.
      const lock = join(context.dir, '_dataset', 'forum__subforum', 'lock');
      const hold = () => redis.set(lockKey(lock), 'a-killed-worker#1', 'PX', 3_000);
      await hold();
      const renewal = setInterval(() => void hold(), 500);
      startWorker(context);
      try {
        await until(context.url, () => context.charged() === pagesOf(COUNTS_HANDED));
      } finally {
        clearInterval(renewal);
      }
      // Bought and staged, not yet in the dataset: the run is not finished.
      expect((await run(context.url)).state).toBe('active');
      const finishedRun = await until(context.url, (current) => current.state === 'finished');
      expect(finishedRun.walks).toMatchObject({ total: 4, done: 4, failed: 0 });
      expect(finishedRun.records).toBe(sum(COUNTS_HANDED));
      expect(await datasetCounts(context.dir)).toEqual({ rows: sum(COUNTS_HANDED), ids: sum(COUNTS_HANDED) });
      expect(context.charged()).toBe(pagesOf(COUNTS_HANDED));
    } finally {
      redis.disconnect();
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('a job taken again after its walk ended (its lock ran out while its worker finished) buys nothing and is counted once', async () => {
    const context = await setup();
    const queue = new Queue(QUEUE_NAME, { connection: new Redis(context.url, { maxRetriesPerRequest: null }), prefix: PREFIX });
    try {
      expect((await enqueue(context, inputsFile([50], 'again'))).code).toBe(0);
      startWorker(context);
      await until(context.url, (current) => current.state === 'finished');
      expect(context.charged()).toBe(2);
      // The run is finished once its walk is published; BullMQ marks the job completed a moment later.
      const completed = async () => (await queue.getJobCounts('completed')).completed === 1;
      while (!(await completed())) await new Promise((resolve) => setTimeout(resolve, 100));
      const [job] = await queue.getJobs(['completed']);
      // As BullMQ does with a job whose lock ran out: back to waiting, for any worker to take.
      await job.retry('completed');
      while (!(await completed())) await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await queue.getJob(job.id!))?.returnvalue).toEqual({ skipped: 'the walk already ended in this run' });
      expect(context.charged()).toBe(2);
      expect((await run(context.url)).walks).toMatchObject({ total: 1, done: 1 });
      expect(await datasetCounts(context.dir)).toEqual({ rows: 50, ids: 50 });
    } finally {
      await stopWorkers(context.workers);
      await queue.close();
      await context.service.close();
    }
  });

  it('--rate holds the request attempts of a run to N a second across every worker', async () => {
    const context = await setup();
    const counts = [250, 250, 250];
    try {
      expect((await enqueue(context, inputsFile(counts, 'rate'), ['--rate', '10'])).code).toBe(0);
      const started = Date.now();
      for (let index = 0; index < 3; index++) startWorker(context);
      const done = await until(context.url, (current) => current.state === 'finished');
      // 30 attempts at 10 a second take at least 2 s (the first 10 go at once).
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
      expect(done.rate).toBe(10);
      expect(context.charged()).toBe(pagesOf(counts));
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('a worker whose key is refused exits 3, names itself in status, and leaves its walks to the others', async () => {
    const context = await setup();
    try {
      expect((await enqueue(context, inputsFile([50, 75], 'refused'))).code).toBe(0);
      const bad = startWorker(context, { ...context.env, SOCIALSTREAM_API_KEY: 'sk_live_not_a_key_of_this_account' });
      const ended = await bad.done;
      expect(ended.code, ended.stderr).toBe(3);
      expect(ended.stderr).toMatch(/API key was refused/);
      const status = await queueStatus(context.url);
      expect(status.stoppedWorkers).toHaveLength(1);
      expect(status.stoppedWorkers[0].error).toMatch(/API key was refused/);
      expect(status.runs[0].walks).toMatchObject({ failed: 0, done: 0 });
      startWorker(context);
      const done = await until(context.url, (current) => current.state === 'finished');
      expect(done.walks).toMatchObject({ done: 2, failed: 0 });
      expect(await datasetCounts(context.dir)).toEqual({ rows: 125, ids: 125 });
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });
});

describe('socialstream export --queue refuses what workers cannot honour, before it connects', () => {
  it.each([
    [['--out', 'x.ndjson', '--queue', 'redis://127.0.0.1:1/0'], /--queue fills a dataset/],
    [['--dataset', 'd', '--queue', 'redis://127.0.0.1:1/0', '--max-pages', '3'], /--max-pages does not go with --queue/],
    [['--dataset', 'd', '--queue', 'redis://127.0.0.1:1/0', '--resume'], /--resume does not go with --queue/],
    [['--dataset', 'd', '--rate', '3'], /--rate is a shared request rate: it goes with --queue/],
  ])('%j exits 2', async (flags, message) => {
    const result = await runCli(['export', 'forum/subforum', 'subforum=x', ...flags], process.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('a parameter holding the API key is refused before anything goes to Redis', async () => {
    const result = await runCli(['export', 'forum/subforum', `subforum=${KEY}`, '--dataset', 'd', '--queue', 'redis://127.0.0.1:1/0'], { ...process.env, SOCIALSTREAM_API_KEY: KEY });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/a parameter holds the API key/);
    expect(result.stderr).not.toContain(KEY);
  });

  it('a queue address that is not redis:// is refused', async () => {
    const result = await runCli(['status', '--queue', 'http://127.0.0.1:6379/0'], process.env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/--queue must start with redis:\/\/ or rediss:\/\//);
  });
});

describe.skipIf(!haveRedis)('a Redis restarted mid-run', () => {
  it('loses no walk and no reservation when Redis is shut down (AOF on) and started again while workers run', async () => {
    const redis = await startAofRedis();
    const service = await startSandbox({ port: 0, latencyMs: 20, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
    const context = { url: redis.url, service, env: sandboxEnv(service, KEY), dir: tempDir(), workers: [] as ChildProcess[] };
    const counts = [300, 250, 275, 200];
    try {
      expect((await enqueue(context, inputsFile(counts, 'restart'))).code).toBe(0);
      // A lease longer than the restart: the walks stay with their workers.
      for (let index = 0; index < 2; index++) startWorker(context, context.env, 5_000);
      await until(context.url, () => (service.requests.charged[KEY] ?? 0) >= 10);
      await redis.restart();
      const done = await until(context.url, (current) => current.state === 'finished', 90_000);
      const charged = service.requests.charged[KEY] ?? 0;
      expect(done.walks).toMatchObject({ total: 4, done: 4, failed: 0 });
      // Every charged request was reserved, and none was lost with the restart.
      expect(done.credits.spent).toBeGreaterThanOrEqual(charged);
      expect(charged).toBe(pagesOf(counts));
      expect(await datasetCounts(context.dir)).toEqual({ rows: sum(counts), ids: sum(counts) });
    } finally {
      await stopWorkers(context.workers);
      await service.close();
      redis.stop();
    }
  });
});

describe.skipIf(!haveRedis)('the whole of it in one run', () => {
  it('three workers over 60 walks with faults, two kill -9s, a spent and raised budget and a Redis restart write every record once and buy no answered page twice', { timeout: 300_000 }, async () => {
    const redis = await startAofRedis();
    const service = await startSandbox({ port: 0, latencyMs: 40, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
    // 500s, 502 pages and reset sockets: none charged, all retried by the client.
    service.setFaults({ rate: 0.05, html: 0.03, reset: 0.03 });
    const context = { url: redis.url, service, env: sandboxEnv(service, KEY), dir: tempDir(), workers: [] as ChildProcess[] };
    const charged = (): number => service.requests.charged[KEY] ?? 0;
    const counts = Array.from({ length: 60 }, (_, index) => 25 + ((index * 37) % 130));
    const pages = pagesOf(counts);
    const budget = Math.floor(pages / 3);
    const inputs = inputsFile(counts, 'whole');
    // A lease longer than the Redis restart (the walks stay with their workers, as in the test of the restart alone), short enough that a killed worker's walks are taken over in seconds.
    const lease = 5_000;
    const [firstKill, secondKill] = randomDelays(20261125, 2, 600);
    /** Kills a worker -9 (which one, by the delay) at a random point once `charged` pages are bought, and starts another in its place. */
    const killOne = async (bought: number, delay: number): Promise<void> => {
      await until(context.url, () => charged() >= bought);
      await new Promise((resolve) => setTimeout(resolve, delay));
      const living = context.workers.filter((child) => child.exitCode === null && child.signalCode === null);
      const victim = living[delay % living.length];
      const gone = new Promise((resolve) => victim.once('close', resolve));
      victim.kill('SIGKILL');
      await gone;
      startWorker(context, context.env, lease);
    };
    try {
      expect((await enqueue(context, inputs, ['--max-credits', String(budget)])).code).toBe(0);
      for (let index = 0; index < 3; index++) startWorker(context, context.env, lease);
      await killOne(budget / 4, firstKill);

      // The budget is smaller than the work: every walk ends parked or done, no worker stops or fails a walk.
      const spent = await until(context.url, (current) => current.budgetSpent && current.walks.running === 0 && current.walks.parked + current.walks.done === 60, 120_000);
      expect(spent.credits.spent).toBeLessThanOrEqual(budget);
      expect(charged()).toBeLessThanOrEqual(budget);
      expect(spent.walks.failed).toBe(0);
      expect(spent.walks.parked).toBeGreaterThan(0);
      expect(context.workers.filter((child) => child.exitCode === null && child.signalCode === null)).toHaveLength(3);

      // Raised: the parked walks go on from their checkpoints; a worker is killed again, and Redis restarted, mid-run.
      const raised = await enqueue(context, inputs, ['--max-credits', String(pages * 2)]);
      expect(raised.stderr).toMatch(/run 1 is still active: joined it; 0 walks enqueued/);
      await killOne(budget + 10, secondKill);
      const beforeRestart = await until(context.url, () => charged() >= budget + (pages - budget) / 2, 120_000);
      expect(beforeRestart.state).toBe('active');
      await redis.restart();

      const done = await until(context.url, (current) => current.state === 'finished', 120_000);
      expect(done.walks).toMatchObject({ total: 60, done: 60, failed: 0 });
      // No answered page bought twice: each kill may lose the requests in flight, a page for each of the worker's 2 walks.
      expect(charged()).toBeGreaterThanOrEqual(pages);
      expect(charged()).toBeLessThanOrEqual(pages + 2 * 2);
      expect(charged()).toBeLessThanOrEqual(pages * 2);
      // No reservation lost with the restart: every charged request was reserved.
      expect(done.credits.spent).toBeGreaterThanOrEqual(charged());
      expect(await datasetCounts(context.dir)).toEqual({ rows: sum(counts), ids: sum(counts) });
      await expectKeyNowhere(context.url, context.dir);
    } finally {
      await stopWorkers(context.workers);
      await service.close();
      redis.stop();
    }
  });
});

describe.skipIf(!haveRedis)('the Redis lease locks of queue workers', () => {
  it('refuse a second writer while the lease lives, give a higher fencing token after, and tell a holder that lost its lease', async () => {
    const redis = new Redis(redisServer.nextUrl());
    const lost: string[] = [];
    const first = new RedisLocks(redis, 'worker-a', 300, (path) => lost.push(`a ${path}`));
    const second = new RedisLocks(redis, 'worker-b', 300, (path) => lost.push(`b ${path}`));
    try {
      const held = await first.output('/data', '/data/_dataset/x/writer-walk-1.lock');
      await expect(second.output('/data', '/data/_dataset/x/writer-walk-1.lock')).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining('worker-a') as string });
      // Renewed while held: still refused well after one lease.
      await new Promise((resolve) => setTimeout(resolve, 700));
      await expect(second.take('/data/_dataset/x/writer-walk-1.lock')).resolves.toBeUndefined();
      await held.release();
      const taken = await second.take('/data/_dataset/x/writer-walk-1.lock');
      expect(taken?.token).toBe(2);
      // A stalled holder's lease is taken over: its next renewal finds the lock another's, and says so.
      const stalled = await first.take('/data/_dataset/x/lock');
      await redis.set(lockKey('/data/_dataset/x/lock'), 'worker-c#99', 'PX', 5_000);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(lost).toEqual(['a /data/_dataset/x/lock']);
      await stalled?.release();
      await taken?.release();
    } finally {
      redis.disconnect();
    }
  });

  it('take the free locks of a publish pass’s partitions in one round trip, renew them together, fence them together, and let go only of their own', async () => {
    const redis = new Redis(redisServer.nextUrl());
    const lost: string[] = [];
    const first = new RedisLocks(redis, 'worker-a', 300, (path) => lost.push(`a ${path}`));
    const second = new RedisLocks(redis, 'worker-b', 300, (path) => lost.push(`b ${path}`));
    const partition = (month: string) => `/data/_dataset/x/locks/partition-${month}`;
    try {
      const a = await first.tryHold([partition('2025-01'), partition('2025-02')]);
      expect(a.taken).toEqual([true, true]);
      // Renewed together: still held well after one lease, so the other worker takes only what is free.
      await new Promise((resolve) => setTimeout(resolve, 700));
      const b = await second.tryHold([partition('2025-02'), partition('2025-03')]);
      expect(b.taken).toEqual([false, true]);
      expect(await a.fence()).toBe(true);
      expect(await b.fence()).toBe(true);
      // Letting go leaves the other worker's lock alone.
      await a.release();
      expect(await redis.get(lockKey(partition('2025-03')))).toMatch(/^worker-b#/);
      expect(await redis.get(lockKey(partition('2025-01')))).toBeNull();
      // A lease taken over: the fence says no, and the next renewal tells the holder.
      await redis.set(lockKey(partition('2025-03')), 'worker-c#99', 'PX', 5_000);
      expect(await b.fence()).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(lost).toEqual([`b ${partition('2025-03')}`]);
      await b.release();
      expect(await redis.get(lockKey(partition('2025-03')))).toBe('worker-c#99');
    } finally {
      redis.disconnect();
    }
  });

  it('tell a publish whether its lease is still its own (its fence), and let go without taking another holder’s lock', async () => {
    const redis = new Redis(redisServer.nextUrl());
    const locks = new RedisLocks(redis, 'worker-a', 5_000, () => undefined);
    try {
      for (const [how, path] of [
        ['publish', '/data/_dataset/y/lock'],
        ['tryPublish', '/data/_dataset/z/lock'],
      ] as const) {
        const body = async (fence: () => Promise<boolean>): Promise<boolean[]> => {
          const before = await fence();
          // Another worker took the lock after this holder's lease ran out.
          await redis.set(lockKey(path), 'worker-b#7', 'PX', 5_000);
          return [before, await fence()];
        };
        const answers = how === 'publish' ? await locks.publish(path, body) : (await locks.tryPublish(path, body))?.value;
        expect(answers, how).toEqual([true, false]);
        expect(await redis.get(lockKey(path)), how).toBe('worker-b#7');
      }
    } finally {
      redis.disconnect();
    }
  });

  it('answer a publish’s fence no when Redis says nothing for a whole lease, instead of waiting for it', async () => {
    const own = await freePort();
    const server = await spawnRedis(own, tempDir());
    const redis = new Redis(`redis://127.0.0.1:${own}/0`, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    const locks = new RedisLocks(redis, 'worker-a', 400, () => undefined);
    try {
      const answer = await locks.publish('/data/_dataset/silent/lock', async (fence) => {
        // Redis stops answering (a stopped process keeps its socket open: no error, no reply).
        server.kill('SIGSTOP');
        const started = Date.now();
        try {
          return { held: await fence(), ms: Date.now() - started };
        } finally {
          server.kill('SIGCONT');
        }
      });
      expect(answer.held).toBe(false);
      expect(answer.ms).toBeGreaterThanOrEqual(350);
      expect(answer.ms).toBeLessThan(5_000);
    } finally {
      redis.disconnect();
      server.kill('SIGKILL');
    }
  });
});

/** A redis-server of the test's own with AOF on (`appendfsync everysec`), to be shut down and started again mid-run. */
async function startAofRedis(): Promise<{ url: string; restart(): Promise<void>; stop(): void }> {
  const own = await freePort();
  const dir = tempDir();
  const start = (): Promise<ChildProcess> => spawnRedis(own, dir, ['--appendonly', 'yes', '--appendfsync', 'everysec']);
  let server = await start();
  const url = `redis://127.0.0.1:${own}/0`;
  return {
    url,
    restart: async () => {
      const down = new Promise((resolve) => server.once('exit', resolve));
      const admin = new Redis(url, { retryStrategy: () => null });
      admin.on('error', () => undefined);
      // SHUTDOWN writes the AOF out; the workers' connections wait through the gap.
      await admin.call('SHUTDOWN').catch(() => undefined);
      admin.disconnect();
      await down;
      await new Promise((resolve) => setTimeout(resolve, 500));
      server = await start();
    },
    stop: () => {
      server.kill('SIGKILL');
    },
  };
}

/** Asserts that no Redis key or value, and no file under `dir`, holds the API key. */
async function expectKeyNowhere(url: string, dir: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const names = await redis.keys('*');
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) {
      expect(name).not.toContain(KEY);
      const dump = await redis.dumpBuffer(name);
      expect(dump?.includes(KEY), name).toBe(false);
    }
  } finally {
    redis.disconnect();
  }
  for (const file of filesUnder(dir)) expect(readFileSync(file).includes(KEY), file).toBe(false);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}
