/**
 * Where a dataset keeps things. Part files are the dataset, in a Hive layout any reader globs:
 * `DIR/<operation>/date=<YYYY-MM-DD|undated>/part-<writer>.<ext>`. Everything else lives under
 * `DIR/_dataset/<operation>/` with names no glob for part files matches (`.json`, `.spool`, `.staged`):
 *
 * - `schema.json`: the columns and kinds every part of the operation uses (shared by all writers);
 * - `state-<writer>.json`: per parameter set, the high-water mark of its records' time;
 * - `drift-<writer>.json`: the last run's schema drift, for machines;
 * - `staging-<writer>/`: a run in progress (its pages, walk checkpoints, and while publishing, the
 *   new parts and the journal `publish.json`);
 * - `lock/`: held while a writer publishes, so writers sharing the schema take turns.
 *
 * A writer is one process's share: `all`, or `shard-K-of-N` with `--shard K/N`. Each writer writes
 * only its own part files and state, so shards never overwrite one another.
 */
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DatasetError } from '../errors.ts';
import { PART_EXTENSION, type DatasetFormat } from '../../sinks/dataset-parts.ts';
import { isAlive } from './durable.ts';

/** Where records without a time of their own go (the operation table's `time` is null, or the value does not read). */
const UNDATED = 'undated';

export class DatasetPaths {
  readonly meta: string;
  readonly staging: string;

  constructor(
    readonly dir: string,
    readonly operation: string,
    readonly writer: string,
  ) {
    this.meta = join(dir, '_dataset', operation.replaceAll('/', '__'));
    this.staging = join(this.meta, `staging-${writer}`);
  }

  get schema(): string {
    return join(this.meta, 'schema.json');
  }
  get state(): string {
    return join(this.meta, `state-${this.writer}.json`);
  }
  get drift(): string {
    return join(this.meta, `drift-${this.writer}.json`);
  }
  /** The staged run's format and mode; its presence means a run was interrupted. */
  get run(): string {
    return join(this.staging, 'run.json');
  }
  get journal(): string {
    return join(this.staging, 'publish.json');
  }
  get lock(): string {
    return join(this.meta, 'lock');
  }

  /** The writer's part file of a partition: `DIR/forum/subforum/date=2025-11-21/part-all.parquet`. */
  part(partition: string, format: DatasetFormat): string {
    return join(this.dir, ...this.operation.split('/'), `date=${partition}`, `part-${this.writer}${PART_EXTENSION[format]}`);
  }
  /** A part written during publishing, before it is renamed into place. */
  stagedPart(partition: string): string {
    return join(this.staging, 'parts', `${partition}.staged`);
  }
  walkState(walk: string): string {
    return join(this.staging, `walk-${walk}.json`);
  }
  walkSpool(walk: string): string {
    return join(this.staging, `walk-${walk}.spool`);
  }
}

/** The partition of a record time (Unix ms): its UTC date. */
export function partitionOf(ms: number | undefined): string {
  return ms === undefined ? UNDATED : new Date(ms).toISOString().slice(0, 10);
}

/** `shard-2-of-3` for `--shard 2/3`; `all` for one writer. */
export function writerName(shard: { index: number; count: number } | undefined): string {
  return shard === undefined ? 'all' : `shard-${shard.index}-of-${shard.count}`;
}

const LOCK_WAIT_MS = 50;
const LOCK_TRIES = 2_400;

/**
 * Runs `fn` holding the operation's lock (a directory: `mkdir` either creates it or fails, on every
 * file system). A lock left by a process that died on this host is taken over; one held by a live
 * process is waited for, up to two minutes.
 */
export async function withLock<T>(paths: DatasetPaths, fn: () => Promise<T>): Promise<T> {
  await mkdir(paths.meta, { recursive: true });
  for (let tries = 0; ; tries++) {
    try {
      await mkdir(paths.lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (await isStale(paths.lock)) {
      await rm(paths.lock, { recursive: true, force: true });
      continue;
    }
    if (tries >= LOCK_TRIES) {
      throw new DatasetError(`${paths.meta} is locked by another run that is still publishing (${paths.lock})`, paths.dir);
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_MS));
  }
  try {
    // Inside: a full disk refuses this file, and a lock left unsigned would stall the next run 10 s.
    await writeFile(join(paths.lock, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname() }));
    return await fn();
  } finally {
    await rm(paths.lock, { recursive: true, force: true });
  }
}

async function isStale(lock: string): Promise<boolean> {
  let owner: { pid?: unknown; host?: unknown };
  try {
    owner = JSON.parse(await readFile(join(lock, 'owner.json'), 'utf8')) as typeof owner;
  } catch {
    // Made but not yet signed: only a process killed in that instant leaves it so for long.
    const made = await stat(lock).catch(() => undefined);
    return made === undefined || Date.now() - made.mtimeMs > 10_000;
  }
  if (owner.host !== hostname() || typeof owner.pid !== 'number') return false;
  return !isAlive(owner.pid);
}
