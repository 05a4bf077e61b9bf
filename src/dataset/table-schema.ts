/**
 * The whole table of a Parquet dataset as one file (docs/guide/datasets.md): the recorded schema
 * written as a Parquet file of no rows, `_dataset/<op>/schema.parquet-schema`, the very columns
 * and types every part is written with, and `_extra`. Parts disagree by design (an older part lacks
 * a field a later run added, and two writers publishing different partitions at once each add only
 * their own), and which part is newest says nothing once files are copied. A reader that takes its
 * schema from one file (Polars' `scan_parquet(schema=…)`, pyarrow) takes this one: it holds every
 * column, so the parts' missing columns and struct fields read as NULL. It does not end in
 * `.parquet`, so no glob of the parts finds it among them.
 *
 * Written before `schema.json` whenever that changes, under the same lock: a kill between the two
 * leaves it ahead of the schema file (more columns, which read as NULL), never behind, and the
 * publish replayed writes both again. A dataset from before it gets it at its next publish.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseLocation } from './storage/location.ts';
import { writePart } from './parts.ts';
import type { RecordedSchema } from './scan.ts';
import type { DatasetPaths } from './store.ts';
import { writeObject } from './objects.ts';

/** Records `schema`: its Parquet schema file (Parquet datasets with columns), then `schema.json`. */
export async function writeRecordedSchema(paths: DatasetPaths, schema: RecordedSchema): Promise<void> {
  if (holdsTable(schema)) await writeTableSchema(paths, schema);
  await writeObject(paths.storage, paths.names.schema, schema);
}

/** Writes the schema file: in a local dataset's folder; on a store, encoded in scratch and stored whole beside `schema.json`. */
async function writeTableSchema(paths: DatasetPaths, schema: RecordedSchema): Promise<void> {
  if (onLocalFolder(paths)) {
    await writePart([], paths.tableSchema, schema);
    return;
  }
  await mkdir(paths.storage.scratch, { recursive: true });
  const file = join(paths.storage.scratch, `${randomUUID()}.parquet-schema`);
  try {
    await writePart([], file, schema);
    await paths.storage.upload(paths.names.tableSchema, file);
  } finally {
    await rm(file, { force: true });
  }
}

/** Whether `schema` needs a Parquet schema file that is not there yet (a dataset of an earlier version). */
export async function lacksTableSchema(paths: DatasetPaths, schema: RecordedSchema | undefined): Promise<boolean> {
  if (schema === undefined || !holdsTable(schema)) return false;
  if (!onLocalFolder(paths)) return !(await paths.storage.exists(paths.names.tableSchema));
  return (await stat(paths.tableSchema).catch(() => undefined)) === undefined;
}

function onLocalFolder(paths: DatasetPaths): boolean {
  return parseLocation(paths.storage.location).kind === 'local';
}

function holdsTable(schema: RecordedSchema): boolean {
  return schema.format === 'parquet' && schema.columns.length > 0;
}
