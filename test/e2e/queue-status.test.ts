/**
 * Queue status that adds up, over a real `redis-server` on a loopback port of its own, the sandbox
 * over loopback and workers as real CLI processes: a walk's records and pages are counted once
 * whichever workers staged and published them, a walk is failed only when its records are not in
 * the dataset, and a run is `finished` only when no walk is running. Without `redis-server` on this
 * machine the suite is skipped, saying so (CI installs it, and there a missing binary fails).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { localPaths } from '../../src/dataset/store.ts';
import { PREFIX, QUEUE_NAME } from '../../src/queue/connection.ts';
import { queueStatus, type RunStatus } from '../../src/queue/index.ts';
import { lockKey } from '../../src/queue/lease-lock.ts';
import type { WalkJob } from '../../src/queue/runs.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { CLI, finished, runCli, sandboxEnv, tempDir, type CliResult } from '../cli/helpers.ts';
import { datasetCounts } from './dataset-counts.ts';
import { redisForSuite, redisServerHere } from './redis-server.ts';
import { stopWorkers } from './workers.ts';

const KEY = 'sk_live_sandbox_queue_status_secret';
const haveRedis = redisServerHere('queue-status');

/** Preloaded into a worker: it kills itself -9 once a publish has written its walk's receipt. */
const KILLED_AT_RECEIPT = resolve(import.meta.dirname, 'fixtures/worker-killed-at-receipt.ts');
const LEASE_MS = 1_000;

const redisServer = redisForSuite(haveRedis);

interface Context {
  url: string;
  service: Sandbox;
  env: NodeJS.ProcessEnv;
  dir: string;
  workers: ChildProcess[];
}

async function setup(): Promise<Context> {
  const service = await startSandbox({ port: 0, latencyMs: 5, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
  return { url: redisServer.nextUrl(), service, env: sandboxEnv(service, KEY), dir: tempDir(), workers: [] };
}

/** A worker as a CLI process, with a short lease; `killedAtReceipt` preloads the fixture that kills it -9 once its walk's receipt is written. */
function startWorker(context: Context, leaseMs = LEASE_MS, killedAtReceipt = false): { child: ChildProcess; done: Promise<CliResult> } {
  const preload = killedAtReceipt ? ['--import', KILLED_AT_RECEIPT] : [];
  const [, tsx, main] = CLI;
  const args = ['--import', tsx, ...preload, main, 'worker', '--queue', context.url, '--concurrency', '1', '--lease', String(leaseMs), '--park', '500'];
  const child = spawn(process.execPath, args, { env: context.env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (process.env.DEBUG_E2E) child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[worker ${child.pid}] ${chunk.toString()}`));
  context.workers.push(child);
  return { child, done: finished(child) };
}


async function enqueue(context: Context, counts: number[], tag: string): Promise<void> {
  const inputs = join(tempDir(), 'inputs.txt');
  writeFileSync(inputs, counts.map((count, index) => `subforum=${tag}${index}-n${count}\n`).join(''));
  const result = await runCli(['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--dataset', context.dir, '--queue', context.url], context.env);
  expect(result.code, result.stderr).toBe(0);
}

async function run(url: string): Promise<RunStatus> {
  const status = await queueStatus(url);
  expect(status.runs).toHaveLength(1);
  return status.runs[0];
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 50));
  }
}

const finishedRun = (url: string): Promise<RunStatus> => until(async () => ((await run(url)).state === 'finished' ? run(url) : undefined), 'the run to finish');

describe.skipIf(!haveRedis)('queue status that adds up', () => {
  it('a walk whose worker is killed -9 once its pages are published is counted once, by the worker that takes it over, as many records and pages as the dataset holds of it', async () => {
    const context = await setup();
    try {
      await enqueue(context, [120], 'killed');
      const first = startWorker(context, LEASE_MS, true);
      expect((await first.done).signal).toBe('SIGKILL');
      // Killed with the walk's rows in the dataset and nothing said to Redis.
      expect(await datasetCounts(context.dir)).toEqual({ rows: 120, ids: 120 });
      expect((await run(context.url)).walks.done).toBe(0);
      startWorker(context);
      const done = await finishedRun(context.url);
      expect(done.walks).toMatchObject({ total: 1, done: 1, failed: 0 });
      // Once: as many records as the dataset's rows of the walk, and its 5 pages.
      expect(done.records).toBe((await datasetCounts(context.dir)).rows);
      expect({ records: done.records, pages: done.pages }).toEqual({ records: 120, pages: 5 });
      // The takeover bought nothing: every page was bought once.
      expect(context.service.requests.charged[KEY]).toBe(5);
    } finally {
      await stopWorkers(context.workers);
      await context.service.close();
    }
  });

  it('a worker that stalls past its leases and wakes to publish its walk leaves the walk done, not failed, to the worker that took it over', async () => {
    const context = await setup();
    const redis = new Redis(context.url, { maxRetriesPerRequest: null });
    const queue = new Queue<WalkJob>(QUEUE_NAME, { connection: redis, prefix: PREFIX });
    // The dataset's publish lock, held as by a publisher elsewhere: the walk's pages wait for it, handed off.
    const publishLock = lockKey(join(context.dir, '_dataset', 'forum__subforum', 'lock'));
    const hold = () => redis.set(publishLock, 'a-publisher-elsewhere#1', 'PX', 3_000);
    await hold();
    const renewal = setInterval(() => void hold(), 500);
    try {
      await enqueue(context, [90], 'stalled');
      const [job] = await queue.getJobs(['waiting']);
      const paths = localPaths(context.dir, 'forum/subforum', `walk-${job.data.walk}`);
      const writerLock = lockKey(join(paths.meta, `writer-${paths.writer}.lock`));
      const stalled = startWorker(context);
      // Its pages bought and handed off, its job back: it waits for their publish, holding the walk's leases.
      await until(async () => ((await queue.getJob(job.id!))?.data.handedOff !== undefined && (await redis.get(writerLock)) !== null ? true : undefined), 'the walk to wait for its publish');
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 300));
      stalled.child.kill('SIGSTOP');
      // Another worker takes the walk over once its leases run out, and waits for the same publish.
      const other = startWorker(context, 3_000);
      await until(async () => ((await redis.get(writerLock))?.includes(`/${other.child.pid}/`) === true ? true : undefined), 'the other worker to take the walk over');
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 300));
      other.child.kill('SIGSTOP');
      // The publisher elsewhere lets go and the stalled worker wakes: it publishes the walk's pages itself.
      clearInterval(renewal);
      await redis.del(publishLock);
      stalled.child.kill('SIGCONT');
      await until(() => (existsSync(paths.file(paths.names.commit())) || existsSync(paths.file(paths.names.receipt())) ? undefined : true), 'the walk to be published');
      expect(await datasetCounts(context.dir)).toEqual({ rows: 90, ids: 90 });
      other.child.kill('SIGCONT');
      const done = await finishedRun(context.url);
      // Both have had their say.
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 2 * LEASE_MS));
      const after = await run(context.url);
      expect(after.failures).toEqual([]);
      expect(after.walks).toMatchObject({ total: 1, done: 1, failed: 0, running: 0 });
      expect({ records: after.records, pages: after.pages }).toEqual({ records: 90, pages: 4 });
      expect(after).toEqual(done);
    } finally {
      clearInterval(renewal);
      await stopWorkers(context.workers);
      await queue.close();
      redis.disconnect();
      await context.service.close();
    }
  });

  it('a run is not finished while a walk is running: a job of an ended walk that a worker holds again is not a walk running', async () => {
    const context = await setup();
    const connection = new Redis(context.url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAME, { connection, prefix: PREFIX });
    const holder = new Worker(QUEUE_NAME, null, { connection, prefix: PREFIX, lockDuration: 30_000 });
    try {
      await enqueue(context, [50], 'again');
      const worker = startWorker(context);
      await finishedRun(context.url);
      // The run is finished once its walk is published; BullMQ marks the job completed a moment later.
      while ((await queue.getJobCounts('completed')).completed !== 1) await new Promise((resolve) => setTimeout(resolve, 100));
      await stopWorkers([worker.child]);
      // As BullMQ hands out a job whose lock ran out while its worker finished it: active again, its walk ended.
      const [job] = await queue.getJobs(['completed']);
      await job.retry('completed');
      const taken = await holder.getNextJob('a-worker-token');
      expect(taken?.id).toBe(job.id);
      const status = await run(context.url);
      expect(status.state).toBe('finished');
      expect(status.walks).toMatchObject({ total: 1, done: 1, running: 0, waiting: 0 });
    } finally {
      await stopWorkers(context.workers);
      await holder.close();
      await queue.close();
      await context.service.close();
    }
  });
});
