/**
 * Where a dataset keeps things. Part files are the dataset, in a Hive layout any reader globs:
 * `DIR/<operation>/_date=<YYYY-MM|__HIVE_DEFAULT_PARTITION__>/part-b<bucket>-of-<buckets>.<ext>` (by month by default:
 * `partitionOf`; which bucket holds a record: `buckets.ts`). Everything else lives under
 * `DIR/_dataset/<operation>/` with names no glob for part files matches (`.json`, `.spool`, `.staged`):
 *
 * - `schema.json`: the columns and kinds every part of the operation uses, how it is partitioned
 *   and laid into buckets (shared by all writers; made, without columns, by the first writer about
 *   to buy a page: `settings.ts`);
 * - `schema.parquet-schema`: the same columns as a Parquet file of no rows, for readers that take a
 *   table's schema from one file (`table-schema.ts`);
 * - `keys/<partition>/<part>.keys`: the hashes of the keys each part holds (`key-index.ts`);
 * - `walks/<walkName>.json`: per parameter set, the high-water mark of its records' time and the keys
 *   near it, read by that walk alone;
 * - `state-<writer>.json`: the last run the writer published complete;
 * - `drift-<writer>.json`: the last publish's schema drift, for machines;
 * - `staging-<writer>/`: a run in progress (its pages and walk checkpoints);
 * - `commits/<writer>.json`: a writer's finished pages waiting to be published with others
 *   (group commit, `dataset.ts`);
 * - `receipts/<writer>.json`: what the publish that took them changed, until the writer reads it
 *   (versions before it wrote `commits/<writer>.done.json`);
 * - `publishing/<pass>/`: a publish pass in progress: the commits it claimed, its new parts staged
 *   (`<partition>-b<b>-of-<m>.staged` and `.staged.keys`), where it places its keys (`keys/`), and its
 *   journal once they are written (`publish.json` beside it: the journal of a version before passes
 *   published at once);
 * - `lock/` and `locks/`: the publish lock, and the locks of passes, partitions and the schema
 *   (`locks.ts`, taken as `lock-folder.ts` says; Redis leases in queue mode).
 *
 * The JSON objects among them (all the `.json` names above), the part files, the key indexes and
 * the passes' and compaction's staged parts are read and written through the dataset's `Storage`
 * (`DatasetPaths.storage`), by the names `DatasetNames` gives (`objects.ts`, `placement.ts`); the
 * writers' staging and the locks are still files under the folder (docs/storage.md).
 *
 * A writer is one process's share: `all`, `shard-K-of-N` with `--shard K/N`, or `walk-<walkName>`
 * for a queue's walk. Each writer stages alone; every writer's records are merged into the same
 * part files, so a record's key is once in the dataset whoever found it.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DatasetError } from '../errors.ts';
import { KEY_INDEX_EXTENSION } from './key-index.ts';
import { readObject } from './objects.ts';
import { LocalStorage } from './storage/local.ts';
import type { Storage } from './storage/types.ts';
import { DEFAULT_PARTITION_BY, type PartitionBy } from '../export/partition-by.ts';

/**
 * Where records without a usable time go: the operation table's `time` is null, the value does not
 * read, or its year is outside 0–9999 (no `YYYY-MM-DD` names it; such a time is garbage, not history).
 * Hive's default partition, which DuckDB, Polars and Spark read as NULL: `_date` keeps its type.
 */
export const UNDATED = '__HIVE_DEFAULT_PARTITION__';
/** The folder of undated records in datasets before they went to Hive's default partition (migrated on open). */
export const LEGACY_UNDATED = 'undated';
/** The one partition of `partition: 'none'`: still a Hive folder, so every operation of a dataset has the same Hive key. */
export const UNPARTITIONED = 'all';

// The partitionings are listed once, in partition-by.ts; re-exported for the modules that read them here.
export { DEFAULT_PARTITION_BY, PARTITION_BYS, type PartitionBy } from '../export/partition-by.ts';

/** A dataset operation's partitioning, recorded in its schema file so every run and writer keeps it. */
export interface Partitioning {
  by: PartitionBy;
  /** The Hive key: `_date`, or `date` in datasets made before it could hide a record's own `date` field. */
  column: string;
}

/** The Hive key of new datasets: a record field `date` is common, `_date` is not (and is refused: `partitionCollision`). */
export const PARTITION_COLUMN = '_date';
/** What a schema file without `partitioning` means: the layout of socialstream 0.1, by day under `date=`. */
export const LEGACY_PARTITIONING: Partitioning = { by: 'day', column: 'date' };

/** 0000-01-01 and 10000-01-01 (UTC): the times whose date has four digits. */
const FIRST_DATED_MS = -62_167_219_200_000;
const END_DATED_MS = 253_402_300_800_000;
const PREFIX_LENGTH: Record<Exclude<PartitionBy, 'none'>, number> = { day: 10, month: 7, year: 4 };

/**
 * The names of an operation's JSON objects, relative to the dataset's root: what its `Storage`
 * reads and writes them by (`objects.ts`). The same names as the files' paths under the folder
 * before the storage seam, so a dataset made by an older version opens unchanged.
 */
export class DatasetNames {
  /** `_dataset/<operation>`, with the operation's `/` as `__`. */
  readonly meta: string;

  constructor(
    readonly operation: string,
    readonly writer: string,
  ) {
    this.meta = `_dataset/${operation.replaceAll('/', '__')}`;
  }

  /** The prefix of a partition's part files: `forum/subforum/_date=2025-11/`. */
  partition(partition: string, column: string): string {
    return `${this.operation}/${column}=${partition}/`;
  }
  /** The prefix of the key indexes of the operation's parts, a folder a partition. */
  get keyIndexes(): string {
    return `${this.meta}/keys/`;
  }
  /** The key index of the part named `part` in `partition`. */
  keyIndex(partition: string, part: string): string {
    return `${this.keyIndexes}${partition}/${part}${KEY_INDEX_EXTENSION}`;
  }
  /** The prefix of the passes' folders: `publishing/<pass>/…`. */
  get publishing(): string {
    return `${this.meta}/publishing/`;
  }
  /** The prefix of a pass's objects: its claim, staged parts and key indexes, journal. */
  pass(id: string): string {
    return `${this.publishing}${id}/`;
  }
  /** The prefix of the indexes of the keys a pass places, per partition (`DatasetPaths.passKeys`). */
  passKeys(id: string): string {
    return `${this.pass(id)}keys/`;
  }
  /** The prefix where a compaction stages its new parts before its journal names them. */
  get compaction(): string {
    return `${this.meta}/compact/`;
  }

  /** The operation's columns and settings, shared by every writer. */
  get schema(): string {
    return `${this.meta}/schema.json`;
  }
  /** The schema as a Parquet file of no rows (`table-schema.ts`); not `.parquet`, so no glob of parts finds it. */
  get tableSchema(): string {
    return `${this.meta}/schema.parquet-schema`;
  }
  /** The latest fetch stamp published (`fetch-clock.ts`): a writer's clock starts after it. */
  get clock(): string {
    return `${this.meta}/clock.json`;
  }
  /** Where the writers' states are: `states` + `<writer>.json`. */
  get states(): string {
    return `${this.meta}/state-`;
  }
  /** The run this writer last published complete. */
  get state(): string {
    return `${this.states}${this.writer}.json`;
  }
  /** This writer's last publish's schema drift. */
  get drift(): string {
    return `${this.meta}/drift-${this.writer}.json`;
  }
  /** A writer's own publish journal, as versions before group commit left it (`rewrite.ts` finishes one). */
  get journal(): string {
    return `${this.meta}/staging-${this.writer}/publish.json`;
  }
  /** The objects of this writer's staging log on a store (`staging-log.ts`). */
  get stagingLog(): string {
    return `${this.meta}/staging-${this.writer}/log/`;
  }
  /** The folder of the walks' states. */
  get walks(): string {
    return `${this.meta}/walks/`;
  }
  /** A walk's own state: its mark and the keys near it. */
  walkMark(walk: string): string {
    return `${this.walks}${walk}.json`;
  }
  /** The journal of a publish as versions before passes published at once left it (`finishLegacyGroup`). */
  get publishJournal(): string {
    return `${this.meta}/publish.json`;
  }
  /** The commits a pass took, written before it reads them: no other pass takes them while it lives. */
  passClaim(id: string): string {
    return `${this.meta}/publishing/${id}/claim.json`;
  }
  /** A pass's journal, written before its first rename. */
  passJournal(id: string): string {
    return `${this.meta}/publishing/${id}/journal.json`;
  }
  /**
   * Left by the publish that widened a column (`widen.ts`): parts of the narrower type wait
   * to be rewritten. It stays until a writer has rewritten them all, so one killed midway is
   * followed by the next writer's.
   */
  get widening(): string {
    return `${this.meta}/widening.json`;
  }
  /** The folder of commits waiting (and of receipts as versions before `receipts/` left them). */
  get commits(): string {
    return `${this.meta}/commits/`;
  }
  /** This writer's pages waiting for a publish. */
  commit(writer = this.writer): string {
    return `${this.commits}${writer}.json`;
  }
  /**
   * What the publish that took `writer`'s pages changed, for the writer to read. Not beside the
   * commits: a walk that handed off its publish reads its receipt only when it runs again, so a
   * fleet's receipts pile up, and every listing of the commits waiting (each walk's setup, each
   * pass) read them all: with 2,000 walks in a dataset, a walk's setup took four times as long.
   */
  receipt(writer = this.writer): string {
    return `${this.meta}/receipts/${writer}.json`;
  }
  /** Where versions before `receipts/` left a receipt: read when there is none in `receipts/` (a pass of such a version took the commit). */
  legacyReceipt(writer = this.writer): string {
    return `${this.commits}${writer}.done.json`;
  }
  /** `compact.json`: a compaction's journal, shared by every writer of the operation (`compaction-journal.ts`). */
  get compactionJournal(): string {
    return `${this.meta}/compact.json`;
  }
}

/** Where an operation's writer keeps things: its objects by name (`names`, in `storage`), and the files still on the folder (staging, locks) by path. */
export class DatasetPaths {
  readonly meta: string;
  readonly staging: string;
  /** The names of the operation's JSON objects in `storage`. */
  readonly names: DatasetNames;

  constructor(
    readonly dir: string,
    readonly operation: string,
    readonly writer: string,
    /** Where the dataset's objects and parts are kept; its writers' staging and locks are still files under `dir`. */
    readonly storage: Storage,
  ) {
    this.names = new DatasetNames(operation, writer);
    this.meta = this.file(this.names.meta);
    this.staging = join(this.meta, `staging-${writer}`);
  }

  /**
   * The dataset as its user names it, for messages: its folder, or on a store its location
   * (`s3://bucket/prefix`), never the working folder that stands for it there.
   */
  get place(): string {
    return this.storage.folder !== undefined ? this.dir : this.storage.location;
  }

  /** The paths of `writer`'s share of the same operation, in the same store. */
  ofWriter(writer: string): DatasetPaths {
    return new DatasetPaths(this.dir, this.operation, writer, this.storage);
  }

  /** The paths of this writer's share of `operation` of the same dataset, in the same store. */
  ofOperation(operation: string): DatasetPaths {
    return new DatasetPaths(this.dir, operation, this.writer, this.storage);
  }

  /** The local path of the object or folder `name`, for the code that still works on files (and for messages). */
  file(name: string): string {
    return join(this.dir, ...name.split('/'));
  }

  /** The schema as a Parquet file of no rows, for readers that take a table's schema from a file (`table-schema.ts`); not `.parquet`, so no glob of parts finds it. */
  get tableSchema(): string {
    return this.file(this.names.tableSchema);
  }
  /** The staged run's format and mode; its presence means a run was interrupted. */
  get run(): string {
    return join(this.staging, 'run.json');
  }
  /** The writer's checkpoint (walks and totals) while it stages. */
  get checkpoint(): string {
    return join(this.staging, 'checkpoint.json');
  }
  /** The records of the writer's staged pages. */
  get spool(): string {
    return join(this.staging, 'spool.ndjson');
  }
  get lock(): string {
    return join(this.meta, 'lock');
  }

  /** A partition's folder: `DIR/forum/subforum/_date=2025-11`, for messages. */
  partitionFolder(partition: string, column: string): string {
    return join(this.dir, ...this.operation.split('/'), `${column}=${partition}`);
  }
  /** A pass's folder, for messages (its objects are under `names.pass(id)`). */
  pass(id: string): string {
    return this.file(this.names.pass(id).slice(0, -1));
  }
  /**
   * The local folder a pass sorts its incoming records and encodes its parts in before they go to
   * the store (`Storage.scratch`: on the dataset's own file system for a local dataset).
   */
  scratch(id: string): string {
    return join(this.storage.scratch, id);
  }
  /** Held while the pass lives: a pass folder whose lock is free is of a pass that died. */
  passLock(id: string): string {
    return join(this.meta, 'locks', `pass-${id}`);
  }
  /** Held by the pass that rewrites the partition's parts. */
  partitionLock(partition: string): string {
    return join(this.meta, 'locks', `partition-${partition}`);
  }
  /** Held by the pass that writes the walk's state: two passes of the same walk's pages take turns. */
  walkLock(walk: string): string {
    return join(this.meta, 'locks', `walk-${walk}`);
  }
  /** Held by the writer that rewrites parts to widened types: another finding it held leaves the work to it. */
  get widenLock(): string {
    return join(this.meta, 'locks', 'widen');
  }
  /** Held while a pass records a schema its records changed: passes at once may each add columns. */
  get metaLock(): string {
    return join(this.meta, 'locks', 'meta');
  }
}

/** The paths of `writer`'s share of `operation` in the local dataset folder `dir`. */
export function localPaths(dir: string, operation: string, writer: string): DatasetPaths {
  return new DatasetPaths(dir, operation, writer, new LocalStorage(dir));
}

/** The passes that have objects under `publishing/`, by id: at work, or dead and not yet finished. One listing. */
export async function passFolders(paths: DatasetPaths): Promise<string[]> {
  const prefix = paths.names.publishing;
  const passes = new Set<string>();
  for await (const { name } of paths.storage.list(prefix)) {
    const end = name.indexOf('/', prefix.length);
    if (end > prefix.length) passes.add(name.slice(prefix.length, end));
  }
  return [...passes];
}

/**
 * Drops the pass `id`: its objects (claim, staged parts and indexes, journal) and its scratch folder
 * here (one another machine's pass left there is that machine's to drop: scratch is local).
 */
export async function dropPass(paths: DatasetPaths, id: string): Promise<void> {
  await removeObjects(paths.storage, paths.names.pass(id));
  await rm(paths.scratch(id), { recursive: true, force: true });
}

/** Removes every object whose name begins with `prefix` (a pass's folder, a compaction's staging): one listing, then the removals. */
export async function removeObjects(storage: Storage, prefix: string): Promise<void> {
  const names: string[] = [];
  for await (const { name } of storage.list(prefix)) names.push(name);
  await storage.removeAll(names);
}

/** The partition of a record time (Unix ms): its UTC day (`2025-11-21`), month (`2025-11`) or year (`2025`). */
export function partitionOf(ms: number | undefined, by: PartitionBy): string {
  if (by === 'none') return UNPARTITIONED;
  if (ms === undefined || !(ms >= FIRST_DATED_MS && ms < END_DATED_MS)) return UNDATED;
  return new Date(ms).toISOString().slice(0, PREFIX_LENGTH[by]);
}

/**
 * The partitioning of a run: the one recorded (`LEGACY_PARTITIONING` for a schema file from before
 * it was recorded), or for an operation new to the dataset, `by` (default month) under the Hive key
 * the dataset's other operations use, so a glob of all its part files with `hive_partitioning` reads
 * as one table (DuckDB refuses files whose Hive keys differ). A recorded one cannot change: its records would
 * then be in two partitions, merged in neither.
 */
export async function partitioningFor(
  paths: DatasetPaths,
  recorded: Partitioning | undefined,
  by: PartitionBy | undefined,
): Promise<Partitioning> {
  if (recorded !== undefined) {
    if (by !== undefined && by !== recorded.by) {
      throw new DatasetError(
        `${paths.place} holds ${paths.operation} partitioned by ${recorded.by}; a run cannot partition it by ${by} (export into a new directory for another partitioning)`,
        paths.place,
      );
    }
    return recorded;
  }
  return { by: by ?? DEFAULT_PARTITION_BY, column: await datasetPartitionColumn(paths) };
}

/** The Hive key other operations of the dataset use, or `_date` when there are none. */
async function datasetPartitionColumn(paths: DatasetPaths): Promise<string> {
  // One listing of the store (on a bucket, the working folder holds only this machine's staging).
  for await (const { name } of paths.storage.list('_dataset/')) {
    if (!/^_dataset\/[^/]+\/schema\.json$/.test(name)) continue;
    const schema = (await readObject(paths.storage, name, 'delete it to record the schema afresh').catch(() => undefined)) as { partitioning?: Partitioning } | undefined;
    if (schema !== undefined) return schema.partitioning?.column ?? LEGACY_PARTITIONING.column;
  }
  return PARTITION_COLUMN;
}

/**
 * Refuses records with a top-level field named as the Hive key: a reader with `hive_partitioning`
 * would show the partition's value in its place (`date=` hid a record's own `date`).
 */
export function checkPartitionCollision(paths: DatasetPaths, partitioning: Partitioning, columns: readonly { name: string }[]): void {
  if (!columns.some((column) => column.name === partitioning.column)) return;
  throw new DatasetError(
    `records of ${paths.operation} have a field ${partitioning.column}, the name of the dataset's partition folders (${partitioning.column}=…): ` +
      `readers would show the partition in its place. Nothing was published; export into a new directory, whose partition key is ${PARTITION_COLUMN}`,
    paths.place,
  );
}

/** `shard-2-of-3` for `--shard 2/3`; `all` for one writer. */
export function writerName(shard: { index: number; count: number } | undefined): string {
  return shard === undefined ? 'all' : `shard-${shard.index}-of-${shard.count}`;
}
