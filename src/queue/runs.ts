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
 *   `…:<n>:failures`: walk name → `{ params, error }`;
 * - `socialstream:workers`: worker id → what it last said (`{ host, pid, state, error? }`).
 *
 * Only walk parameters, counts and error messages go in: never the API key (each worker reads its own).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PartitionBy } from '../export/partition-by.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { PREFIX } from './connection.ts';

export const keys = {
  exports: `${PREFIX}:exports`,
  export: (id: string) => `${PREFIX}:export:${id}`,
  run: (id: string, run: number) => `${PREFIX}:run:${id}:${run}`,
  walks: (id: string, run: number) => `${PREFIX}:run:${id}:${run}:walks`,
  ended: (id: string, run: number) => `${PREFIX}:run:${id}:${run}:ended`,
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
  /** What the walk staged, once a run of it finished and handed its pages to a publish in progress (counted when they are published). */
  handedOff?: { records: number; pages: number };
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
 * Adds what a walk published to its run's counts and, when the walk ended (ARGV[3]: `done` or
 * `failed`), counts it and marks the run finished when it was the last, all in one step: one round
 * trip, and two workers ending the last two walks at once cannot both miss it. A walk that already
 * ended (KEYS[2] holds its name, ARGV[5]) is not counted again.
 */
const WALK_STOPPED = `
if ARGV[3] ~= '' and redis.call('SADD', KEYS[2], ARGV[5]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'records', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'pages', ARGV[2])
if ARGV[3] == '' then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[3], 1)
local run = redis.call('HMGET', KEYS[1], 'walks', 'done', 'failed')
if tonumber(run[2] or '0') + tonumber(run[3] or '0') >= tonumber(run[1] or '0') then
  redis.call('HSET', KEYS[1], 'state', 'finished', 'finished', ARGV[4])
  return 1
end
return 0`;

/** Counts what a walk published, and its end if it ended; resolves true when it was the run's last walk. */
export async function walkStopped(redis: Redis, job: WalkJob, published: { records: number; pages: number }, ended?: 'done' | 'failed'): Promise<boolean> {
  const answer = await redis.eval(WALK_STOPPED, 2, keys.run(job.exportId, job.run), keys.ended(job.exportId, job.run), published.records, published.pages, ended ?? '', new Date().toISOString(), job.walk);
  return answer === 1;
}
