/**
 * `datasetInfo`: what a dataset holds, read off its files without changing any (no lock, no
 * recovery): per operation its rows, partitions, part files, writers, marks, schema, last drift,
 * and anything staged or half done. It is the CLI's text (`describeDatasetInfo`), and renders itself in
 * Jupyter through the view `src/notebook/export-views.ts` attaches (`attachInfoView`).
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { SchemaDrift } from '../errors.ts';
import { overflowCounts, readPart, withPartFile, type DatasetFormat, type HeldNames } from './parts.ts';
import type { Storage } from './storage/types.ts';
import { heldNames } from './columns.ts';
import { typeName, type SchemaColumn } from './schema.ts';
import { describeDrift } from '../export/summary.ts';
import { JUPYTER_DISPLAY, textBundle, type MediaBundle } from '../jupyter.ts';
import { tableText, type Grid } from '../text-table.ts';
import { hasPendingCompaction } from './compaction-journal.ts';
import { pathsOf, scanMeta, scanOperations, scanParts, type ScannedPart } from './scan.ts';
import { withDatasetStore } from './open-dataset.ts';
import { partMetadata } from './part-footer.ts';
import { coarserThan, type PartitionBy } from '../export/partition-by.ts';
import { checkParts, readDriftFile, readMarksFile } from './state.ts';
import { isAlive } from '../export/durable.ts';
import { allWalkMarks } from './marks.ts';
import { loadState } from '../export/journal.ts';
import { counted } from '../export/progress.ts';

/**
 * What `datasetInfo` reads from a dataset's files: per operation its rows, partitions, part files,
 * schema and writers. Renders itself in Jupyter.
 */
export interface DatasetInfo {
  dir: string;
  operations: OperationInfo[];
  rows: number;
  parts: number;
  bytes: number;
  /** The dataset's summary as the HTML and text a notebook shows. */
  [JUPYTER_DISPLAY](): MediaBundle;
}

/** One operation of a dataset, as `datasetInfo` reads it. */
export interface OperationInfo {
  operation: string;
  format: DatasetFormat;
  /** How part files split by their records' time, and the Hive key of the folders (`_date`). */
  partitioning: { by: PartitionBy; column: string };
  rows: number;
  parts: number;
  bytes: number;
  partitions: PartitionInfo[];
  writers: WriterInfo[];
  /** Columns and kinds every part uses; empty before the first publish. */
  schema: SchemaColumn[];
  /** Values no column holds, kept in the overflow column (`_extra`), counted by their dotted path from the parts, most first. */
  extra: ExtraCount[];
  /** A compaction was killed after its journal: the next export or compaction finishes it. */
  compacting: boolean;
  /** Per walk (parameter set), the newest record time published: a later newest-first run stops there. */
  marks: MarkInfo[];
  /** Set when its part files are many and small enough to slow every reader: why, and what to do. */
  smallFiles?: string;
}

/** How many values of one path sit in `_extra` (a dataset's overflow column). */
export interface ExtraCount {
  /** The escaped dotted path the values were spilled from (`score`, `author.id`). */
  path: string;
  values: number;
}

/** One partition of an operation in a dataset: its rows, parts and bytes. */
export interface PartitionInfo {
  name: string;
  rows: number;
  parts: number;
  bytes: number;
}

/**
 * One writer of a dataset operation: its parts, marks, last drift, and whether an export is writing
 * now.
 */
export interface WriterInfo {
  /** `all`, `shard-K-of-N`, or a queue walk's `walk-<walkName>`. */
  name: string;
  rows: number;
  parts: number;
  bytes: number;
  /** Marks a writer's file held before walks kept their own (`OperationInfo.marks`): until the dataset is migrated. */
  marks: MarkInfo[];
  /** The schema drift of its last publish. */
  drift?: { at: string; frozen: boolean; drift: SchemaDrift };
  /** An unfinished run: what it staged and has not published (`export --resume` continues it). */
  staged?: StagedInfo;
  /** The pid of the export writing now. */
  running?: number;
}

/** The high-water mark of one walk of a dataset. */
export interface MarkInfo {
  params: Record<string, string>;
  /** Unix ms. */
  mark: number;
  markTime: string;
}

/**
 * What a dataset holds staged and not yet published: an unfinished run, or a publish or compaction
 * a kill left half done.
 */
export interface StagedInfo {
  walks: { done: number; total: number };
  /** Records, pages and credits staged since the last publish, over every run of the export. */
  records: number;
  pages: number;
  credits: number;
  /** A publish was killed after its journal: the next export of this writer finishes it. */
  publishing: boolean;
  /** The staging cannot be read (e.g. edited): its message. */
  damaged?: string;
  /**
   * A writer's staging on a store (S3): the objects it holds. Its pages and walks are not read from
   * the store yet, so `walks`, `records`, `pages` and `credits` are 0 there.
   */
  objects?: number;
}

/** What the dataset at `dir` (a folder or `s3://bucket/prefix`) holds; a location that is no dataset is refused (`DATASET`). */
export async function datasetInfo(dir: string): Promise<DatasetInfo> {
  return withDatasetStore(dir, 'dir', (storage) => infoOf(storage, dir));
}

async function infoOf(storage: Storage, dir: string): Promise<DatasetInfo> {
  const operations: OperationInfo[] = [];
  for (const operation of await scanOperations(storage, dir)) {
    const parts = await scanParts(dir, operation);
    await checkParts(parts, operation.format, operation.paths);
    const rows = new Map<ScannedPart, number>();
    for (const part of parts) rows.set(part, await rowsIn(storage, part, operation.format, heldNames(operation.partitioning)));
    const partitions = new Map<string, PartitionInfo>();
    for (const part of parts) {
      const info = partitions.get(part.partition) ?? { name: part.partition, rows: 0, parts: 0, bytes: 0 };
      partitions.set(part.partition, add(info, part, rows.get(part)!));
    }
    const writers: WriterInfo[] = [];
    const meta = await scanMeta(operation, parts);
    for (const name of meta.writers) {
      const own = parts.filter((part) => part.writer === name);
      const info = await writerInfo(pathsOf(operation, name), name, own, rows, meta.staged.get(name) ?? 0);
      // `all` is listed only when it wrote or holds something.
      if (name !== 'all' || own.length > 0 || info.marks.length > 0 || info.staged !== undefined || info.running !== undefined) writers.push(info);
    }
    operations.push({
      operation: operation.operation,
      format: operation.format,
      partitioning: operation.partitioning,
      rows: sum([...rows.values()]),
      parts: parts.length,
      bytes: sum(parts.map((part) => part.bytes)),
      partitions: [...partitions.values()],
      writers,
      schema: operation.schema?.columns ?? [],
      extra: await extraIn(operation.paths.storage, parts, operation.format),
      compacting: await hasPendingCompaction(operation.paths),
      marks: (await allWalkMarks(operation.paths)).map(({ params, mark, markTime }) => ({ params, mark, markTime })),
      ...smallFiles(dir, operation.partitioning.by, parts),
    });
  }
  const info = {
    dir,
    operations,
    rows: sum(operations.map((operation) => operation.rows)),
    parts: sum(operations.map((operation) => operation.parts)),
    bytes: sum(operations.map((operation) => operation.bytes)),
  };
  return Object.defineProperty(info, JUPYTER_DISPLAY, { value: (): MediaBundle => infoView?.(info) ?? textBundle(describeDatasetInfo(info)) }) as DatasetInfo;
}

async function writerInfo(
  paths: ReturnType<typeof pathsOf>,
  name: string,
  parts: readonly ScannedPart[],
  rows: ReadonlyMap<ScannedPart, number>,
  stagedObjects: number,
): Promise<WriterInfo> {
  const marks = await readMarksFile(paths);
  const drift = await readDriftFile(paths);
  const info: WriterInfo = {
    name,
    rows: sum(parts.map((part) => rows.get(part)!)),
    parts: parts.length,
    bytes: sum(parts.map((part) => part.bytes)),
    marks: Object.values(marks?.walks ?? {}).map(({ params, mark, markTime }) => ({ params, mark, markTime })),
  };
  if (drift !== undefined) info.drift = { at: drift.at, frozen: drift.frozen, drift: drift.drift };
  const local = paths.storage.folder !== undefined;
  const staged = local ? await stagedInfo(paths) : await stagedOnStore(paths, stagedObjects);
  if (staged !== undefined) info.staged = staged;
  // A writer's pid file is a local folder's lock; a store's writer lock is a lease, which says no pid.
  const pid = local ? Number((await readFile(join(paths.meta, `writer-${name}.lock`), 'utf8').catch(() => '')).trim()) : 0;
  if (Number.isSafeInteger(pid) && pid > 0 && isAlive(pid)) info.running = pid;
  return info;
}

/**
 * A store writer's staging, as far as it is read yet: how many objects it holds (counted in the
 * listing `scanMeta` made), not its pages and walks, and whether a publish of it was interrupted.
 */
async function stagedOnStore(paths: ReturnType<typeof pathsOf>, objects: number): Promise<StagedInfo | undefined> {
  const publishing = await paths.storage.exists(paths.names.journal);
  if (objects === 0 && !publishing) return undefined;
  return { walks: { done: 0, total: 0 }, records: 0, pages: 0, credits: 0, publishing, objects };
}

async function stagedInfo(paths: ReturnType<typeof pathsOf>): Promise<StagedInfo | undefined> {
  const publishing = await paths.storage.exists(paths.names.journal);
  const checkpoint = join(paths.staging, 'checkpoint.json');
  try {
    const state = await loadState(checkpoint);
    if (state === undefined && !publishing) return undefined;
    return {
      walks: { done: state?.walks.filter((walk) => walk.done).length ?? 0, total: state?.walks.length ?? 0 },
      records: state?.records ?? 0,
      pages: state?.pages ?? 0,
      credits: state?.credits ?? 0,
      publishing,
    };
  } catch (error) {
    return { walks: { done: 0, total: 0 }, records: 0, pages: 0, credits: 0, publishing, damaged: (error as Error).message };
  }
}

/** What the parts hold in `_extra`, by path (`overflowCounts`): counted when asked, so writing a part costs nothing more. */
async function extraIn(storage: Storage, parts: readonly ScannedPart[], format: DatasetFormat): Promise<ExtraCount[]> {
  const totals = new Map<string, number>();
  for (const part of parts) for (const [path, values] of await withPartFile(storage, part.name, (file) => overflowCounts(file, format))) totals.set(path, (totals.get(path) ?? 0) + values);
  return [...totals].map(([path, values]) => ({ path, values })).sort((a, b) => b.values - a.values || (a.path < b.path ? -1 : 1));
}

/** Rows of a part: Parquet says so in its footer (its last bytes, read through the store); NDJSON and CSV parts are read and counted. */
async function rowsIn(storage: Storage, part: ScannedPart, format: DatasetFormat, held: HeldNames): Promise<number> {
  if (format === 'parquet') return Number((await partMetadata(storage, part.name, part.bytes)).num_rows);
  return withPartFile(storage, part.name, (path) => rowsOfText(path, format, held));
}

/** Rows of a local NDJSON or CSV file holding a part. */
async function rowsOfText(path: string, format: Exclude<DatasetFormat, 'parquet'>, held: HeldNames): Promise<number> {
  let rows = 0;
  if (format === 'ndjson') {
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) if (line.trim() !== '') rows++;
    return rows;
  }
  for await (const _ of readPart(path, format, held)) rows++;
  return rows;
}

/** Past this many part files, each adds about 0.1 ms and 11 KB of metadata to every query (docs/datasets.md). */
const MANY_PARTS = 100;
const SMALL_PART_BYTES = 1024 * 1024;

/** A warning when the parts are many and small on average: parts of writers before buckets, or partitions finer than the data. */
function smallFiles(dir: string, by: PartitionBy, parts: readonly ScannedPart[]): { smallFiles?: string } {
  const bytes = sum(parts.map((part) => part.bytes));
  if (parts.length <= MANY_PARTS || bytes / parts.length >= SMALL_PART_BYTES) return {};
  const average = size(Math.round(bytes / parts.length));
  const writers = parts.filter((part) => part.writer !== undefined).length;
  const coarser = coarserThan(by);
  const remedy =
    writers > 0
      ? `${counted(writers, 'part')} of writers before the bucket layout: \`socialstream dataset compact ${dir}\` merges them into one part a bucket`
      : coarser === undefined
        ? 'the dataset is small for its buckets'
        : `\`socialstream dataset compact ${dir} --partition ${coarser}\` makes fewer, larger parts`;
  return { smallFiles: `${counted(parts.length, 'part file')} of ${average} on average slow every reader (each adds about 0.1 ms and 11 KB to a query): ${remedy}` };
}

function add(info: PartitionInfo, part: ScannedPart, rows: number): PartitionInfo {
  return { name: info.name, rows: info.rows + rows, parts: info.parts + 1, bytes: info.bytes + part.bytes };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** How a dataset's info shows itself in a notebook; text until a richer view is attached. */
let infoView: ((info: DatasetInfoData) => MediaBundle) | undefined;

/** Sets how dataset infos render in Jupyter (`src/notebook/export-views.ts` attaches its HTML). */
export function attachInfoView(view: (info: DatasetInfoData) => MediaBundle): void {
  infoView = view;
}

/** A dataset's info as data, without its Jupyter display. */
export type DatasetInfoData = Omit<DatasetInfo, typeof JUPYTER_DISPLAY>;

/** The info as text: what the CLI prints and a notebook shows without HTML. */
export function describeDatasetInfo(info: DatasetInfoData): string {
  const lines = [`dataset ${info.dir}: ${counted(info.operations.length, 'operation')}, ${counted(info.rows, 'row')} in ${counted(info.parts, 'part file')} (${size(info.bytes)})`];
  for (const operation of info.operations) {
    lines.push('', ...operationLines(operation));
    lines.push(tableText(partitionGrid(operation)).replace(/^/gm, '  '));
  }
  return lines.join('\n');
}

/** An operation's head line and its details, one a line (the text and the HTML views both list them). */
export function operationLines(operation: OperationInfo): string[] {
  const { partitioning } = operation;
  const lines = [
    `${operation.operation}: ${counted(operation.rows, 'row')}, ${counted(operation.partitions.length, 'partition')} by ${partitioning.by} (${partitioning.column}=…), ` +
      `${counted(operation.parts, 'part file')} (${operation.format}, ${size(operation.bytes)})`,
  ];
  const schema = operation.schema.map((column) => `${column.name} ${typeName(column)}`);
  lines.push(`  schema: ${counted(schema.length, 'column')}${schema.length === 0 ? '' : `: ${schema.join(', ')}`}`);
  if (operation.extra.length > 0) {
    const values = sum(operation.extra.map((extra) => extra.values));
    lines.push(`  _extra: ${counted(values, 'value')} no column holds: ${operation.extra.map((extra) => `${extra.path} ${extra.values}`).join(', ')}`);
  }
  if (operation.compacting) lines.push('  a compaction was interrupted: the next export or `dataset compact` finishes it');
  if (operation.smallFiles !== undefined) lines.push(`  small files: ${operation.smallFiles}`);
  for (const mark of operation.marks) lines.push(`  mark ${paramsText(mark.params)}: ${mark.markTime}`);
  for (const writer of operation.writers) {
    const running = writer.running === undefined ? '' : `; an export (pid ${writer.running}) is writing it now`;
    lines.push(`  writer ${writer.name}: ${counted(writer.rows, 'row')} in ${counted(writer.parts, 'part')} (${size(writer.bytes)})${running}`);
    for (const mark of writer.marks) lines.push(`    mark ${paramsText(mark.params)}: ${mark.markTime}`);
    if (writer.drift !== undefined) lines.push(`    last drift (${writer.drift.at}${writer.drift.frozen ? ', stopped a frozen run' : ''}): ${describeDrift(writer.drift.drift)}`);
    if (writer.staged !== undefined) lines.push(`    ${stagedText(writer.staged)}`);
  }
  return lines;
}

function stagedText(staged: StagedInfo): string {
  if (staged.damaged !== undefined) return `staged: cannot be read (${staged.damaged})`;
  const publishing = staged.publishing ? '; its publish was interrupted: the next export of this writer finishes it' : '';
  if (staged.objects !== undefined) return `staged on the store, not published: ${counted(staged.objects, 'object')} (its pages are not counted from a store yet): export --resume continues it${publishing}`;
  return (
    `staged, not published: an unfinished run, ${staged.walks.done} of ${counted(staged.walks.total, 'walk')} done, ` +
    `${counted(staged.records, 'record')} in ${counted(staged.pages, 'page')} (${counted(staged.credits, 'credit')}): export --resume continues it${publishing}`
  );
}

function paramsText(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
}

/** Partitions shown whole up to this many; past it the first and last few, the middle counted. */
const PARTITIONS_SHOWN = 12;

export function partitionGrid(operation: OperationInfo): Grid {
  const { partitions } = operation;
  const cut = partitions.length > PARTITIONS_SHOWN;
  const half = PARTITIONS_SHOWN / 2;
  const shown = cut ? [...partitions.slice(0, half), ...partitions.slice(-half)] : partitions;
  return {
    caption: counted(partitions.length, 'partition'),
    columns: [{ name: operation.partitioning.column }, { name: 'rows' }, { name: 'parts' }, { name: 'bytes' }],
    rows: shown.map((partition) => [partition.name, String(partition.rows), String(partition.parts), String(partition.bytes)]),
    ...(cut ? { omitted: { at: half, count: partitions.length - PARTITIONS_SHOWN } } : {}),
  };
}

export function schemaGrid(operation: OperationInfo): Grid {
  return {
    caption: `schema: ${counted(operation.schema.length, 'column')}`,
    columns: [{ name: 'column' }, { name: 'kind' }],
    rows: operation.schema.map((column) => [column.name, typeName(column)]),
  };
}

/** Bytes in the largest unit that keeps them above 1 (`12.3 MiB`). */
export function size(bytes: number): string {
  if (bytes < 1024) return counted(bytes, 'byte');
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
