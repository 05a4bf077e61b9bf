/** Picks the sink from the file name's extension. */
import type { AnyIterable } from '../src/operators/types.ts';
import { refuseUnknownOptions, type KnownOptions } from '../src/known-options.ts';
import { CSV_EXTENSIONS, CSV_OPTIONS, toCsv, type CsvOptions } from './csv.ts';
import { NDJSON_EXTENSIONS, toNdjson } from './ndjson.ts';
import { PARQUET_EXTENSIONS, PARQUET_OPTIONS, toParquet, type ParquetOptions } from './parquet.ts';
import { hasExtension, type SinkResult } from './run.ts';

/** Options of `writeRecords`: those of the sink the file's extension picks. */
export type WriteRecordsOptions = CsvOptions & ParquetOptions;

const WRITE_RECORDS_OPTIONS = { ...CSV_OPTIONS, ...PARQUET_OPTIONS } as const satisfies KnownOptions<WriteRecordsOptions>;

/**
 * Writes `source` to `path` as NDJSON (`.ndjson`, `.jsonl`, or `'-'` for stdout), CSV (`.csv`) or
 * Parquet (`.parquet`). Options a format does not read (such as `rowGroupSize` for CSV) are ignored.
 */
export function writeRecords(
  source: AnyIterable<unknown>,
  path: string,
  options: WriteRecordsOptions = {},
): Promise<SinkResult> {
  if (typeof path !== 'string' || path === '') throw new TypeError('path must be a non-empty string');
  refuseUnknownOptions(options, WRITE_RECORDS_OPTIONS, 'writeRecords');
  if (path === '-' || hasExtension(path, NDJSON_EXTENSIONS)) return toNdjson(source, path);
  if (hasExtension(path, CSV_EXTENSIONS)) return toCsv(source, path, only(options, CSV_OPTIONS));
  if (hasExtension(path, PARQUET_EXTENSIONS)) return toParquet(source, path, only(options, PARQUET_OPTIONS));
  const known = [...NDJSON_EXTENSIONS, ...CSV_EXTENSIONS, ...PARQUET_EXTENSIONS].join(', ');
  throw new TypeError(`Cannot tell the format of ${path}: the name must end with one of ${known}`);
}

/** The options of `options` that one format's sink knows: the others are meant for another format, and ignored. */
function only<T extends object>(options: WriteRecordsOptions, known: Readonly<Record<string, true>>): T {
  return Object.fromEntries(Object.entries(options).filter(([name]) => Object.hasOwn(known, name))) as T;
}
