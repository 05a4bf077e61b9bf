/**
 * Runs as Redis keeps them. An *export* is one operation into one dataset directory (its id is a
 * hash of both); a *run* of it is one enqueue, numbered 1, 2, … Enqueueing while the current run is
 * active joins it (the walks it already has are not added again: a walk's job id is
 * `<export>.<run>.<walkName>`); enqueueing after it finished starts the next run, which buys only
 * what is new (the dataset's high-water marks).
 *
 * - `socialstream:exports`: the set of export ids;
 * - `socialstream:export:<id>`: `op`, `dataset`, `run` (the current run's number);
 * - `socialstream:run:<id>:<n>`: `state` (`active` | `finished`), `budget` (absent: none), `spent`,
 *   `rate`, `walks`, `done`, `failed`, `records`, `pages`, `enqueued`, `finished` (times);
 * - `…:<n>:walks`: the walk names of the run; `…:<n>:ended`: those done or failed (each counted once);
 *   `…:<n>:counts`: walk name → `<records> <pages>` it published (the run's `records` and `pages`
 *   are their sum); `…:<n>:failures`: walk name → `{ params, error }`;
 * - `socialstream:workers`: worker id → what it last said (`{ host, pid, state, error? }`).
 *
 * Only walk parameters, counts and error messages go in: never the API key (each worker reads its own).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PartitionBy } from '../export/partition-by.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { PREFIX, QUEUE_NAME } from './connection.ts';

export const keys = {
  exports: `${PREFIX}:exports`,
  export: (id: string) => `${PREFIX}:export:${id}`,
  run: (id: string, run: number) => `${PREFIX}:run:${id}:${run}`,
  walks: (id: string, run: number) => `${PREFIX}:run:${id}:${run}:walks`,
  ended: (id: string, run: number) => `${PREFIX}:run:${id}:${run}:ended`,
  counts: (id: string, run: number) => `${PREFIX}:run:${id}:${run}:counts`,
  failures: (id: string, run: number) => `${PREFIX}:run:${id}:${run}:failures`,
  rate: (id: string, run: number) => `${PREFIX}:run:${id}:${run}:rate`,
  workers: `${PREFIX}:workers`,
};

/** What a job carries: a walk and where it goes. No secret. */
export interface WalkJob {
  exportId: string;
  run: number;
  op: string;
  params: Record<string, string>;
  walk: string;
  /** The dataset directory, absolute: storage every worker sees at the same path. */
  dataset: string;
  partition?: PartitionBy;
  schema?: 'evolve' | 'freeze';
  pageConcurrency?: number;
  layout?: ParquetLayout;
  /** ISO instants: the records' time bounds (`ExportOptions.since`, `until`). */
  since?: string;
  until?: string;
  /** Set once a run of the walk finished and handed its pages to a publish in progress: it is done when they are published. */
  handedOff?: true;
}

/** An export's identity: its operation and its dataset directory. */
export function exportIdOf(op: string, dataset: string): string {
  return createHash('sha256').update(`${op}\0${dataset}`).digest('hex').slice(0, 16);
}

/** A walk's job: the same walk of the same run is one job, however often it is enqueued. */
export function jobIdOf(exportId: string, run: number, walk: string): string {
  return `${exportId}.${run}.${walk}`;
}

export interface RunCounters {
  state: 'active' | 'finished';
  budget: number | undefined;
  spent: number;
  rate: number | undefined;
  walks: number;
  done: number;
  failed: number;
  records: number;
  pages: number;
  enqueued: string | undefined;
  finished: string | undefined;
}

export async function readRun(redis: Redis, id: string, run: number): Promise<RunCounters | undefined> {
  const hash = await redis.hgetall(keys.run(id, run));
  if (hash.state === undefined) return undefined;
  const count = (name: string): number => Number(hash[name] ?? 0);
  return {
    state: hash.state === 'finished' ? 'finished' : 'active',
    budget: hash.budget === undefined ? undefined : Number(hash.budget),
    spent: count('spent'),
    rate: hash.rate === undefined ? undefined : Number(hash.rate),
    walks: count('walks'),
    done: count('done'),
    failed: count('failed'),
    records: count('records'),
    pages: count('pages'),
    enqueued: hash.enqueued,
    finished: hash.finished,
  };
}

/**
 * Whether a walk's job is of its export's current run (a later enqueue may have started the next),
 * whether the walk already ended in it, and whether the run's budget is set and spent: one round
 * trip before the walk is opened. A walk ends once: a job taken again after its walk ended (its
 * worker's job lock ran out while the worker finished it, as in a Redis restart longer than the
 * lease) would otherwise walk it afresh, buying its first pages again and counting it twice.
 */
export async function walkOutlook(redis: Redis, job: WalkJob): Promise<{ current: boolean; ended: boolean; budgetSpent: boolean }> {
  const answers = await redis
    .multi()
    .hget(keys.export(job.exportId), 'run')
    .sismember(keys.ended(job.exportId, job.run), job.walk)
    .hmget(keys.run(job.exportId, job.run), 'budget', 'spent')
    .exec();
  if (answers === null) throw new Error('Redis discarded the transaction');
  for (const [error] of answers) if (error !== null) throw error;
  const run = answers[0][1] as string | null;
  const [budget, spent] = answers[2][1] as (string | null)[];
  return { current: Number(run) === job.run, ended: answers[1][1] === 1, budgetSpent: budget !== null && Number(spent ?? 0) >= Number(budget) };
}

/**
 * Counts what a walk published and, when the walk ended (`done` or `failed`), counts its end and marks
 * the run finished when it was the last, all in one step: one round trip, and two workers ending the
 * last two walks at once cannot both miss it. The counts belong to the walk (`…:counts`): a walk's
 * total set at its end replaces what was added for it before, so its records and pages are counted
 * once whichever workers staged them. Only the worker holding the walk's job (its BullMQ lock holds
 * this worker's token) counts anything: a worker that stalled past its lease while another took the
 * walk over says nothing, so a walk cannot be failed, nor its run finished, by a worker that no
 * longer runs it. A walk that already ended is not counted again.
 *
 * KEYS: the run's hash, its ended set, its counts, its failures, the job's lock. ARGV: the walk, its
 * records and pages, `add` or `set`, the end (`''`: none), the failure (JSON), the time, the token.
 * Returns -1: not the job's holder; 1: the run is finished now; 0 otherwise.
 */
const WALK_STOPPED = `
if ARGV[8] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[8] then return -1 end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
local before = redis.call('HGET', KEYS[3], ARGV[1])
local records, pages = 0, 0
if before then
  local space = string.find(before, ' ')
  records, pages = tonumber(string.sub(before, 1, space - 1)), tonumber(string.sub(before, space + 1))
end
local newRecords, newPages = tonumber(ARGV[2]), tonumber(ARGV[3])
if ARGV[4] == 'add' then newRecords, newPages = records + newRecords, pages + newPages end
redis.call('HSET', KEYS[3], ARGV[1], newRecords .. ' ' .. newPages)
redis.call('HINCRBY', KEYS[1], 'records', newRecords - records)
redis.call('HINCRBY', KEYS[1], 'pages', newPages - pages)
if ARGV[5] == '' then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
if ARGV[5] == 'failed' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[6]) end
redis.call('HINCRBY', KEYS[1], ARGV[5], 1)
local run = redis.call('HMGET', KEYS[1], 'walks', 'done', 'failed')
if tonumber(run[2] or '0') + tonumber(run[3] or '0') >= tonumber(run[1] or '0') then
  redis.call('HSET', KEYS[1], 'state', 'finished', 'finished', ARGV[7])
  return 1
end
return 0`;

/** How a walk's end is told: `done`, or `failed` with its parameters and error (listed by `status`). */
export type WalkEnd = { as: 'done' } | { as: 'failed'; error: string };

/** A report of a walk by the worker holding its job (`token`: BullMQ's lock on it). */
export interface WalkReport {
  token: string | undefined;
  /** Records and pages published: `add`ed to the walk's count (a stop), or the walk's whole `set` (its end). */
  counts: { records: number; pages: number };
  how: 'add' | 'set';
  end?: WalkEnd;
}

/**
 * Counts what a walk published, and its end if it ended. Resolves `finished` when it was the run's
 * last walk, `not-held` when this worker no longer holds the walk's job (nothing was counted).
 */
export async function walkStopped(redis: Redis, job: WalkJob, report: WalkReport): Promise<'finished' | 'counted' | 'not-held'> {
  const { exportId, run, walk } = job;
  const { token, counts, how, end } = report;
  const failure = end?.as === 'failed' ? JSON.stringify({ params: job.params, error: end.error }) : '';
  const answer = await redis.eval(
    WALK_STOPPED,
    5,
    keys.run(exportId, run),
    keys.ended(exportId, run),
    keys.counts(exportId, run),
    keys.failures(exportId, run),
    jobLockKey(jobIdOf(exportId, run, walk)),
    walk,
    counts.records,
    counts.pages,
    how,
    end?.as ?? '',
    failure,
    new Date().toISOString(),
    token ?? '',
  );
  return answer === -1 ? 'not-held' : answer === 1 ? 'finished' : 'counted';
}

/** BullMQ's lock on a job: it holds the token of the worker processing it. */
function jobLockKey(jobId: string): string {
  return `${PREFIX}:${QUEUE_NAME}:${jobId}:lock`;
}

/** The export engine's `runId` of a walk's run: a walk's writer records the run it published complete by it. */
export function runIdOf(job: WalkJob): string {
  return `${job.exportId}:${job.run}`;
}
