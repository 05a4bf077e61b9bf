/**
 * `runWorker`: takes walks from the queue and runs each through the export engine, into the dataset
 * the job names, until its signal aborts or its key is refused. Any number of workers, on any
 * number of machines, share one queue, one budget per run, and one dataset.
 *
 * - **A walk is a dataset writer of its own** (`walk-<walkName>`: its own staging and lock), publishing
 *   into the dataset's bucket parts with every walk that finishes at the same moment on any worker
 *   (group commit, README § 8). A worker that dies leaves the walk's pages and checkpoint staged on DIR;
 *   its job's lease (BullMQ's job lock, renewed while the worker lives) expires, the job goes back to
 *   the queue, and whichever worker takes it resumes the walk from its last staged page: no answered
 *   page is bought twice. BullMQ would fail a job whose worker died `maxStalledCount` times; here a
 *   walk survives any number of deaths. The walk's writer lock and the dataset's publish lock are
 *   Redis leases too (`RedisLocks`), not pid files, which mean nothing across machines; a dataset
 *   written so refuses writers that do not take them.
 * - **The budget** is a gate before every attempt (`BudgetGate`). A spent budget ends the walk
 *   cleanly (what it staged is published, its checkpoint kept) and parks its job; raising the
 *   budget (enqueueing the run again) takes the parked walks again at once.
 * - **The key stays here.** Each worker reads its own (`SOCIALSTREAM_API_KEY`, or `apiKey`); jobs,
 *   Redis and the dataset never hold it. A key that is missing stops the worker before it takes a
 *   walk; one refused (401) or out of credits (402) stops it after putting its walks back for the
 *   others, with the reason recorded for `status`: one bad machine never fails a run, and never
 *   retries in a loop.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { createClient } from '../client.ts';
import { AuthError, InsufficientCreditsError, LockedError } from '../errors.ts';
import { exportTo } from '../export/engine.ts';
import { counted } from '../export/progress.ts';
import type { ExportSummary } from '../export/types.ts';
import type { OperationId } from '../operations/table.ts';
import { BudgetGate } from './budget.ts';
import { shownUrl } from './address.ts';
import { connectQueue, PREFIX, QUEUE_NAME } from './connection.ts';
import { RedisLocks } from './lease-lock.ts';
import { keys, walkOutlook, walkStopped, type WalkJob } from './runs.ts';

export interface WorkerOptions {
  /** `redis://HOST:PORT/DB`. */
  queue: string;
  /** Walks at once. Default 4. */
  concurrency?: number;
  /**
   * How long a walk's lease lasts without renewal, in ms (renewed every half of it while the worker
   * lives): a dead worker's walk is taken over after about this plus as long again. Default 15,000.
   */
  leaseMs?: number;
  /** How long a walk a spent budget parked waits before a worker looks at it again, in ms. Default 30,000. */
  parkMs?: number;
  /** Default: `SOCIALSTREAM_API_KEY`. */
  apiKey?: string;
  /** Default: `SOCIALSTREAM_BASE_URL`. */
  baseUrl?: string;
  /** Aborting stops the worker: its walks stop cleanly and go back to the queue. */
  signal?: AbortSignal;
  /** One line per event worth telling (a walk done, parked, failed; Redis away). Default: none. */
  log?: (line: string) => void;
}

export interface WorkerOutcome {
  id: string;
  /** Walks this worker finished. */
  walks: number;
  /** Why it stopped: its signal, or its key (`error` says how). */
  stoppedBy: 'signal' | 'key';
  error?: AuthError | InsufficientCreditsError;
}

/**
 * Takes walks until `signal` aborts (or the key is refused), then resolves once its walks are back in
 * the queue or done. While Redis cannot be reached it waits, trying again every 5 s; an address that
 * cannot work (not Redis, a refused password, a database the server lacks, a TLS mismatch)
 * throws a `QueueError` subclass before any walk is taken.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerOutcome> {
  const { queue: url, concurrency = 4, leaseMs = 15_000, parkMs = 30_000, log = () => undefined } = options;
  for (const [name, value] of [
    ['concurrency', concurrency],
    ['leaseMs', leaseMs],
    ['parkMs', parkMs],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer, got ${String(value)}`);
  }
  const apiKey = options.apiKey ?? process.env.SOCIALSTREAM_API_KEY;
  const baseUrl = options.baseUrl ?? process.env.SOCIALSTREAM_BASE_URL;
  // A missing or malformed key stops the worker here, before it takes a walk.
  await createClient({ apiKey, baseUrl }).close();

  const id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const stopper = new AbortController();
  const signal = options.signal === undefined ? stopper.signal : AbortSignal.any([options.signal, stopper.signal]);
  let redis: Redis;
  try {
    // Waits while Redis cannot be reached (the signal ends the wait); an address that cannot work throws.
    redis = await connectQueue(url, { persistent: true, signal, log });
  } catch (error) {
    if (signal.aborted) return { id, walks: 0, stoppedBy: 'signal' };
    throw error;
  }
  let stopError: AuthError | InsufficientCreditsError | undefined;
  let finished = 0;
  const report = (state: string, error?: string): Promise<unknown> =>
    redis.hset(keys.workers, id, JSON.stringify({ host: hostname(), pid: process.pid, state, ...(error === undefined ? {} : { error }), at: new Date().toISOString() })).catch(() => undefined);
  const stop = (error: AuthError | InsufficientCreditsError): void => {
    stopError ??= error;
    stopper.abort(error);
  };

  const processor = async (job: Job<WalkJob>, token?: string): Promise<unknown> => {
    const walk = job.data;
    const label = `walk ${walk.walk} (${Object.entries(walk.params).map(([name, value]) => `${name}=${value}`).join(' ')})`;
    const back = async (): Promise<never> => {
      await job.moveToWait(token);
      throw new WaitingError();
    };
    const park = async (ms: number): Promise<never> => {
      await job.moveToDelayed(Date.now() + ms, token);
      throw new DelayedError();
    };
    const outlook = await walkOutlook(redis, walk);
    if (!outlook.current) return { skipped: 'a later run of its export has started' };
    if (outlook.ended) {
      log(`${label}: already ended in this run (its job was taken again after its lease ran out); nothing to do`);
      return { skipped: 'the walk already ended in this run' };
    }
    if (signal.aborted) return back();
    if (outlook.budgetSpent) {
      log(`${label}: the run's budget is spent; parked until it is raised`);
      return park(parkMs);
    }
    // Ends this walk alone: its writer lock was taken over (this worker stalled past its lease).
    const lost = new AbortController();
    const locks = new RedisLocks(redis, id, leaseMs, (path) => {
      log(`${label}: lost the lock ${path} to another worker; stopping this walk`);
      lost.abort(new Error('lock lost'));
    });
    const walkSignal = AbortSignal.any([signal, lost.signal]);
    const client = createClient({ apiKey, baseUrl, maxConcurrentRequests: Math.max(8, walk.pageConcurrency ?? 16) });
    const gate = new BudgetGate(redis, walk);
    const refunds = client.events$.subscribe((event) => gate.refund(event));
    let summary: ExportSummary;
    try {
      summary = await exportTo([client.stream(walk.op as OperationId, walk.params)], {
        dataset: walk.dataset,
        writer: `walk-${walk.walk}`,
        // A job handed out again after its walk published (its worker killed before it could say so in Redis) buys nothing.
        runId: `${walk.exportId}:${walk.run}`,
        resume: true,
        concurrency: 1,
        gates: [gate],
        locks,
        signal: walkSignal,
        ...(walk.partition === undefined ? {} : { partition: walk.partition }),
        ...(walk.schema === undefined ? {} : { schema: walk.schema }),
        ...(walk.pageConcurrency === undefined ? {} : { pageConcurrency: walk.pageConcurrency }),
      });
    } catch (error) {
      if (error instanceof AuthError || error instanceof InsufficientCreditsError) {
        stop(error);
        return back();
      }
      // The walk's earlier holder is still finishing (its lease ran out while it lived): later.
      if (error instanceof LockedError) return park(leaseMs);
      if (walkSignal.aborted) return back();
      const message = error instanceof Error ? error.message : String(error);
      await walkFailed(redis, walk, message);
      log(`${label} failed: ${message}`);
      throw new UnrecoverableError(message);
    } finally {
      refunds.unsubscribe();
      await client.close();
    }
    if (summary.complete) {
      finished++;
      const last = await walkStopped(redis, walk, summary, 'done');
      log(`${label} done: ${counted(summary.records, 'record')}, ${counted(summary.pages, 'page')}${last ? '; the run is finished' : ''}`);
      return { records: summary.records, pages: summary.pages };
    }
    if (summary.rejected.length > 0) {
      const { message } = summary.rejected[0];
      await walkFailed(redis, walk, `rejected by the service: ${message}`, summary);
      throw new UnrecoverableError(message);
    }
    await walkStopped(redis, walk, summary);
    if (summary.stoppedBy === 'balance') {
      stop(new InsufficientCreditsError('out of credits', summary.balance?.required ?? 1, summary.balance?.available ?? 0));
      return back();
    }
    if (gate.refused > 0 && !walkSignal.aborted) {
      log(`${label}: the run's budget is spent after ${counted(summary.pages, 'page')}; parked until it is raised`);
      return park(parkMs);
    }
    return back();
  };

  const worker = new Worker<WalkJob>(QUEUE_NAME, processor, {
    connection: redis,
    prefix: PREFIX,
    concurrency,
    lockDuration: leaseMs,
    stalledInterval: leaseMs,
    // A walk survives any number of worker deaths: its staging is the truth, not its attempts.
    maxStalledCount: Number.MAX_SAFE_INTEGER,
    autorun: false,
  });
  // While Redis is away its connection has said so, once: BullMQ's connections would repeat it every attempt.
  worker.on('error', (error) => {
    if (redis.status === 'ready') log(`queue: ${error.message}`);
  });
  // A worker starting on a machine clears what earlier workers there reported (a key since fixed).
  for (const [other, text] of Object.entries(await redis.hgetall(keys.workers))) {
    if ((JSON.parse(text) as { host?: string }).host === hostname()) await redis.hdel(keys.workers, other);
  }
  await report('running');
  log(`worker ${id} takes walks from ${shownUrl(url)} (${concurrency} at once)`);
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  const running = worker.run();
  await stopped;
  const outcome = (): WorkerOutcome => ({ id, walks: finished, stoppedBy: stopError === undefined ? 'signal' : 'key', ...(stopError === undefined ? {} : { error: stopError }) });
  if (redis.status !== 'ready') {
    // Redis away: nothing BullMQ or this worker would wait for can reach it, so it stops without
    // them; its walks' jobs go back to the queue when their leases run out, as after a kill.
    redis.disconnect();
    await worker.close(true);
    return outcome();
  }
  await worker.close();
  await running.catch(() => undefined);
  // A worker that stopped for its key stays listed for `status`; one stopped by its signal leaves no trace.
  if (stopError === undefined) await redis.hdel(keys.workers, id).catch(() => undefined);
  else await report('stopped', whyStopped(stopError));
  await redis.quit().catch(() => redis.disconnect());
  return outcome();
}

function whyStopped(error: AuthError | InsufficientCreditsError): string {
  return error instanceof AuthError
    ? `its API key was refused (${error.message}): set SOCIALSTREAM_API_KEY on that machine; its walks went back to the queue`
    : `its account is out of credits: buy credits for that key; its walks went back to the queue`;
}

async function walkFailed(redis: Redis, walk: WalkJob, error: string, published = { records: 0, pages: 0 }): Promise<void> {
  await redis.hset(keys.failures(walk.exportId, walk.run), walk.walk, JSON.stringify({ params: walk.params, error }));
  await walkStopped(redis, walk, published, 'failed');
}
