/**
 * `queueStatus`: what the queue's runs are doing, read from Redis alone (no dataset, no key): per
 * export its current run's walks done / running / waiting / parked (a spent budget) / failed, the
 * credits spent of its budget, records written and pages bought, each failed walk with its error;
 * and every worker that stopped for its key, by name.
 */
import { Queue } from 'bullmq';
import { PREFIX, QUEUE_NAME, withRedis } from './connection.ts';
import { keys, readRun, type WalkJob } from './runs.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';

/**
 * One queued run as `queueStatus` reads it: its walks by state, credits spent against the budget,
 * records, pages and failures.
 */
export interface RunStatus {
  exportId: string;
  op: string;
  dataset: string;
  run: number;
  state: 'active' | 'finished';
  walks: { total: number; done: number; running: number; waiting: number; parked: number; failed: number };
  credits: { spent: number; budget: number | null };
  /** The budget is set and spent: workers take none of the run's walks until it is raised. */
  budgetSpent: boolean;
  rate: number | null;
  records: number;
  pages: number;
  failures: { params: Record<string, string>; error: string }[];
  enqueued: string | null;
  finished: string | null;
}

/** A worker that stopped, and why (a refused key, no credits), as it recorded itself. */
export interface WorkerReport {
  id: string;
  host: string;
  pid: number;
  state: 'running' | 'stopped';
  error?: string;
  at: string;
}

/** What `queueStatus` reads from Redis: every run, and the workers that stopped. */
export interface QueueStatus {
  runs: RunStatus[];
  /** Workers that stopped for their key (refused, out of credits), until a worker starts again on that machine. */
  stoppedWorkers: WorkerReport[];
}

/** Options of `queueStatus`. */
export interface StatusOptions {
  /** Aborting ends the wait for Redis at once, with the signal's reason. */
  signal?: AbortSignal;
}

const STATUS_OPTIONS = { signal: true } as const satisfies KnownOptions<StatusOptions>;

/** Raises a `QueueError` subclass when Redis at `url` cannot be used (docs/queue.md). */
export async function queueStatus(url: string, options: StatusOptions = {}): Promise<QueueStatus> {
  refuseUnknownOptions(options, STATUS_OPTIONS, 'queueStatus');
  return withRedis(url, async (redis) => {
    const queue = new Queue<WalkJob>(QUEUE_NAME, { connection: redis, prefix: PREFIX });
    try {
      const active = await queue.getJobs(['active']);
      const delayed = await queue.getJobs(['delayed']);
      // A job whose walk already ended is its worker's bookkeeping (or a stalled worker's leftover), not a walk running.
      const count = (jobs: typeof active, exportId: string, run: number, ended: ReadonlySet<string>): number =>
        jobs.filter((job) => job.id?.startsWith(`${exportId}.${run}.`) === true && !ended.has(job.data.walk)).length;
      const runs: RunStatus[] = [];
      for (const exportId of (await redis.smembers(keys.exports)).sort()) {
        const about = await redis.hgetall(keys.export(exportId));
        const run = Number(about.run ?? 0);
        const counters = await readRun(redis, exportId, run);
        if (counters === undefined) continue;
        const ended = new Set(await redis.smembers(keys.ended(exportId, run)));
        const running = count(active, exportId, run, ended);
        const parked = count(delayed, exportId, run, ended);
        const failures = Object.values(await redis.hgetall(keys.failures(exportId, run))).map((text) => JSON.parse(text) as RunStatus['failures'][number]);
        const budgetSpent = counters.budget !== undefined && counters.spent >= counters.budget;
        runs.push({
          exportId,
          op: about.op ?? '?',
          dataset: about.dataset ?? '?',
          run,
          state: counters.state,
          walks: {
            total: counters.walks,
            done: counters.done,
            running,
            waiting: Math.max(0, counters.walks - counters.done - counters.failed - running - parked),
            parked,
            failed: counters.failed,
          },
          credits: { spent: counters.spent, budget: counters.budget ?? null },
          budgetSpent,
          rate: counters.rate ?? null,
          records: counters.records,
          pages: counters.pages,
          failures,
          enqueued: counters.enqueued ?? null,
          finished: counters.finished ?? null,
        });
      }
      const stoppedWorkers = Object.entries(await redis.hgetall(keys.workers))
        .map(([id, text]) => ({ id, ...(JSON.parse(text) as Omit<WorkerReport, 'id'>) }))
        .filter((worker) => worker.error !== undefined);
      return { runs, stoppedWorkers };
    } finally {
      await queue.close();
    }
  }, options.signal);
}

/** The status in a few lines, as `socialstream status` prints it. */
export function describeStatus(status: QueueStatus): string {
  if (status.runs.length === 0) return 'no exports in this queue';
  const lines: string[] = [];
  for (const run of status.runs) {
    const { walks, credits } = run;
    const budget = credits.budget === null ? `${credits.spent} credits spent (no budget)` : `${credits.spent} of ${credits.budget} credits spent`;
    lines.push(
      `${run.op} → ${run.dataset}: run ${run.run} ${run.state}; walks ${walks.done} done, ${walks.running} running, ${walks.waiting} waiting, ` +
        `${walks.parked} parked, ${walks.failed} failed of ${walks.total}; ${budget}; ${run.records} records, ${run.pages} pages`,
    );
    if (run.budgetSpent && run.state === 'active') lines.push(`  the budget is spent: workers stopped taking its walks; enqueue the run again with a higher --max-credits to continue`);
    for (const failure of run.failures) {
      lines.push(`  failed: ${Object.entries(failure.params).map(([name, value]) => `${name}=${value}`).join(' ')}: ${failure.error}`);
    }
  }
  for (const worker of status.stoppedWorkers) lines.push(`worker ${worker.id} stopped at ${worker.at}: ${worker.error}`);
  return lines.join('\n');
}
