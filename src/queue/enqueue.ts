/**
 * `enqueueExport`: puts one job per walk (parameter set) of an export into the queue, and its run's
 * budget beside them, then returns: workers (`runWorker`) do the walking. A run is one enqueue:
 * enqueueing again while it is active adds only walks it does not have (a walk's job id is its
 * name) and sets the budget and rate to the new ones (that is how a budget is raised, and the walks
 * a spent budget parked are taken again at once); enqueueing after it finished starts the next run.
 */
import { resolve } from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { checkParams } from '../operations/params.ts';
import { findOperation } from '../operations/table.ts';
import { walkName } from '../operations/walk-name.ts';
import { readSchemaFile } from '../dataset/state.ts';
import { parseLocation } from '../dataset/storage/location.ts';
import { withDatasetPaths } from '../dataset/stores.ts';
import { layoutForRun } from '../dataset/nesting.ts';
import { option, optionError } from '../export/option-message.ts';
import { checkOptions, checkOptionsFor, type ExportSettings } from '../export/options.ts';
import type { PartitionBy } from '../export/partition-by.ts';
import type { ExportOptions } from '../export/types.ts';
import type { OperationSpec } from '../operations/spec.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { PREFIX, QUEUE_NAME, withRedis } from './connection.ts';
import { QueueError } from './errors.ts';
import { exportIdOf, jobIdOf, keys, readRun, type WalkJob } from './runs.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';

/**
 * Options of `enqueueExport`: the queue's Redis address, the operation, its parameter sets, the
 * dataset, the run's budget and rate, and what its walks take.
 */
export interface EnqueueOptions {
  /** `redis://HOST:PORT/DB`. */
  queue: string;
  /** The operation, e.g. `forum/subforum`. */
  op: string;
  /** One parameter set per walk. */
  inputs: readonly Record<string, string>[];
  /** The dataset: a directory on storage every worker sees at the same path (made absolute here), or a bucket's `s3://bucket/prefix`. */
  dataset: string;
  /** The run's credit budget across every worker; absent: none (a later enqueue of the run may set one). */
  maxCredits?: number;
  /** Request attempts per second across every worker of the run; absent: no limit. */
  rate?: number;
  /** The dataset's partitioning (as `ExportOptions.partition`). */
  partition?: PartitionBy;
  /** `'evolve'` (default) or `'freeze'` (as `ExportOptions.schema`). */
  schema?: 'evolve' | 'freeze';
  /** Pages of one walk in flight at once where its rule allows. */
  pageConcurrency?: number;
  /** A new dataset's Parquet layout (as `ExportOptions.layout`); a dataset that recorded another is refused here, before any job. */
  layout?: ParquetLayout;
  /** Keep only records at or after this time (as `ExportOptions.since`). */
  since?: string | Date;
  /** Keep only records before this time (as `ExportOptions.until`). */
  until?: string | Date;
  /** Aborting ends the wait for Redis at once, with the signal's reason. */
  signal?: AbortSignal;
}

/** What `enqueueExport` did: the run it enqueued or joined, and the jobs it added. */
export interface EnqueueResult {
  exportId: string;
  run: number;
  /** A new run was started (otherwise the active one was joined). */
  started: boolean;
  /** Walks this enqueue added to the run. */
  added: number;
  /** Walks of the run in all. */
  walks: number;
  budget: number | undefined;
  rate: number | undefined;
  dataset: string;
}

const ENQUEUE_OPTIONS = {
  queue: true,
  op: true,
  inputs: true,
  dataset: true,
  maxCredits: true,
  rate: true,
  partition: true,
  schema: true,
  pageConcurrency: true,
  layout: true,
  since: true,
  until: true,
  signal: true,
} as const satisfies KnownOptions<EnqueueOptions>;

/** Raises a `QueueError` subclass when Redis at `options.queue` cannot be used (docs/queue.md). */
export async function enqueueExport(options: EnqueueOptions): Promise<EnqueueResult> {
  refuseUnknownOptions(options, ENQUEUE_OPTIONS, 'enqueueExport');
  const op = findOperation(options.op);
  if (op === undefined) throw new TypeError(`unknown operation ${options.op}`);
  if (!Array.isArray(options.inputs) || options.inputs.length === 0) throw new TypeError('inputs must hold at least one parameter set');
  const inputs: readonly Record<string, string>[] = options.inputs;
  // The scheduler's own key, when it has one, must not ride along in a parameter: jobs are readable by every worker.
  const key = process.env.SOCIALSTREAM_API_KEY?.trim();
  for (const params of inputs) {
    checkParams(op, params);
    if (key !== undefined && key.length >= 8 && Object.values(params).some((value) => value.includes(key))) {
      throw new QueueError('a parameter holds the API key (SOCIALSTREAM_API_KEY): jobs are stored in Redis, where the key must never go');
    }
  }
  const settings = checkQueuedOptions(op, options);
  // A folder is made absolute (every worker sees it at the same path); a bucket's location is kept as given.
  const dataset = parseLocation(options.dataset).kind === 'local' ? resolve(options.dataset) : options.dataset;
  // Every walk would be refused the same way: the dataset's recorded layout is checked once, here
  // (its store opened, so a bucket that cannot be used is refused before any job).
  await withDatasetPaths(dataset, op.id, 'all', async (paths) => {
    const schema = await readSchemaFile(paths);
    layoutForRun(schema, schema?.format ?? 'parquet', options.layout, paths);
  });
  const exportId = exportIdOf(op.id, dataset);
  return withRedis(options.queue, async (redis) => {
    const queue = new Queue<WalkJob>(QUEUE_NAME, { connection: redis, prefix: PREFIX });
    try {
      const { run, started } = await currentRun(redis, queue, exportId, op.id, dataset);
      const runKey = keys.run(exportId, run);
      if (options.maxCredits === undefined) await redis.hdel(runKey, 'budget');
      else await redis.hset(runKey, 'budget', options.maxCredits);
      if (options.rate === undefined) await redis.hdel(runKey, 'rate');
      else await redis.hset(runKey, 'rate', options.rate);
      const jobs: WalkJob[] = [];
      for (const params of inputs) {
        const walk = walkName(params);
        if ((await redis.sadd(keys.walks(exportId, run), walk)) === 0) continue;
        jobs.push({
          exportId,
          run,
          op: op.id,
          params: { ...params },
          walk,
          dataset,
          ...(options.partition === undefined ? {} : { partition: options.partition }),
          ...(options.schema === undefined ? {} : { schema: options.schema }),
          ...(options.pageConcurrency === undefined ? {} : { pageConcurrency: options.pageConcurrency }),
          ...(options.layout === undefined ? {} : { layout: options.layout }),
          ...(settings.since === undefined ? {} : { since: new Date(settings.since).toISOString() }),
          ...(settings.until === undefined ? {} : { until: new Date(settings.until).toISOString() }),
        });
      }
      if (jobs.length > 0) {
        await redis.hincrby(runKey, 'walks', jobs.length);
        await queue.addBulk(jobs.map((data) => ({ name: op.id, data, opts: { jobId: jobIdOf(exportId, run, data.walk), removeOnComplete: false, removeOnFail: false, attempts: 1 } })));
      }
      // Walks a spent budget parked go again now: the budget may have been raised.
      if (!started) await promoteParked(queue, exportId, run);
      const counters = await readRun(redis, exportId, run);
      return { exportId, run, started, added: jobs.length, walks: counters?.walks ?? jobs.length, budget: options.maxCredits, rate: options.rate, dataset };
    } finally {
      await queue.close();
    }
  }, options.signal);
}

/** The export's active run, or a new one when there is none (the old run's jobs are then removed). */
async function currentRun(redis: Redis, queue: Queue<WalkJob>, exportId: string, op: string, dataset: string): Promise<{ run: number; started: boolean }> {
  const last = Number((await redis.hget(keys.export(exportId), 'run')) ?? 0);
  if (last > 0 && (await redis.hget(keys.run(exportId, last), 'state')) === 'active') return { run: last, started: false };
  const run = last + 1;
  if (last > 0) {
    for (const walk of await redis.smembers(keys.walks(exportId, last))) await queue.remove(jobIdOf(exportId, last, walk)).catch(() => undefined);
  }
  await redis.sadd(keys.exports, exportId);
  await redis.hset(keys.export(exportId), 'op', op, 'dataset', dataset, 'run', run);
  await redis.hset(keys.run(exportId, run), 'state', 'active', 'spent', 0, 'walks', 0, 'done', 0, 'failed', 0, 'records', 0, 'pages', 0, 'enqueued', new Date().toISOString());
  return { run, started: true };
}

async function promoteParked(queue: Queue<WalkJob>, exportId: string, run: number): Promise<void> {
  const prefix = `${exportId}.${run}.`;
  for (const job of await queue.getJobs(['delayed'])) {
    if (job.id?.startsWith(prefix)) await job.promote().catch(() => undefined);
  }
}

/**
 * The options a queued export's walks take, checked by the export's own rules (`checkOptions`,
 * `checkOptionsFor`) before Redis is asked anything, with the one rule the queue adds: a rate.
 */
function checkQueuedOptions(op: OperationSpec, options: EnqueueOptions): ExportSettings {
  const { dataset, maxCredits, partition, schema, pageConcurrency, layout, since, until } = options;
  const asExport: ExportOptions = { dataset, maxCredits, partition, schema, pageConcurrency, layout, since, until };
  const settings = checkOptions(asExport);
  checkOptionsFor(op, asExport);
  const { rate } = options;
  if (rate !== undefined && (!Number.isSafeInteger(rate) || rate < 1)) throw optionError`${option('rate')} must be a whole number of at least 1, got ${String(rate)}`;
  return settings;
}
