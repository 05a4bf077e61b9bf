/** Picks the sink from the file name's extension. */
import type { AnyIterable } from '../src/operators/types.ts';
import { CSV_EXTENSIONS, toCsv, type CsvOptions } from './csv.ts';
import { NDJSON_EXTENSIONS, toNdjson } from './ndjson.ts';
import { PARQUET_EXTENSIONS, toParquet, type ParquetOptions } from './parquet.ts';
import { hasExtension, type SinkResult } from './run.ts';

/** Options of `writeRecords`: those of the sink the file's extension picks. */
export type WriteRecordsOptions = CsvOptions & ParquetOptions;

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
  if (path === '-' || hasExtension(path, NDJSON_EXTENSIONS)) return toNdjson(source, path);
  if (hasExtension(path, CSV_EXTENSIONS)) return toCsv(source, path, options);
  if (hasExtension(path, PARQUET_EXTENSIONS)) return toParquet(source, path, options);
  const known = [...NDJSON_EXTENSIONS, ...CSV_EXTENSIONS, ...PARQUET_EXTENSIONS].join(', ');
  throw new TypeError(`Cannot tell the format of ${path}: the name must end with one of ${known}`);
}
