/**
 * `compactDataset`: rewrites a dataset's part files as few, in place, crash-safe
 * (`rewrite.ts` does the rewriting).
 *
 * What merges: every part of the partitions that a coarser partitioning puts together (a dataset by
 * day becomes one bucket part a month, or a year, or one in all), and the parts writers kept apart
 * before the bucket layout (`part-<writer>`, `part-walk-…`, `part-shard-K-of-N`): a key in several
 * of them keeps the version fetched last. A dataset already in buckets at the partitioning and
 * Parquet layout asked for is left as it is; asked for the other layout, every part is rewritten
 * into it (`nesting.ts` types the new columns from every row first).
 *
 * How it stays safe: it takes the locks an export of the same store would (`chooseDatasetLocks`:
 * lock folders on a local folder, leases on a bucket that honours conditional writes, the caller's
 * Redis leases when given, `--locks`), so it sees its writers' and they see it: every writer's lock
 * (`LOCKED` while an export runs; none can start meanwhile), then the publish lock once no publish
 * pass is at work (`exclusively`). It finishes any publish or compaction a kill left, stores the new
 * parts staged, the journal (`compaction-journal.ts`), moves them into place, removes the old ones
 * and records the new partitioning. A kill before the journal leaves the dataset as it was; after
 * it, the next export or compaction finishes it. A dataset whose settings record another lock
 * mechanism than these (Redis leases, without `--locks`) is refused: its writers' locks are unseen.
 */
import { join } from 'node:path';
import { DatasetError, DatasetLayoutError } from '../errors.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { checkShape } from '../export/options.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { findOperation } from '../operations/table.ts';
import { finishCompaction } from './compaction-journal.ts';
import { finishLegacyGroup, finishLegacyPublishes, rewriteIntoBuckets } from './rewrite.ts';
import { exclusively } from './passes.ts';
import { DatasetLocks } from './locks.ts';
import { indexesShareAKey } from './key-index.ts';
import { isCurrentLayout, scanOperations, scanParts, scanWriters, type ScannedOperation } from './scan.ts';
import { checkParts } from './state.ts';
import { atLeastAsCoarse, type PartitionBy } from '../export/partition-by.ts';
import { recordedLayout } from './nesting.ts';
import { lockOutput, type OutputLock } from '../export/lock.ts';
import { partHoldsSchema } from './part-types.ts';
import type { Storage } from './storage/types.ts';
import type { ExportLocks } from '../export/types.ts';
import { chooseDatasetLocks, publishLocksOf, type DatasetLockChoice } from './lock-choice.ts';
import type { RecordedLocks } from './locks.ts';
import { withDatasetStore } from './open-dataset.ts';
import type { RecordedSchema, ScannedPart } from './scan.ts';

/** Options of `compactDataset`: a coarser partitioning, or the other Parquet layout. */
export interface CompactOptions {
  /**
   * The partitioning afterwards: as recorded (the default), or a coarser one (`day` → `month` →
   * `year` → `none`), whose partitions each hold the bucket parts of the dataset's layout. Every later run keeps it.
   */
  partition?: PartitionBy;
  /** Only this operation (e.g. `forum/subforum`); default every operation of the dataset. */
  operation?: string;
  /**
   * The Parquet layout afterwards: as recorded (the default), or the other one, into which every
   * part is rewritten (docs/datasets.md "Parquet layout"). Every later run keeps it.
   */
  layout?: ParquetLayout;
  /**
   * The Redis leases the dataset's writers lock it with (`openRedisLocks`: `--locks redis://…`):
   * needed for a dataset written through a queue or with `--locks`, and for a bucket that ignores
   * conditional writes. Default: lock folders on a local folder, leases on a bucket.
   */
  locks?: ExportLocks;
}

/** What `compactDataset` did to one operation's parts. */
export interface OperationCompaction {
  operation: string;
  partitioning: { before: PartitionBy; after: PartitionBy };
  /** The Parquet layout before and after (undefined for NDJSON and CSV parts). */
  layout: { before: ParquetLayout | undefined; after: ParquetLayout | undefined };
  parts: { before: number; after: number };
  bytes: { before: number; after: number };
  /** Rows rewritten into new parts (0 when there was nothing to merge). */
  rows: number;
  /** Writers whose own parts (before the bucket layout) were merged into bucket parts. */
  writers: string[];
  /** A compaction or publish a kill left half done was finished first. */
  recovered: boolean;
}

/** What `compactDataset` did, per operation. */
export interface CompactionSummary {
  dir: string;
  operations: OperationCompaction[];
}

/** Compacts the dataset at `dir` (a folder or `s3://bucket/prefix`) in place; refused with `LOCKED` while an export writes it. */
export async function compactDataset(dir: string, options: CompactOptions = {}): Promise<CompactionSummary> {
  return compact(dir, options, true);
}

/**
 * What a compaction killed right after writing its journal leaves: the new parts staged, the journal
 * naming them, nothing renamed yet. For tests of recovery; `compactDataset` is the whole of it.
 */
export async function stageCompaction(dir: string, options: CompactOptions = {}): Promise<CompactionSummary> {
  return compact(dir, options, false);
}

const COMPACT_OPTIONS = { partition: true, operation: true, layout: true, locks: true } as const satisfies KnownOptions<CompactOptions>;

async function compact(dir: string, options: CompactOptions, finish: boolean): Promise<CompactionSummary> {
  refuseUnknownOptions(options, COMPACT_OPTIONS, 'compactDataset');
  checkShape(options);
  return withDatasetStore(dir, 'dir', async (storage) => {
    // Before anything is read: a bucket that cannot hold leases is refused naming --locks.
    const choice = await chooseDatasetLocks(storage, dir, options.locks);
    let operations = await scanOperations(storage, dir);
    if (options.operation !== undefined) {
      operations = operations.filter((operation) => operation.operation === options.operation);
      if (operations.length === 0) throw new DatasetError(`${dir} holds no operation ${options.operation}`, dir);
    }
    const done: OperationCompaction[] = [];
    for (const operation of operations) done.push(await compactOperation(storage, dir, operation, options, choice, finish));
    return { dir, operations: done };
  });
}

async function compactOperation(storage: Storage, dir: string, scanned: ScannedOperation, options: CompactOptions, choice: DatasetLockChoice, finish: boolean): Promise<OperationCompaction> {
  const spec = findOperation(scanned.operation);
  if (spec === undefined) throw new DatasetError(`${dir} holds ${scanned.operation}, an operation this version does not know`, dir);
  checkMechanism(dir, scanned.schema?.locks, choice);
  const writers = await scanWriters(scanned, await scanParts(dir, scanned));
  const locks: OutputLock[] = [];
  try {
    for (const writer of writers) locks.push(await writerLock(choice, dir, join(scanned.paths.meta, `writer-${writer}.lock`)));
    const publishLocks = new DatasetLocks(publishLocksOf(choice));
    // No pass is live meanwhile: those a kill left are finished first, their moves name parts this would move.
    return await exclusively(scanned.paths, publishLocks, async (passes) => {
      const compacted = await finishCompaction(scanned.paths);
      const published = (await finishLegacyGroup(scanned.paths, publishLocks)) || passes;
      await finishLegacyPublishes(scanned.paths);
      // Read again: a finished compaction or publish changed the schema and the parts.
      const operation = (await scanOperations(storage, dir)).find((each) => each.operation === scanned.operation) ?? scanned;
      return { ...(await rewrite(dir, spec, operation, options, finish)), recovered: compacted || published };
    });
  } finally {
    for (const lock of locks) await lock.release();
  }
}

async function rewrite(dir: string, spec: OperationSpec, operation: ScannedOperation, options: CompactOptions, finish: boolean): Promise<Omit<OperationCompaction, 'recovered'>> {
  const from = operation.partitioning;
  const by = options.partition ?? from.by;
  const recorded = operation.schema === undefined ? undefined : recordedLayout(operation.schema);
  if (options.layout !== undefined && operation.schema !== undefined && recorded === undefined) {
    throw new DatasetLayoutError(`${dir} holds ${operation.operation} as ${operation.format} part files, which have no Parquet layout to convert`, dir, undefined, options.layout);
  }
  const layout = { before: recorded, after: options.layout ?? recorded };
  if (!atLeastAsCoarse(by, from.by)) {
    throw new DatasetError(
      `${dir} holds ${operation.operation} partitioned by ${from.by}; compaction merges partitions and cannot split them by ${by} (export into a new directory for a finer partitioning)`,
      dir,
    );
  }
  const parts = await scanParts(dir, operation);
  await checkParts(parts, operation.format, operation.paths);
  const writers = [...new Set(parts.flatMap((part) => part.writer ?? []))].sort();
  const bytes = parts.reduce((sum, part) => sum + part.bytes, 0);
  const unchanged = { operation: operation.operation, partitioning: { before: from.by, after: by }, layout, writers };
  // Bucket parts at the recorded partitioning and layout, each key in one of them, are what a rewrite would write again.
  const bucketed = operation.schema !== undefined && (await isCurrentLayout(operation.paths, operation.schema)) && writers.length === 0 && !(await indexesShareAKey(operation.paths.storage, operation.paths.names.keyIndexes));
  // Parts written before a run widened a column hold the narrower type: compaction gives every part the recorded one.
  const typed = operation.schema === undefined || (await everyPartHolds(operation.paths.storage, parts, operation.schema));
  if ((by === from.by && layout.after === layout.before && bucketed && typed) || operation.schema === undefined) {
    return { ...unchanged, parts: { before: parts.length, after: parts.length }, bytes: { before: bytes, after: bytes }, rows: 0 };
  }
  return { ...unchanged, ...(await rewriteIntoBuckets(spec, operation, by, finish, layout.after)) };
}

/** A writer's lock at `path`, taken as its exports take it: a pid file in a folder, else a lease of `choice`. */
function writerLock(choice: DatasetLockChoice, dir: string, path: string): Promise<OutputLock> {
  return choice.mechanism === 'folders' ? lockOutput(dir, path) : choice.locks.output(dir, path);
}

/**
 * Refuses a dataset whose settings record another lock mechanism than the one this compaction takes
 * (as an export is refused: `DatasetDestination`): its writers would not see the compaction's locks,
 * nor it theirs. A dataset that records none was written with lock folders, or copied to where it is.
 */
function checkMechanism(dir: string, recorded: RecordedLocks | undefined, choice: DatasetLockChoice): void {
  if (recorded === undefined || recorded === choice.mechanism) return;
  if (recorded === 'queue') {
    throw new DatasetError(
      `${dir} is written through a queue or with --locks, whose writers lock it with Redis leases that \`dataset compact\` sees only with --locks redis://… (the same Redis)`,
      dir,
    );
  }
  throw new DatasetError(
    `${dir} is locked with leases on its store, which \`dataset compact\` takes only on that store (s3://…) without --locks; here it would take ${choice.mechanism === 'folders' ? 'lock files' : 'Redis leases'}`,
    dir,
  );
}

/** Whether every part was written with the recorded schema's types (`part-types.ts`). */
async function everyPartHolds(storage: Storage, parts: readonly ScannedPart[], schema: RecordedSchema): Promise<boolean> {
  for (const part of parts) if (!(await partHoldsSchema(storage, part, { format: schema.format, columns: schema.columns, parquetLayout: recordedLayout(schema) }))) return false;
  return true;
}
