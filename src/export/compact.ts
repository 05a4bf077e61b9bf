/**
 * `compactDataset`: rewrites a dataset's many small part files as few, in place, crash-safe.
 *
 * What merges: a writer's parts of the partitions that a coarser partitioning puts together (a
 * dataset by day becomes one part a month, or a year, or one in all). What does not: parts of
 * different writers (`--shard K/N`) in one partition. Each writer merges its later runs into its own
 * part of a partition and into no other, so a record moved into a part another writer owns would be
 * written again, beside itself, by the next run of its writer. Writers share parts only once the
 * writer model lets a publish merge across writers (issue 20, item 4).
 *
 * How it stays safe: it takes every writer's lock (`LOCKED` while an export runs; none can start
 * meanwhile), finishes any publish a killed run left, then under the publish lock writes the new
 * parts staged, the journal (`compaction-journal.ts`), renames them into place, removes the old ones
 * and records the new partitioning. A kill before the journal leaves the dataset as it was; after
 * it, the next export or compaction finishes it. Rows are moved as read, never merged by key: the
 * dataset reads the same rows before and after.
 */
import { join, relative } from 'node:path';
import { DatasetError } from '../errors.ts';
import { timeOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { findOperation } from '../operations/table.ts';
import { readPart, writePart } from '../../sinks/dataset-parts.ts';
import {
  compactionStaging,
  finishCompaction,
  writeCompactionJournal,
  type CompactionJournal,
} from './compaction-journal.ts';
import { DatasetDestination } from './dataset.ts';
import { checkParts } from './dataset-state.ts';
import { pathsOf, scanOperations, scanParts, scanWriters, shardOf, type ScannedOperation, type ScannedPart } from './dataset-scan.ts';
import { PARTITION_BYS, partitionOf, UNDATED, UNPARTITIONED, withLock, writerName, type PartitionBy } from './dataset-store.ts';
import { fileSize } from './durable.ts';
import { lockOutput, type OutputLock } from './lock.ts';

export interface CompactOptions {
  /**
   * The partitioning afterwards: as recorded (the default), or a coarser one (`day` → `month` →
   * `year` → `none`), whose partitions each hold one part per writer. Every later run keeps it.
   */
  partition?: PartitionBy;
  /** Only this operation (e.g. `forum/subforum`); default every operation of the dataset. */
  operation?: string;
}

export interface OperationCompaction {
  operation: string;
  partitioning: { before: PartitionBy; after: PartitionBy };
  parts: { before: number; after: number };
  bytes: { before: number; after: number };
  /** Rows rewritten into new parts (0 when there was nothing to merge). */
  rows: number;
  /** Writers whose parts stay apart (see the top of `compact.ts`). */
  writers: string[];
  /** A compaction or publish a kill left half done was finished first. */
  recovered: boolean;
}

export interface CompactionSummary {
  dir: string;
  operations: OperationCompaction[];
}

/** Compacts the dataset at `dir` in place; refused with `LOCKED` while an export writes it. */
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

async function compact(dir: string, options: CompactOptions, finish: boolean): Promise<CompactionSummary> {
  if (options.partition !== undefined && !PARTITION_BYS.includes(options.partition)) {
    throw new TypeError(`partition must be one of ${PARTITION_BYS.join(', ')}, got ${JSON.stringify(options.partition)}`);
  }
  let operations = await scanOperations(dir);
  if (options.operation !== undefined) {
    operations = operations.filter((operation) => operation.operation === options.operation);
    if (operations.length === 0) throw new DatasetError(`${dir} holds no operation ${options.operation}`, dir);
  }
  const done: OperationCompaction[] = [];
  for (const operation of operations) done.push(await compactOperation(dir, operation, options.partition, finish));
  return { dir, operations: done };
}

async function compactOperation(dir: string, scanned: ScannedOperation, by: PartitionBy | undefined, finish: boolean): Promise<OperationCompaction> {
  const spec = findOperation(scanned.operation);
  if (spec === undefined) throw new DatasetError(`${dir} holds ${scanned.operation}, an operation this version does not know`, dir);
  const writers = await scanWriters(scanned, await scanParts(dir, scanned));
  const locks: OutputLock[] = [];
  try {
    for (const writer of writers) locks.push(await lockOutput(dir, join(scanned.paths.meta, `writer-${writer}.lock`)));
    const recovered = await finishPublishes(dir, spec, scanned, writers);
    return await withLock(scanned.paths, async () => {
      const compacted = await finishCompaction(scanned.paths);
      // Read again: a finished compaction or publish changed the schema and the parts.
      const operation = (await scanOperations(dir)).find((each) => each.operation === scanned.operation) ?? scanned;
      return { ...(await rewrite(dir, spec, operation, by, finish)), recovered: recovered || compacted };
    });
  } finally {
    for (const lock of locks) await lock.release();
  }
}

/** Finishes the publish of every writer a kill left half done (its renames name parts this would move). */
async function finishPublishes(dir: string, spec: OperationSpec, operation: ScannedOperation, writers: readonly string[]): Promise<boolean> {
  let any = false;
  for (const writer of writers) {
    const shard = shardOf(writer);
    if (writerName(shard) !== writer || (await fileSize(pathsOf(operation, writer).journal)) === undefined) continue;
    await new DatasetDestination(dir, spec, { shard }).recover(false);
    any = true;
  }
  return any;
}

const ORDER: readonly PartitionBy[] = ['day', 'month', 'year', 'none'];
const PREFIX: Record<Exclude<PartitionBy, 'none'>, number> = { day: 10, month: 7, year: 4 };

async function rewrite(
  dir: string,
  spec: OperationSpec,
  operation: ScannedOperation,
  asked: PartitionBy | undefined,
  finish: boolean,
): Promise<Omit<OperationCompaction, 'recovered'>> {
  const from = operation.partitioning;
  const by = asked ?? from.by;
  if (ORDER.indexOf(by) < ORDER.indexOf(from.by)) {
    throw new DatasetError(
      `${dir} holds ${operation.operation} partitioned by ${from.by}; compaction merges partitions and cannot split them by ${by} (export into a new directory for a finer partitioning)`,
      dir,
    );
  }
  const parts = await scanParts(dir, operation);
  await checkParts(parts.map((part) => part.path), operation.format, operation.paths);
  const writers = [...new Set(parts.map((part) => part.writer))].sort();
  const bytes = parts.reduce((sum, part) => sum + part.bytes, 0);
  const unchanged = { operation: operation.operation, partitioning: { before: from.by, after: by }, writers };
  if (by === from.by || parts.length === 0 || operation.schema === undefined) {
    return { ...unchanged, parts: { before: parts.length, after: parts.length }, bytes: { before: bytes, after: bytes }, rows: 0 };
  }
  const { schema } = operation;
  const journal: CompactionJournal = {
    version: 1,
    operation: operation.operation,
    renames: [],
    removes: [],
    schema: { ...schema, partitioning: { by, column: from.column } },
  };
  const staging = compactionStaging(operation.paths);
  let rows = 0;
  for (const writer of writers) {
    const paths = pathsOf(operation, writer);
    const targets = new Set<string>();
    for (const [partition, group] of groupsOf(parts.filter((part) => part.writer === writer), by)) {
      // A row goes where a later publish looks for it: the partition of its own time.
      const records: Record<string, unknown>[] = [];
      for (const part of group) for await (const record of readPart(part.path, operation.format)) records.push(record);
      const strays = records.filter((record) => partitionOf(timeOf(spec, record), by) !== partition);
      if (strays.length > 0) {
        throw new DatasetError(
          `${group[0].path} holds ${strays.length} rows whose time is not of its partition; compaction would move them where no run merges into them`,
          dir,
        );
      }
      const staged = join(staging, writer, `${partition}.staged`);
      const target = paths.part(partition, operation.format, from.column);
      await writePart(records, staged, operation.format, schema.columns);
      journal.renames.push([relative(dir, staged), relative(dir, target)]);
      targets.add(target);
      rows += records.length;
    }
    for (const part of parts) if (part.writer === writer && !targets.has(part.path)) journal.removes.push(relative(dir, part.path));
  }
  await writeCompactionJournal(operation.paths, journal);
  if (finish) await finishCompaction(operation.paths);
  const compacted = await scanParts(dir, { ...operation, partitioning: { by, column: from.column } });
  return {
    ...unchanged,
    parts: { before: parts.length, after: finish ? compacted.length : journal.renames.length },
    bytes: { before: bytes, after: compacted.reduce((sum, part) => sum + part.bytes, 0) },
    rows,
  };
}

/**
 * A writer's parts grouped by the coarser partition their folders fall in. A folder that names no
 * date (`undated`, or `+057425-04` from before out-of-range years were undated) holds undated rows.
 */
function groupsOf(parts: readonly ScannedPart[], by: PartitionBy): Map<string, ScannedPart[]> {
  const groups = new Map<string, ScannedPart[]>();
  for (const part of parts) {
    const dated = /^\d{4}(?:-\d{2}){0,2}$/.test(part.partition);
    const partition = by === 'none' ? UNPARTITIONED : dated ? part.partition.slice(0, PREFIX[by]) : UNDATED;
    const group = groups.get(partition);
    if (group === undefined) groups.set(partition, [part]);
    else group.push(part);
  }
  return groups;
}
