/**
 * A growing dataset (DESIGN "Datasets"): part files per operation in a Hive layout partitioned by
 * the records' own time, rows merged by the operation's record key, a schema kept stable across
 * runs, and per parameter set a high-water mark so a later run of a newest-first walk stops at the
 * first page that reaches it.
 *
 * A run stages every page it receives (with the walk's checkpoint) under `_dataset/`, out of sight
 * of readers, and publishes only at the end: it merges the staged records into new part files, writes
 * a journal naming them, and renames them into place. Killed before the journal, the dataset is as it
 * was and the staged pages are kept for a resume; killed after it, the next open finishes the
 * renames. Each record lives in the partition of its own (unchanging) time, so every part file is
 * replaced whole and a reader sees each record exactly once at every moment.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Checkpoint } from '../src/checkpoint.ts';
import { readJsonFile, Spool, writeJsonAtomic, type SpoolMark } from './durable.ts';
import { DatasetError, SchemaDriftError, type SchemaDrift } from '../src/errors.ts';
import { isNewestFirst, keyOf, timeOf } from '../src/operations/record-meta.ts';
import type { OperationSpec } from '../src/operations/spec.ts';
import { findOperation } from '../src/operations/table.ts';
import type { AnyIterable } from '../src/operators/types.ts';
import { DATASET_FORMATS, readPart, writePart, type DatasetFormat } from './dataset-parts.ts';
import { describeDrift, hasDrift, mergeSchemas, SchemaTracker, type SchemaColumn } from './dataset-schema.ts';
import {
  checkPartitionCollision,
  DatasetPaths,
  LEGACY_PARTITIONING,
  PARTITION_BYS,
  partitioningFor,
  partitionOf,
  walkName,
  withLock,
  writerName,
  type PartitionBy,
  type Partitioning,
} from './dataset-store.ts';
import { fromNdjson } from './from-ndjson.ts';
import { DEFAULT_MAX_DEPTH } from './rows.ts';
import { checkSource } from './run.ts';

export type { DatasetFormat } from './dataset-parts.ts';
export type { PartitionBy } from './dataset-store.ts';
export { describeDrift } from './dataset-schema.ts';

export type DatasetMode = 'merge' | 'append';
export type SchemaPolicy = 'evolve' | 'freeze';

export interface DatasetRunOptions {
  /** Operation id, e.g. `forum/subforum`: its row in the operation table gives the key, time and walk order. */
  operation: string;
  /** Part file format. Default `'parquet'`; a dataset keeps the format of its first run. */
  format?: DatasetFormat;
  /** `'merge'` (default): a newer version of a record replaces the older row. `'append'`: every version stays. */
  mode?: DatasetMode;
  /** `'evolve'` (default): new fields become columns. `'freeze'`: the first drifting page stops the run. */
  schema?: SchemaPolicy;
  /** Stop a newest-first walk at the first page that reaches the high-water mark. Default true. */
  incremental?: boolean;
  /** This process's share of the inputs (`--shard K/N`): it writes only its own part files. */
  shard?: { index: number; count: number };
  /** Deepest dotted path nested objects flatten into (as the sinks' `maxDepth`). Default 3. */
  maxDepth?: number;
  /**
   * How finely part files split by record time, under the Hive key `_date`: `'day'` (`2025-11-21`),
   * `'month'` (`2025-11`, the default), `'year'` (`2025`) or `'none'` (`all`). A dataset keeps the
   * partitioning of its first run.
   */
  partition?: PartitionBy;
}

export interface DatasetOptions extends Partial<DatasetRunOptions> {
  /** The parameter set whose high-water mark applies. Default: a client stream's own params. */
  params?: Record<string, string>;
}

export interface DatasetWalkSummary {
  params: Record<string, string>;
  pages: number;
  records: number;
  /** The walk reached its end, or the high-water mark: its mark moved. */
  complete: boolean;
  /** It stopped at the first page reaching the previous mark (a newest-first walk). */
  stoppedAtMark: boolean;
  /** The high-water mark after the run (ISO 8601), if the records have a time. */
  mark: string | null;
}

export interface DatasetSummary {
  dir: string;
  operation: string;
  writer: string;
  format: DatasetFormat;
  /** Records received by the run (over every resumed part of it). */
  records: number;
  pages: number;
  /** Rows whose key the dataset did not hold before. */
  added: number;
  /** Rows that replaced an older version of their record (`merge`). */
  updated: number;
  /** Partitions whose part file the run rewrote. */
  partitions: string[];
  /** Strings of the run's records that held invalid UTF-16 and were written with U+FFFD (`SinkResult.repaired`). */
  repaired: number;
  walks: DatasetWalkSummary[];
  drift: SchemaDrift;
}

interface WalkFile {
  params: Record<string, string>;
  /** The client checkpoint after the last staged page. */
  checkpoint?: Checkpoint;
  /** Length and hash of the spool bytes that hold exactly the staged pages. */
  spool: SpoolMark;
  records: number;
  pages: number;
  done: boolean;
  stoppedAtMark: boolean;
  /** Newest record time seen (Unix ms). */
  newest?: number;
}

interface StateFile {
  version: 1;
  operation: string;
  walks: Record<string, { params: Record<string, string>; mark: number; markTime: string }>;
}

interface SchemaFile {
  version: 1;
  operation: string;
  format: DatasetFormat;
  columns: SchemaColumn[];
  /** Absent in datasets written before it was recorded: `LEGACY_PARTITIONING`. */
  partitioning?: Partitioning;
}

interface RunFile {
  version: 1;
  operation: string;
  format: DatasetFormat;
  mode: DatasetMode;
}

/** What publishing decided, written before the first rename so a killed publish can be finished. */
interface Journal {
  renames: [string, string][];
  schema: SchemaFile;
  state: StateFile;
  drift: SchemaDrift;
  summary: DatasetSummary;
}

/** Records of a key-less operation are keyed by walk and position; the key is kept in this column. */
const POSITION_KEY = '_key';

/** One run of one operation into a dataset: open, stage pages walk by walk, publish. */
export class DatasetRun {
  readonly paths: DatasetPaths;
  readonly op: OperationSpec;
  readonly format: DatasetFormat;
  readonly mode: DatasetMode;
  readonly policy: SchemaPolicy;
  readonly incremental: boolean;
  readonly maxDepth: number;
  readonly partitioning: Partitioning;
  /** A run of this writer was interrupted: its staged pages are waiting for a resume. */
  readonly interrupted: boolean;
  /** For `freeze`: the recorded schema each page is held to as it comes (publishing measures drift afresh). */
  readonly #tracker: SchemaTracker;
  readonly #marks: StateFile;
  readonly #walks = new Map<string, WalkFile>();
  #stagingBegun = false;

  private constructor(
    paths: DatasetPaths,
    op: OperationSpec,
    options: DatasetRunOptions,
    schema: SchemaFile | undefined,
    marks: StateFile,
    staged: RunFile | undefined,
    partitioning: Partitioning,
  ) {
    this.paths = paths;
    this.op = op;
    this.format = schema?.format ?? staged?.format ?? options.format ?? 'parquet';
    this.mode = options.mode ?? 'merge';
    this.policy = options.schema ?? 'evolve';
    this.incremental = options.incremental ?? true;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.interrupted = staged !== undefined;
    this.partitioning = partitioning;
    this.#tracker = new SchemaTracker(schema?.columns ?? []);
    this.#marks = marks;
  }

  /** Opens `dir` for a run of `options.operation`, first finishing a publish a killed run left halfway. */
  static async open(dir: string, options: DatasetRunOptions): Promise<DatasetRun> {
    checkRunOptions(dir, options);
    const op = findOperation(options.operation);
    if (op === undefined) throw new TypeError(`operation ${JSON.stringify(options.operation)} is not an operation id`);
    const paths = new DatasetPaths(dir, op.id, writerName(options.shard));
    const journal = (await readJsonFile(paths.journal)) as Journal | undefined;
    if (journal !== undefined) await withLock(paths, () => finishPublish(paths, journal));
    const schema = (await readJsonFile(paths.schema)) as SchemaFile | undefined;
    if (schema !== undefined && options.format !== undefined && schema.format !== options.format) {
      throw new DatasetError(`${dir} holds ${op.id} as ${schema.format} part files; a run cannot add ${options.format} parts to it`, dir);
    }
    const marks = ((await readJsonFile(paths.state)) as StateFile | undefined) ?? { version: 1, operation: op.id, walks: {} };
    const staged = (await readJsonFile(paths.run)) as RunFile | undefined;
    const recorded = schema === undefined ? undefined : (schema.partitioning ?? LEGACY_PARTITIONING);
    const partitioning = await partitioningFor(paths, recorded, options.partition);
    const run = new DatasetRun(paths, op, options, schema, marks, staged, partitioning);
    if (staged !== undefined) await run.#loadStaged();
    return run;
  }

  /** The parameter sets an interrupted run staged. */
  stagedWalks(): Record<string, string>[] {
    return [...this.#walks.values()].map((walk) => walk.params);
  }

  /** Drops what an interrupted run staged; the published dataset is untouched. */
  async discard(): Promise<void> {
    this.#walks.clear();
    this.#stagingBegun = false;
    await rm(this.paths.staging, { recursive: true, force: true });
  }

  /** The walk of one parameter set: its pages are staged as they come. */
  walk(params: Record<string, string>): DatasetWalk {
    const name = walkName(params);
    let file = this.#walks.get(name);
    if (file === undefined) {
      file = { params: { ...params }, spool: { bytes: 0, sha256: '' }, records: 0, pages: 0, done: false, stoppedAtMark: false };
      this.#walks.set(name, file);
    }
    const mark = this.#marks.walks[name]?.mark;
    const stopAt = this.incremental && isNewestFirst(this.op, params) ? mark : undefined;
    return new DatasetWalk(this, name, file, stopAt);
  }

  /** Checks a page against the schema under `freeze`, before it is staged. */
  checkPage(records: readonly unknown[]): void {
    // The run that records the first schema cannot drift from it.
    if (this.policy !== 'freeze' || this.#tracker.first) return;
    const drift = this.#tracker.observe(records, this.maxDepth);
    if (!hasDrift(drift)) return;
    const report: SchemaDrift = {
      added: drift.added.map(({ name, kind }) => ({ column: name, kind })),
      missing: [],
      conflicting: drift.conflicting,
    };
    throw new SchemaDriftError(`${this.op.id}: the schema is frozen and a page drifts from it (${describeDrift(report)})`, report, this.paths.dir, {
      endpoint: this.op.id,
    });
  }

  /** Ends a run that must publish nothing (a frozen schema met drift): drops the staged pages, records the drift. */
  async abandon(error: unknown): Promise<void> {
    await this.discard();
    if (error instanceof SchemaDriftError) {
      await writeJsonAtomic(this.paths.drift, { operation: this.op.id, at: new Date().toISOString(), frozen: true, drift: error.drift });
    }
  }

  /** Writes the run's staged pages into the dataset and moves the marks of completed walks. */
  async publish(): Promise<DatasetSummary> {
    return withLock(this.paths, async () => {
      const journal = await this.#plan();
      await writeJsonAtomic(this.paths.journal, journal);
      return finishPublish(this.paths, journal);
    });
  }

  /** Marks the start of staging: from here a killed run leaves pages for `--resume`. */
  async beginStaging(): Promise<void> {
    if (this.#stagingBegun) return;
    this.#stagingBegun = true;
    const file: RunFile = { version: 1, operation: this.op.id, format: this.format, mode: this.mode };
    await rm(this.paths.staging, { recursive: true, force: true });
    await mkdir(this.paths.staging, { recursive: true });
    await writeJsonAtomic(this.paths.run, file);
  }

  async saveWalk(name: string, file: WalkFile): Promise<void> {
    await writeJsonAtomic(this.paths.walkState(name), file);
  }

  async #loadStaged(): Promise<void> {
    this.#stagingBegun = true;
    for (const entry of await readdir(this.paths.staging)) {
      const match = /^walk-([0-9a-f]{16})\.json$/.exec(entry);
      if (!match) continue;
      const file = (await readJsonFile(this.paths.walkState(match[1]))) as WalkFile;
      // Bytes past what the walk vouched for come from a page that was being written when the run died:
      // reopening checks the vouched bytes and cuts the rest, as a file export's resume does.
      if (file.spool.bytes > 0) await (await Spool.reopen(this.paths.walkSpool(match[1]), file.spool)).close();
      this.#walks.set(match[1], file);
    }
  }

  /** Reads every staged record, merges them into the partitions they touch, and writes the new parts (staged). */
  async #plan(): Promise<Journal> {
    const recorded = (await readJsonFile(this.paths.schema)) as SchemaFile | undefined;
    const tracker = new SchemaTracker(recorded?.columns ?? []);
    const incoming = new Map<string, Record<string, unknown>[]>();
    let records = 0;
    let pages = 0;
    for (const [name, walk] of this.#walks) {
      records += walk.records;
      pages += walk.pages;
      if (walk.spool.bytes === 0) continue;
      let position = 0;
      let chunk: Record<string, unknown>[] = [];
      for await (const raw of fromNdjson(this.paths.walkSpool(name))) {
        const record = this.op.key === null ? { ...raw, [POSITION_KEY]: `${name}:${position}` } : raw;
        position++;
        const partition = partitionOf(timeOf(this.op, record), this.partitioning.by);
        let list = incoming.get(partition);
        if (list === undefined) incoming.set(partition, (list = []));
        list.push(record);
        chunk.push(record);
        if (chunk.length >= 1_000) {
          tracker.observe(chunk, this.maxDepth);
          chunk = [];
        }
      }
      tracker.observe(chunk, this.maxDepth);
    }
    const columns = mergeSchemas(recorded?.columns ?? [], tracker.columns());
    checkPartitionCollision(this.paths, this.partitioning, columns);
    const schema: SchemaFile = { version: 1, operation: this.op.id, format: this.format, columns, partitioning: this.partitioning };
    const renames: [string, string][] = [];
    let added = 0;
    let updated = 0;
    let repaired = 0;
    const partitions = [...incoming.keys()].sort();
    for (const partition of partitions) {
      const target = this.paths.part(partition, this.format, this.partitioning.column);
      const old = await readExisting(target, this.format);
      const merged = this.mode === 'merge' ? this.#merge(old, incoming.get(partition)!) : { rows: [...old, ...incoming.get(partition)!], added: incoming.get(partition)!.length, updated: 0 };
      added += merged.added;
      updated += merged.updated;
      // Old rows were repaired when first written: the count is this run's strings.
      repaired += (await writePart(merged.rows, this.paths.stagedPart(partition), this.format, columns)).repaired;
      renames.push([this.paths.stagedPart(partition), target]);
    }
    const state = this.#nextMarks();
    const walks = [...this.#walks].map(([name, walk]) => {
      const mark = state.walks[name];
      return { params: walk.params, pages: walk.pages, records: walk.records, complete: walk.done, stoppedAtMark: walk.stoppedAtMark, mark: mark ? mark.markTime : null };
    });
    const drift = tracker.drift();
    const summary: DatasetSummary = {
      dir: this.paths.dir,
      operation: this.op.id,
      writer: this.paths.writer,
      format: this.format,
      records,
      pages,
      added,
      updated,
      partitions,
      repaired,
      walks,
      drift,
    };
    return { renames, schema, state, drift, summary };
  }

  /** `merge`: one row per key, the newest version (the one received last) in place of older ones. */
  #merge(old: Record<string, unknown>[], incoming: Record<string, unknown>[]) {
    const byKey = new Map<string, Record<string, unknown>>();
    const keyless: Record<string, unknown>[] = [];
    const keyOfRow = (row: Record<string, unknown>) => (this.op.key === null ? (row[POSITION_KEY] as string | undefined) : keyOf(this.op, row));
    for (const row of old) {
      const key = keyOfRow(row);
      if (key === undefined) keyless.push(row);
      else byKey.set(key, row);
    }
    const before = new Set(byKey.keys());
    let added = 0;
    let updated = 0;
    const seenNow = new Set<string>();
    for (const row of incoming) {
      const key = keyOfRow(row);
      if (key === undefined) {
        keyless.push(row);
        added++;
        continue;
      }
      if (!seenNow.has(key)) {
        seenNow.add(key);
        if (before.has(key)) updated++;
        else added++;
      }
      byKey.set(key, row);
    }
    return { rows: [...byKey.values(), ...keyless], added, updated };
  }

  /** A completed walk's mark moves to its newest record; an incomplete one keeps its old mark (a gap would be skipped). */
  #nextMarks(): StateFile {
    const next: StateFile = { version: 1, operation: this.op.id, walks: { ...this.#marks.walks } };
    for (const [name, walk] of this.#walks) {
      if (!walk.done || walk.newest === undefined) continue;
      const mark = Math.max(walk.newest, next.walks[name]?.mark ?? -Infinity);
      next.walks[name] = { params: walk.params, mark, markTime: new Date(mark).toISOString() };
    }
    return next;
  }
}

/** One parameter set's walk within a run. */
export class DatasetWalk {
  constructor(
    private readonly run: DatasetRun,
    private readonly name: string,
    private readonly file: WalkFile,
    /** The mark a newest-first walk stops at, when the run is incremental. */
    private readonly stopAt: number | undefined,
  ) {}

  #spool: Spool | undefined;

  get params(): Readonly<Record<string, string>> {
    return this.file.params;
  }
  /** Where the walk continues: the checkpoint after its last staged page. */
  get checkpoint(): Checkpoint | undefined {
    return this.file.checkpoint;
  }
  /** Nothing is left to fetch: it ended, or reached the mark. */
  get done(): boolean {
    return this.file.done;
  }

  /**
   * Stages one finished page and the checkpoint after it. Resolves `'stop'` when the page reached the
   * high-water mark: the walk then has every new record and must buy no further page.
   */
  async addPage(records: readonly unknown[], checkpoint: Checkpoint | undefined, last: boolean): Promise<'more' | 'stop'> {
    if (records.length > 0) this.run.checkPage(records);
    await this.run.beginStaging();
    const path = this.run.paths.walkSpool(this.name);
    this.#spool ??= await Spool.reopen(path, this.file.spool);
    await this.#spool.appendPage(records);
    let reached = false;
    for (const record of records) {
      const time = timeOf(this.run.op, record);
      if (time === undefined) continue;
      if (this.file.newest === undefined || time > this.file.newest) this.file.newest = time;
      if (this.stopAt !== undefined && time <= this.stopAt) reached = true;
    }
    this.file.spool = this.#spool.mark();
    this.file.records += records.length;
    if (records.length > 0) this.file.pages++;
    if (checkpoint !== undefined) this.file.checkpoint = checkpoint;
    this.file.stoppedAtMark ||= reached;
    this.file.done ||= last || reached;
    await this.run.saveWalk(this.name, this.file);
    return reached ? 'stop' : 'more';
  }

  async close(): Promise<void> {
    await this.#spool?.close();
    this.#spool = undefined;
  }
}

/** Renames the staged parts into place, then records schema, marks and drift, and drops the staging. */
async function finishPublish(paths: DatasetPaths, journal: Journal): Promise<DatasetSummary> {
  for (const [from, to] of journal.renames) {
    await mkdir(dirname(to), { recursive: true });
    try {
      await rename(from, to);
    } catch (error) {
      // Renamed before a crash: the staged file is gone and the part is in place.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  await writeJsonAtomic(paths.schema, journal.schema);
  await writeJsonAtomic(paths.state, journal.state);
  await writeJsonAtomic(paths.drift, { operation: journal.schema.operation, at: new Date().toISOString(), frozen: false, drift: journal.drift });
  await rm(paths.staging, { recursive: true, force: true });
  return journal.summary;
}

async function readExisting(path: string, format: DatasetFormat): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  try {
    for await (const row of readPart(path, format)) rows.push(row);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return rows;
    throw new DatasetError(`cannot read the part file ${path} back to merge into it: ${(error as Error).message}`, path, { cause: error });
  }
  return rows;
}

function checkRunOptions(dir: unknown, options: DatasetRunOptions): void {
  if (typeof dir !== 'string' || dir === '') throw new TypeError('dir must be a non-empty string');
  const { format, mode, schema, shard, maxDepth, partition } = options;
  if (format !== undefined && !DATASET_FORMATS.includes(format)) throw new TypeError(`format must be one of ${DATASET_FORMATS.join(', ')}, got ${String(format)}`);
  if (mode !== undefined && mode !== 'merge' && mode !== 'append') throw new TypeError(`mode must be 'merge' or 'append', got ${String(mode)}`);
  if (schema !== undefined && schema !== 'evolve' && schema !== 'freeze') throw new TypeError(`schema must be 'evolve' or 'freeze', got ${String(schema)}`);
  if (shard !== undefined && !(Number.isSafeInteger(shard.count) && shard.count >= 1 && Number.isSafeInteger(shard.index) && shard.index >= 1 && shard.index <= shard.count)) {
    throw new TypeError(`shard must be { index, count } with 1 ≤ index ≤ count, got ${JSON.stringify(shard)}`);
  }
  if (maxDepth !== undefined && !(Number.isSafeInteger(maxDepth) && maxDepth >= 1)) throw new TypeError(`maxDepth must be a positive integer, got ${String(maxDepth)}`);
  if (partition !== undefined && !PARTITION_BYS.includes(partition)) throw new TypeError(`partition must be one of ${PARTITION_BYS.join(', ')}, got ${String(partition)}`);
}

/** A client stream: it knows its operation and where its walk stands. */
interface WalkingSource {
  readonly operation: string;
  checkpoint(): Checkpoint;
}

function isWalkingSource(source: unknown): source is WalkingSource {
  const candidate = source as Partial<WalkingSource>;
  return typeof candidate.operation === 'string' && typeof candidate.checkpoint === 'function';
}

/** Records staged at once from a source that is not a client stream (it has no pages to go by). */
const BATCH = 1_000;

/**
 * Writes `source` into the dataset at `dir` and publishes it (DESIGN "Datasets"). With a client
 * stream as the source, the operation and params are its own, pages are staged as they finish, and a
 * newest-first walk stops at the first page that reaches the high-water mark, buying no further page.
 * When the source throws, what it gave is published (its mark does not move) and the source's error
 * is rethrown; a frozen schema that meets drift publishes nothing.
 */
export async function toDataset(source: AnyIterable<unknown>, dir: string, options: DatasetOptions = {}): Promise<DatasetSummary> {
  checkSource(source);
  const stream = isWalkingSource(source) ? source : undefined;
  const operation = options.operation ?? stream?.operation;
  if (operation === undefined) throw new TypeError('toDataset: options.operation is needed when the source is not a client stream');
  const params = options.params ?? stream?.checkpoint().params ?? {};
  const run = await DatasetRun.open(dir, { ...options, operation });
  // The library cannot resume another process's walk (its source starts where it starts): begin afresh.
  if (run.interrupted) await run.discard();
  const walk = run.walk(params);
  let page: unknown[] = [];
  // `page` is emptied before the walk takes its records, so what is left in it after a failure is
  // exactly what the source gave that was not staged yet.
  const stage = (checkpoint: Checkpoint | undefined, last: boolean): Promise<'more' | 'stop'> => {
    const records = page;
    page = [];
    return walk.addPage(records, checkpoint, last);
  };
  let failure: { error: unknown } | undefined;
  try {
    let stopped = false;
    for await (const record of source) {
      page.push(record);
      const checkpoint = stream?.checkpoint();
      if (checkpoint ? checkpoint.skip === 0 : page.length >= BATCH) {
        if ((await stage(checkpoint, checkpoint?.pending === null)) === 'stop') {
          stopped = true;
          break;
        }
      }
    }
    if (!stopped) await stage(stream?.checkpoint(), true);
  } catch (error) {
    failure = { error };
    // What the source gave before it failed is published with the rest (a page of drift is not).
    if (!(error instanceof SchemaDriftError)) await stage(stream?.checkpoint(), false);
  } finally {
    await walk.close();
  }
  if (failure?.error instanceof SchemaDriftError) {
    await run.abandon(failure.error);
    throw failure.error;
  }
  const summary = await run.publish();
  if (failure !== undefined) throw failure.error;
  return summary;
}
