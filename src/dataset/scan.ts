/**
 * What a dataset directory holds, read off its files without changing any (`store.ts` says
 * where each thing lives): its operations and their recorded schema, every writer that left a trace,
 * and every part file with its partition and size. `info.ts` reports it; `compact.ts` rewrites it.
 */
import { DatasetError } from '../errors.ts';
import { PART_EXTENSION, type DatasetFormat } from './parts.ts';
import type { SchemaColumn } from './schema.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { bucketOfName, type Layout } from './buckets.ts';
import type { Storage } from './storage/types.ts';
import { DatasetPaths, LEGACY_PARTITIONING, LEGACY_UNDATED, type Partitioning } from './store.ts';
import { readSchemaFile } from './state.ts';
import type { RecordedLocks } from './locks.ts';
import { objectPlace } from './objects.ts';

/** `schema.json` as the dataset destination records it. */
export interface RecordedSchema {
  version: 1;
  operation: string;
  format: DatasetFormat;
  columns: SchemaColumn[];
  partitioning?: Partitioning;
  /** Absent in datasets of part files per writer (before buckets), which are migrated on their first open. */
  layout?: Layout;
  /** `indexed`: every part has its key index (`key-index.ts`); datasets from before are indexed on their first open. */
  keys?: 'indexed';
  /** How Parquet parts hold records (`nesting.ts`); absent in datasets recorded before layouts, which are flat. */
  parquetLayout?: ParquetLayout;
  /**
   * How its writers lock it, when not with lock folders (`LockMechanism`, `locks.ts`): `queue`, Redis
   * leases (through a queue, or with `--locks`), or `leases` on its store; every writer must.
   */
  locks?: RecordedLocks;
  /** Writers of datasets before buckets recorded their shard count; no longer read. */
  shards?: number;
}

export interface ScannedOperation {
  operation: string;
  /** The schema file; undefined when no run has published yet. */
  schema: RecordedSchema | undefined;
  format: DatasetFormat;
  partitioning: Partitioning;
  /** Paths for the `all` writer; `pathsOf(writer)` for another. */
  paths: DatasetPaths;
}

export interface ScannedPart {
  /** Its name in the dataset's store (`orders/_date=2024-01/part-b0-of-1.parquet`). */
  name: string;
  /** Where a user finds it (`objectPlace`): for messages. */
  path: string;
  partition: string;
  /** The writer of a part of the layout before buckets (`part-<writer>`); undefined for a bucket part. */
  writer: string | undefined;
  bytes: number;
  /** When it was last written (`StoredObject.modifiedMs`): the fetch time migration gives its rows that have none. */
  mtimeMs: number;
  /** What tells whether it was replaced since it was listed: S3's ETag, else its size and time (`checkParts` reads a part once a version). */
  version: string;
}

/**
 * The operations of the dataset at `dir` held in `storage` (those with objects under `_dataset/<op>/`:
 * one listing); a location that holds none is refused (`DATASET`). The caller opened the store, and closes it.
 */
export async function scanOperations(storage: Storage, dir: string): Promise<ScannedOperation[]> {
  const found = new Set<string>();
  for await (const { name } of storage.list('_dataset/')) {
    const [, folder, rest] = name.split('/', 3);
    if (rest !== undefined) found.add(folder);
  }
  if (found.size === 0) throw new DatasetError(`${dir} is not a dataset (it has no _dataset folder): export into it with --dataset first`, dir);
  const folders = [...found];
  const operations: ScannedOperation[] = [];
  for (const folder of folders.sort()) {
    const operation = folder.replaceAll('__', '/');
    const paths = new DatasetPaths(dir, operation, 'all', storage);
    const schema = await readSchemaFile(paths);
    operations.push({
      operation,
      schema,
      format: schema?.format ?? 'parquet',
      partitioning: schema === undefined ? LEGACY_PARTITIONING : (schema.partitioning ?? LEGACY_PARTITIONING),
      paths,
    });
  }
  return operations;
}

/**
 * The part files of an operation: `<op>/<column>=<partition>/part-*.<ext>` (buckets, or writers' before them), in partition order,
 * from one listing of the operation's prefix. `only`, a partition folder's value, lists that folder's parts alone: a rewrite one
 * partition at a time (the widening) reads one folder per partition, not the whole dataset again.
 */
export async function scanParts(dir: string, operation: ScannedOperation, only?: string): Promise<ScannedPart[]> {
  const { storage } = operation.paths;
  const column = operation.partitioning.column;
  const prefix = only === undefined ? `${operation.operation}/${column}=` : operation.paths.names.partition(only, column);
  const extension = PART_EXTENSION[operation.format];
  const parts: ScannedPart[] = [];
  for await (const object of storage.list(prefix)) {
    // `<column>=<partition>/<name>`: an operation's own partitions, not those of one nested in it (`shortvideo/videos/popular`).
    const [folder, name, ...deeper] = object.name.slice(operation.operation.length + 1).split('/');
    if (name === undefined || deeper.length > 0 || !name.startsWith('part-') || !name.endsWith(extension)) continue;
    const writer = bucketOfName(name, operation.format) === undefined ? name.slice('part-'.length, -extension.length) : undefined;
    parts.push({ name: object.name, path: objectPlace(storage, object.name), partition: folder.slice(column.length + 1), writer, bytes: object.size, mtimeMs: object.modifiedMs ?? 0, version: object.etag ?? `${object.size}@${object.modifiedMs ?? 0}` });
  }
  // In partition order, then by name, as the folders were read before the storage seam (a listing's byte order puts `=2024-1/` after `=2024-10/`'s parts).
  return parts.sort((a, b) => (a.partition < b.partition ? -1 : a.partition > b.partition ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Every writer that left a trace: part files (of the layout before buckets), marks, drift, staging or a lock. `all` is always
 * among them: it is the writer an export without `--shard` takes.
 */
export async function scanWriters(operation: ScannedOperation, parts: readonly ScannedPart[]): Promise<string[]> {
  return (await scanMeta(operation, parts)).writers;
}

/** What one listing of an operation's `_dataset/<op>/` shows: its writers (`scanWriters`), and how many objects each writer's staging holds. */
export interface ScannedMeta {
  writers: string[];
  /** Objects under `staging-<writer>/`, by writer: a run staged and not published. */
  staged: Map<string, number>;
}

/** `scanWriters`, with the objects of each writer's staging counted from the same listing. */
export async function scanMeta(operation: ScannedOperation, parts: readonly ScannedPart[]): Promise<ScannedMeta> {
  const writers = new Set(['all', ...parts.flatMap((part) => part.writer ?? [])]);
  const staged = new Map<string, number>();
  const meta = `${operation.paths.names.meta}/`;
  const names = new Set<string>();
  for await (const { name } of operation.paths.storage.list(meta)) {
    const [first, ...rest] = name.slice(meta.length).split('/');
    names.add(first);
    if (first.startsWith('staging-') && rest.length > 0) staged.set(first.slice('staging-'.length), (staged.get(first.slice('staging-'.length)) ?? 0) + 1);
  }
  for (const name of names) {
    const match = /^(?:state-|drift-)(.+)\.json$|^staging-(.+)$|^writer-(.+)\.lock$/.exec(name);
    const writer = match?.[1] ?? match?.[2] ?? match?.[3];
    if (writer !== undefined) writers.add(writer);
  }
  return { writers: [...writers].sort(), staged };
}

/**
 * Whether an operation is laid out as this version writes it: bucket parts, each with its key index,
 * and undated records in Hive's default partition. An open migrates any other (`rewriteIntoBuckets`).
 */
export async function isCurrentLayout(paths: DatasetPaths, schema: RecordedSchema): Promise<boolean> {
  if (schema.layout === undefined || schema.keys !== 'indexed') return false;
  const column = (schema.partitioning ?? LEGACY_PARTITIONING).column;
  for await (const _ of paths.storage.list(paths.names.partition(LEGACY_UNDATED, column))) return false;
  return true;
}

/** The paths of `writer` in `operation`. */
export function pathsOf(operation: ScannedOperation, writer: string): DatasetPaths {
  return operation.paths.ofWriter(writer);
}
