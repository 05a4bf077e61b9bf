/**
 * A growing dataset as an export's destination (DESIGN "Datasets"): part files per operation in a
 * Hive layout partitioned by the records' own time, rows merged by the operation's record key, a
 * schema kept stable across runs, and per parameter set a high-water mark so a later run of a
 * newest-first walk stops at the first page that is wholly held (`inspect`).
 *
 * The engine stages pages in the writer's staging folder (`_dataset/<op>/staging-<writer>/`), out of
 * sight of readers. Publishing merges the spool into new part files, writes a journal naming them
 * and the staging state that follows, then renames them into place: killed before the journal, the
 * dataset is as it was and the staging intact; killed after it, the next open finishes the publish.
 * Each record lives in the partition of its own (unchanging) time, so every part file is replaced
 * whole and a reader sees each record exactly once at every moment.
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { DatasetError, HeldStateError, SchemaDriftError, ShardCountError, type SchemaDrift } from '../errors.ts';
import { isNewestFirst, keyOf, plausibleTimeOf, stableKeyOf, timeOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import { readPart, writePart, type DatasetFormat } from '../../sinks/dataset-parts.ts';
import { describeDrift, hasDrift, mergeSchemas, SchemaTracker, type SchemaColumn } from '../../sinks/dataset-schema.ts';
import {
  checkPartitionCollision,
  DatasetPaths,
  LEGACY_PARTITIONING,
  partitioningFor,
  partitionOf,
  withLock,
  writerName,
  type PartitionBy,
  type Partitioning,
} from './dataset-store.ts';
import { finishCompaction, hasPendingCompaction } from './compaction-journal.ts';
import { scanParts } from './dataset-scan.ts';
import { checkOtherSchemas, checkParts, readMarksFile, readPublishJournal, readSchemaFile } from './dataset-state.ts';
import { fromNdjson } from '../../sinks/from-ndjson.ts';
import { DEFAULT_MAX_DEPTH } from '../../sinks/rows.ts';
import type { Destination, Published } from './destination.ts';
import { fileSize, writeJsonAtomic } from './durable.ts';
import { believed, endsIn, heldKeys, MARK_LAG_MS, nextMarks, type MarksFile } from './marks.ts';
import { freshState, writeState, type ExportState, type WalkState } from './journal.ts';
import type { DatasetChanges, SchemaPolicy } from './types.ts';

export { describeDrift } from '../../sinks/dataset-schema.ts';

export interface DatasetDestinationOptions {
  format?: DatasetFormat;
  schema?: SchemaPolicy;
  shard?: { index: number; count: number };
  /** A writer name of the caller's (`ExportOptions.writer`), instead of `all` or the shard's. */
  writer?: string;
  /** The scheduler's run this export is (`ExportOptions.runId`). */
  runId?: string;
  /** The lock writers publish under (`ExportOptions.locks.publish`), instead of the pid-file folder. */
  publishLock?: <T>(path: string, fn: () => Promise<T>) => Promise<T>;
  incremental?: boolean;
  maxDepth?: number;
  partition?: PartitionBy;
  /** Record-time bounds in Unix ms (`since` inclusive, `until` exclusive). */
  since?: number;
  until?: number;
}

interface SchemaFile {
  version: 1;
  operation: string;
  format: DatasetFormat;
  columns: SchemaColumn[];
  /** Absent in datasets written before it was recorded: `LEGACY_PARTITIONING`. */
  partitioning?: Partitioning;
  /** How many writers share the operation's records (`--shard K/N`: N; one writer: 1). Absent before it was recorded. */
  shards?: number;
}

/** What publishing decided, written before the first rename so a killed publish can be finished. */
interface PublishJournal {
  renames: [string, string][];
  schema: SchemaFile;
  marks: MarksFile;
  drift: SchemaDrift;
  changes: DatasetChanges;
  /** Strings of this publish's records that held invalid UTF-16 (written with U+FFFD). */
  repaired: number;
  /** The staging state after the publish: null when the export is complete (the staging goes). */
  next: ExportState | null;
}

/** Records without a usable key of their own are keyed by the operation's `stableKey`, kept in this column. */
const STABLE_KEY = '_key';

export class DatasetDestination implements Destination {
  readonly paths: DatasetPaths;
  readonly folder: string;
  readonly files;
  readonly remedy: string;
  readonly #policy: SchemaPolicy;
  readonly #incremental: boolean;
  readonly #maxDepth: number;
  readonly #askedFormat: DatasetFormat | undefined;
  readonly #askedPartition: PartitionBy | undefined;
  /** The writers that share the operation: N of `--shard K/N`, or 1. */
  readonly #shards: number;
  readonly #publishLock: DatasetDestinationOptions['publishLock'];
  readonly #runId: string | undefined;
  #format: DatasetFormat = 'parquet';
  #partitioning: Partitioning = LEGACY_PARTITIONING;
  /** For `freeze`: the recorded schema each page is held to as it comes (publishing measures drift afresh). */
  #tracker = new SchemaTracker([]);
  #marks: MarksFile;
  readonly #since: number | undefined;
  readonly #until: number | undefined;
  /** Keys of the dataset's records a newest-first walk may meet again without their time proving them held. */
  #held = new Set<string>();

  constructor(
    readonly output: string,
    readonly op: OperationSpec,
    options: DatasetDestinationOptions,
  ) {
    this.paths = new DatasetPaths(output, op.id, options.writer ?? writerName(options.shard));
    this.folder = resolve(output);
    const staging = this.paths.staging;
    this.files = {
      lock: join(this.paths.meta, `writer-${this.paths.writer}.lock`),
      journal: join(staging, 'checkpoint.json'),
      spool: join(staging, 'spool.ndjson'),
      held: join(staging, 'held.ndjson'),
    };
    this.remedy = `restart the export (--restart) to discard ${staging} and start over; the published dataset stays`;
    this.#policy = options.schema ?? 'evolve';
    this.#incremental = options.incremental ?? true;
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.#askedFormat = options.format;
    this.#askedPartition = options.partition;
    this.#shards = options.shard?.count ?? 1;
    this.#publishLock = options.publishLock;
    this.#runId = options.runId;
    this.#marks = { version: 1, operation: op.id, walks: {} };
    this.#since = options.since;
    this.#until = options.until;
  }

  get format(): DatasetFormat {
    return this.#format;
  }

  async prepare(): Promise<void> {
    await mkdir(this.paths.meta, { recursive: true });
  }

  /** Finishes a publish a killed run left half done; reads the schema and marks this run goes by. */
  async recover(restart: boolean): Promise<void> {
    if ((await fileSize(this.paths.run)) !== undefined && restart) await this.discard();
    if ((await fileSize(this.paths.run)) !== undefined) {
      throw new HeldStateError(
        `${this.paths.staging} was staged by socialstream 0.1.0, whose staging this version does not read: finish it with 0.1.0 (export --resume), or ${this.remedy}`,
        this.output,
      );
    }
    // A compaction changes the schema (its partitioning): finished first, before the schema is read.
    if (await hasPendingCompaction(this.paths)) await withLock(this.paths, () => finishCompaction(this.paths));
    const journal = (await readPublishJournal(this.paths, this.remedy)) as PublishJournal | undefined;
    if (journal !== undefined) await this.#locked(() => this.#finishPublish(journal));
    const schema = await readSchemaFile(this.paths);
    if (schema !== undefined && this.#askedFormat !== undefined && schema.format !== this.#askedFormat) {
      throw new DatasetError(`${this.output} holds ${this.op.id} as ${schema.format} part files; a run cannot add ${this.#askedFormat} parts to it`, this.output);
    }
    if (schema === undefined) await checkOtherSchemas(this.paths);
    this.#checkShards(schema);
    this.#format = schema?.format ?? this.#askedFormat ?? 'parquet';
    this.#partitioning = await partitioningFor(this.paths, schema === undefined ? undefined : (schema.partitioning ?? LEGACY_PARTITIONING), this.#askedPartition);
    this.#tracker = new SchemaTracker(schema?.columns ?? []);
    // Before any request: a part this run would merge into or read keys from must read back.
    const parts = await scanParts(this.output, { operation: this.op.id, schema, format: this.#format, partitioning: this.#partitioning, paths: this.paths });
    await checkParts(parts.map((part) => part.path), this.#format, this.paths);
    const marks = await readMarksFile(this.paths);
    if (marks !== undefined) this.#marks = marks;
    this.#held = this.#incremental ? await heldKeys(this.paths, this.op, this.#marks, this.#partitioning, this.#format, STABLE_KEY) : new Set();
  }

  /** Refuses, before any request, a shard count other than the one the dataset was written with. */
  #checkShards(schema: SchemaFile | undefined): void {
    const recorded = schema?.shards;
    if (recorded === undefined || recorded === this.#shards) return;
    const wrote = recorded === 1 ? 'one writer' : `${recorded} shards (--shard K/${recorded})`;
    const asked = this.#shards === 1 ? 'one writer' : `${this.#shards} shards`;
    throw new ShardCountError(
      `${this.output} holds ${this.op.id} written by ${wrote}, and this run asks for ${asked}: a record would be in two writers' files. ` +
        `Run it as ${recorded === 1 ? 'one writer (no --shard)' : `--shard K/${recorded}`}, or export into a new directory`,
      this.output,
      recorded,
      this.#shards,
    );
  }

  /** A dataset is "complete" only for the run it last published complete (`runId`): any other run buys what is new. */
  isComplete(): Promise<boolean> {
    return Promise.resolve(this.#runId !== undefined && this.#marks.completedRun === this.#runId);
  }

  async discard(): Promise<void> {
    await rm(this.paths.staging, { recursive: true, force: true });
  }

  /**
   * Holds a page to a frozen schema, tracks the walk's newest plausible record time in bounds (its
   * next mark), and ends a newest-first walk on evidence that everything further is held: a page
   * that ends in `EVIDENCE` held records in a row (or is held whole, when shorter), a record being
   * held by a plausible time more than `MARK_LAG_MS` below the mark or by its key in the dataset; or,
   * with `since`, a page that ends in as many records older than it. The records after them are older
   * still. A pinned or out-of-order record is one record, so it never ends a walk; a record whose
   * time is implausible (garbage, far future) counts as held only by its key, and as older than
   * `since` never.
   */
  inspect(walk: WalkState, records: readonly unknown[]): 'more' | 'stop' {
    if (records.length > 0) this.#checkFrozen(records);
    const newestFirst = isNewestFirst(this.op, walk.params);
    const now = Date.now();
    const mark = this.#incremental && newestFirst ? believed(this.#marks.walks[walkName(walk.params)]?.mark, now) : undefined;
    const held: boolean[] = [];
    const older: boolean[] = [];
    for (const record of records) {
      const time = plausibleTimeOf(this.op, record, now);
      if (time !== undefined && this.#inBounds(time) && (walk.newest === undefined || time > walk.newest)) walk.newest = time;
      held.push(mark !== undefined && ((time !== undefined && time <= mark - MARK_LAG_MS) || this.#isHeld(walk, record)));
      older.push(this.#since !== undefined && time !== undefined && time < this.#since);
    }
    const reached = mark !== undefined && endsIn(held);
    if (reached) walk.stoppedAtMark = true;
    return reached || (newestFirst && endsIn(older)) ? 'stop' : 'more';
  }

  /** Drops records outside `since`/`until`, and gives a record without a usable key its stable key. */
  admit(walk: WalkState, records: unknown[]): unknown[] {
    const admitted: unknown[] = [];
    for (const record of records) {
      const time = timeOf(this.op, record);
      if (time !== undefined && !this.#inBounds(time)) continue;
      const stable = keyOf(this.op, record) === undefined ? stableKeyOf(this.op, record, walk.params) : undefined;
      admitted.push(stable !== undefined && typeof record === 'object' && record !== null ? { ...record, [STABLE_KEY]: stable } : record);
    }
    return admitted;
  }

  #inBounds(time: number): boolean {
    return (this.#since === undefined || time >= this.#since) && (this.#until === undefined || time < this.#until);
  }

  #isHeld(walk: WalkState, record: unknown): boolean {
    const key = keyOf(this.op, record) ?? stableKeyOf(this.op, record, walk.params);
    return key !== undefined && this.#held.has(key);
  }

  /** A row's key: the operation's own, else the stable key it was staged with. */
  #keyOfRow(row: Record<string, unknown>): string | undefined {
    const own = keyOf(this.op, row);
    if (own !== undefined) return own;
    const stable = row[STABLE_KEY];
    return typeof stable === 'string' ? stable : undefined;
  }

  /**
   * Merges the spool into the partitions it touches, and moves the marks of walks that are done.
   * The new parts are written before the publish lock is taken: a writer's parts are its own (its
   * writer lock keeps them so), and writing them is most of a publish. Writers take turns only for
   * what they share: the schema, merged with what others recorded meanwhile, and the renames.
   */
  async publish(state: ExportState, complete: boolean): Promise<Published> {
    try {
      const planned = await this.#plan(state, complete);
      return await this.#locked(async () => {
        // A compaction finished here, or by another since the plan, moved the partitions: the plan is made again on the new ones.
        const journal = (await finishCompaction(this.paths)) ? await this.#plan(state, complete) : ((await this.#withRecordedSchema(planned)) ?? (await this.#plan(state, complete)));
        await writeJsonAtomic(this.paths.journal, journal);
        await this.#finishPublish(journal);
        return { dataset: journal.changes, repaired: journal.repaired, spoolTaken: true };
      });
    } catch (error) {
      // Parts written for a publish that did not happen would only be in the next one's way.
      await rm(join(this.paths.staging, 'parts'), { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
  }

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    return this.#publishLock === undefined ? withLock(this.paths, fn) : this.#publishLock(this.paths.lock, fn);
  }

  #checkFrozen(records: readonly unknown[]): void {
    // The run that records the first schema cannot drift from it.
    if (this.#policy !== 'freeze' || this.#tracker.first) return;
    const drift = this.#tracker.observe(records, this.#maxDepth);
    if (!hasDrift(drift)) return;
    const report: SchemaDrift = { added: drift.added.map(({ name, kind }) => ({ column: name, kind })), missing: [], conflicting: drift.conflicting };
    throw new SchemaDriftError(`${this.op.id}: the schema is frozen and a page drifts from it (${describeDrift(report)})`, report, this.output, {
      endpoint: this.op.id,
    });
  }

  /** Reads every staged record, merges them into the partitions they touch, and writes the new parts (staged). */
  async #plan(state: ExportState, complete: boolean): Promise<PublishJournal> {
    const recorded = await readSchemaFile(this.paths);
    // A compaction since this run opened may have changed it (`compact.ts`): the recorded one is the dataset's.
    if (recorded?.partitioning !== undefined) this.#partitioning = recorded.partitioning;
    const tracker = new SchemaTracker(recorded?.columns ?? []);
    const incoming = new Map<string, Record<string, unknown>[]>();
    let setAside = 0;
    if (state.spool.bytes > 0) {
      let chunk: Record<string, unknown>[] = [];
      for await (const record of fromNdjson(this.files.spool)) {
        // Without a key it would be appended again on every run: it is counted instead.
        if (this.#keyOfRow(record) === undefined) {
          setAside++;
          continue;
        }
        const partition = partitionOf(timeOf(this.op, record), this.#partitioning.by);
        let list = incoming.get(partition);
        if (list === undefined) incoming.set(partition, (list = []));
        list.push(record);
        chunk.push(record);
        if (chunk.length >= 1_000) {
          tracker.observe(chunk, this.#maxDepth);
          chunk = [];
        }
      }
      tracker.observe(chunk, this.#maxDepth);
    }
    const columns = mergeSchemas(recorded?.columns ?? [], tracker.columns());
    checkPartitionCollision(this.paths, this.#partitioning, columns);
    const schema: SchemaFile = { version: 1, operation: this.op.id, format: this.#format, columns, partitioning: this.#partitioning, shards: this.#shards };
    const renames: [string, string][] = [];
    let added = 0;
    let updated = 0;
    let repaired = 0;
    const partitions = [...incoming.keys()].sort();
    for (const partition of partitions) {
      const target = this.paths.part(partition, this.#format, this.#partitioning.column);
      const merged = this.#merge(await readExisting(target, this.#format), incoming.get(partition)!);
      added += merged.added;
      updated += merged.updated;
      // Old rows were repaired when first written: the count is this run's strings.
      repaired += (await writePart(merged.rows, this.paths.stagedPart(partition), this.#format, columns)).repaired;
      renames.push([this.paths.stagedPart(partition), target]);
    }
    const drift = tracker.drift();
    const stoppedAtMark = state.walks.filter((walk) => walk.stoppedAtMark === true).length;
    const changes: DatasetChanges = { added, updated, partitions, drift, writer: this.paths.writer, stoppedAtMark, setAside };
    return { renames, schema, marks: nextMarks(this.#marks, state.walks, complete ? this.#runId : undefined), drift, changes, repaired, next: complete ? null : afterPublish(state) };
  }

  /**
   * The plan with the columns other writers recorded since it was made (theirs first, as `#plan`
   * orders them); undefined when the recorded partitioning is no longer the one it was planned on.
   */
  async #withRecordedSchema(planned: PublishJournal): Promise<PublishJournal | undefined> {
    const recorded = await readSchemaFile(this.paths);
    if (recorded === undefined) return planned;
    if (JSON.stringify(recorded.partitioning ?? LEGACY_PARTITIONING) !== JSON.stringify(planned.schema.partitioning)) return undefined;
    const columns = mergeSchemas(recorded.columns, planned.schema.columns);
    checkPartitionCollision(this.paths, this.#partitioning, columns);
    return { ...planned, schema: { ...planned.schema, columns } };
  }

  /** One row per key, the version received last in place of older ones. */
  #merge(old: Record<string, unknown>[], incoming: Record<string, unknown>[]): { rows: Record<string, unknown>[]; added: number; updated: number } {
    const byKey = new Map<string, Record<string, unknown>>();
    const keyless: Record<string, unknown>[] = [];
    const keyOfRow = (row: Record<string, unknown>): string | undefined => this.#keyOfRow(row);
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

  /** Renames the staged parts into place, records schema, marks and drift, then leaves the staging as the journal says. */
  async #finishPublish(journal: PublishJournal): Promise<void> {
    for (const [from, to] of journal.renames) {
      await mkdir(dirname(to), { recursive: true });
      try {
        await rename(from, to);
      } catch (error) {
        // Renamed before a crash: the staged file is gone and the part is in place.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    await writeJsonAtomic(this.paths.schema, journal.schema);
    await writeJsonAtomic(this.paths.state, journal.marks);
    await writeJsonAtomic(this.paths.drift, { operation: journal.schema.operation, at: new Date().toISOString(), frozen: false, drift: journal.drift });
    this.#marks = journal.marks;
    this.#tracker = new SchemaTracker(journal.schema.columns);
    if (journal.next === null) {
      await rm(this.paths.staging, { recursive: true, force: true });
      return;
    }
    // The walks go on from their checkpoints; the records are in the parts now, so the spool starts empty.
    await writeState(this.files.journal, journal.next);
    await rm(this.files.spool, { force: true });
    await rm(join(this.paths.staging, 'parts'), { recursive: true, force: true });
    await rm(this.paths.journal, { force: true });
  }

  /** Records the drift a frozen schema met; the staging stays for a resume after the schema is settled. */
  async recordFrozenDrift(error: SchemaDriftError): Promise<void> {
    await writeJsonAtomic(this.paths.drift, { operation: this.op.id, at: new Date().toISOString(), frozen: true, drift: error.drift });
  }
}

/** The staging state once the spool is published: the same walks and totals, an empty spool. */
function afterPublish(state: ExportState): ExportState {
  const empty = freshState(state.op, []);
  return { ...state, walks: state.walks.map((walk) => ({ ...walk })), spool: empty.spool, run: { ...state.run } };
}

async function readExisting(path: string, format: DatasetFormat): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  try {
    for await (const row of readPart(path, format)) rows.push(row);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return rows;
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatasetError(`cannot read the part file ${path} back to merge into it (${reason}); move it aside, or restore it, then resume`, path, { cause: error });
  }
  return rows;
}
