/**
 * Sinks: NDJSON, CSV and Parquet writers for record streams, and `fromNdjson` to read a file back.
 *
 * @module socialstream/sinks
 */
export { toNdjson } from './ndjson.ts';
export { toCsv, type CsvOptions } from './csv.ts';
export { toParquet, type ParquetOptions, type ParquetCompression, type ParquetEncoder, type ParquetLayout } from './parquet.ts';
export { writeRecords, type WriteRecordsOptions } from './write-records.ts';
export { fromNdjson } from './from-ndjson.ts';
export { partialOf, type SinkResult } from './run.ts';
export type { RowOptions } from './rows.ts';
export { SinkError } from '../src/errors.ts';
