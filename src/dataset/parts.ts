/**
 * A dataset's part files: written through the sinks' own writers with the dataset's pinned columns,
 * and read back as records so a run can merge new versions of records into them. Parquet is read
 * with hyparquet (`read-back.ts`, a row group at a time), CSV with fast-csv, NDJSON with `fromNdjson`; a row becomes a record again by
 * splitting its column names and `_extra`.
 *
 * Why hyparquet: parquetjs-lite's reader returned the values of dictionary-encoded INT64 and DOUBLE
 * columns as strings, so a merge wrote them back as NULL with the text in `_extra`, and even an
 * identical re-run corrupted a dataset. hyparquet (MIT, no dependencies, maintained) returns the
 * types written — INT64 as bigint, DOUBLE as number, TIMESTAMP as Date — reads every encoding our
 * writer uses (dictionary, DELTA_BINARY_PACKED, snappy), and read 100,000 rows about four times
 * faster (0.2 s against 0.86 s). Our own decoder would have to keep page headers, dictionaries, the
 * RLE/bit-packed hybrid, PLAIN, DELTA and the codecs in step with the writer, tested by nothing but
 * itself; hyparquet is also tested against files other writers make.
 */
import { parse } from 'fast-csv';
import { createReadStream } from 'node:fs';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import type { AnyIterable } from '../operators/types.ts';
import { csvWriter } from '../../sinks/csv.ts';
import { nestedFields } from './schema-nested.ts';
import { flatColumnsOf, type SchemaColumn } from './schema.ts';
import { parseExact } from '../exact-json.ts';
import { fromNdjson } from '../../sinks/from-ndjson.ts';
import { ndjsonWriter } from '../../sinks/ndjson.ts';
import { COLUMNS_METADATA_KEY, parquetWriter, type ParquetLayout } from '../../sinks/parquet.ts';
import { flatRecords, readParquetRecords, type HeldNames } from '../../sinks/read-back.ts';
import type { ColumnKind } from '../column-kinds.ts';
import { runSink, type SinkResult } from '../../sinks/run.ts';
import type { Storage } from './storage/types.ts';

/** The file format of a dataset's parts, fixed by its first run. */
export type DatasetFormat = 'parquet' | 'ndjson' | 'csv';
export const DATASET_FORMATS: readonly DatasetFormat[] = ['parquet', 'ndjson', 'csv'];
export const PART_EXTENSION: Record<DatasetFormat, string> = { parquet: '.parquet', ndjson: '.ndjson', csv: '.csv' };

type Record_ = Record<string, unknown>;

/** What a part is written with: the dataset's format, columns and, for Parquet, layout (absent: flat, as before datasets were nested). */
export interface PartSchema {
  format: DatasetFormat;
  columns: readonly SchemaColumn[];
  parquetLayout?: ParquetLayout;
}

/** A record's own fields a dataset keeps in `_extra` (`columns.ts` `heldNames`). */
export type { HeldNames };

/**
 * Writes `records` to `path` (any name: staged parts must not end in the format's extension, or a
 * reader globbing the dataset would see them) with the schema's columns and kinds, atomically. A
 * record's field `_extra` holds values bound for the overflow column (`HeldNames`).
 */
export function writePart(records: AnyIterable<unknown>, path: string, schema: PartSchema): Promise<SinkResult> {
  const { format, columns } = schema;
  if (format === 'ndjson') return runSink(records, path, ndjsonWriter);
  if (format === 'parquet' && schema.parquetLayout === 'nested') {
    // Every part of a nested dataset has the recorded shapes (`schema-nested.ts`), never its own sample's.
    const shapes = columns.length === 0 ? {} : { shapes: nestedFields(columns) };
    return runSink(records, path, (destination) => parquetWriter(destination, { ...shapes, layout: 'nested', held: true }));
  }
  // Records with no field at all give no columns; the sinks then plan from the records themselves.
  // CSV is text: an untyped column is an empty one. A Parquet part leaves it out (`DatasetKind`).
  const leaves = typedColumns(columns, format);
  const maps = leaves.flatMap((column) => (column.map ? [column.name] : []));
  const pinned = {
    held: true,
    ...(leaves.length === 0 ? {} : { columns: leaves.map((column) => column.name), kinds: Object.fromEntries(leaves.map((column) => [column.name, column.kind])) }),
    ...(maps.length === 0 ? {} : { maps }),
  };
  if (format === 'csv') return runSink(records, path, (destination) => csvWriter(destination, pinned));
  // A flat dataset's parts pin dotted columns (sinks/README.md).
  return runSink(records, path, (destination) => parquetWriter(destination, { ...pinned, layout: 'flat' }));
}

/**
 * A flat dataset's columns as its parts hold them: each with its kind (a MAP's values'), an untyped one left out of
 * Parquet parts (`DatasetKind`), and an empty one in CSV, which is text; so is a MAP in CSV (a CSV dataset records none).
 */
export function typedColumns(columns: readonly SchemaColumn[], format: DatasetFormat): { name: string; kind: ColumnKind; map?: true }[] {
  return flatColumnsOf(columns).flatMap((column) => {
    const kind = column.kind === 'map' ? column.value.kind : column.kind;
    if (kind === 'untyped') return format === 'csv' ? [{ name: column.name, kind: 'string' as const }] : [];
    return [{ name: column.name, kind, ...(column.kind === 'map' ? { map: true as const } : {}) }];
  });
}

/** The records of a part file, as a run merges them: as they were staged, the values of `held` names in their field `_extra`. */
export function readPart(path: string, format: DatasetFormat, held: HeldNames): AsyncIterable<Record_> {
  if (format === 'ndjson') return fromNdjson(path);
  return format === 'csv' ? readCsvPart(path, held) : readParquetRecords(path, held);
}

/**
 * `fn` given a local file holding the part `name` of `storage` (`Storage.download`: on a local
 * dataset the part's own file, else a copy in scratch, dropped after). A part that is not there is
 * an error with code `ENOENT`, as a missing file is to `readPart`.
 */
export async function withPartFile<T>(storage: Storage, name: string, fn: (path: string) => Promise<T>): Promise<T> {
  const copy = await storage.download(name);
  if (copy === undefined) throw Object.assign(new Error(`${name} is not in ${storage.location}`), { code: 'ENOENT' });
  try {
    return await fn(copy.path);
  } finally {
    await copy.discard();
  }
}

/** The records of the part `name` of `storage`, as `readPart` gives them (see `withPartFile`). */
export async function* readStoredPart(storage: Storage, name: string, format: DatasetFormat, held: HeldNames): AsyncGenerator<Record_> {
  const copy = await storage.download(name);
  if (copy === undefined) throw Object.assign(new Error(`${name} is not in ${storage.location}`), { code: 'ENOENT' });
  try {
    yield* readPart(copy.path, format, held);
  } finally {
    await copy.discard();
  }
}

/**
 * How many values each path holds in a part's overflow column (`_extra`): values no column of the
 * part could hold, by the escaped dotted path they were spilled from. Reads that one column of a
 * Parquet part (mostly NULL, so little is read) and every row of a CSV one; NDJSON parts keep each
 * record whole and have none.
 */
export async function overflowCounts(path: string, format: DatasetFormat): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const count = (cell: unknown): void => {
    if (typeof cell !== 'string' || cell === '') return;
    for (const name of Object.keys(parseExact(cell) as Record_)) counts.set(name, (counts.get(name) ?? 0) + 1);
  };
  if (format === 'parquet') {
    const file = await asyncBufferFromFile(path);
    const metadata = await parquetMetadataAsync(file);
    const entry = metadata.key_value_metadata?.find(({ key }) => key === COLUMNS_METADATA_KEY);
    const overflow = (JSON.parse(entry?.value ?? '{}') as { overflow?: string }).overflow ?? '_extra';
    if (!metadata.schema.some((element, i) => i > 0 && element.name === overflow)) return counts;
    for (const row of (await parquetReadObjects({ file, metadata, columns: [overflow] })) as Record<string, unknown>[]) count(row[overflow]);
  } else if (format === 'csv') {
    const rows = createReadStream(path).pipe(parse<string[], string[]>({ headers: false }));
    let overflow = -1;
    for await (const row of rows as AsyncIterable<string[]>) {
      if (overflow < 0) overflow = row.length - 1;
      else count(row[overflow]);
    }
  }
  return counts;
}

async function* readCsvPart(path: string, held: HeldNames): AsyncGenerator<Record_> {
  const file = createReadStream(path);
  const rows = parse<Record<string, string>, Record<string, string>>({ headers: true });
  file.on('error', (error) => rows.destroy(error));
  // The overflow column is the header's last (`RowLayout.names`): `_extra`, or `__extra` when the
  // records had an `_extra` field of their own.
  let overflow = '';
  rows.once('headers', (headers: string[]) => (overflow = headers[headers.length - 1] ?? ''));
  file.pipe(rows);
  // CSV is text: cells come back as the strings they were written as, and are written so again.
  let recordOf: ((row: Record<string, string>) => Record_) | undefined;
  for await (const row of rows as AsyncIterable<Record<string, string>>) {
    const cells: Record<string, string> = {};
    for (const [name, cell] of Object.entries(row)) if (cell !== '') cells[name] = cell;
    // After the header, which named the overflow column.
    recordOf ??= flatRecords(new Map(), overflow, held);
    yield recordOf(cells);
  }
}

