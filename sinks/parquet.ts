/**
 * Parquet through parquetjs-lite (its schema, envelope writer, codecs; rows are laid out into
 * columns by `parquet-columns.ts`): one optional column per row-mapping column, typed so DuckDB reads
 * them naturally — integers BIGINT (INT64), other numbers DOUBLE, booleans BOOLEAN, text VARCHAR
 * (UTF8), `YYYY-MM-DDTHH:mm:ss.sssZ` strings TIMESTAMP (when every sampled value is one), and arrays,
 * deep objects and mixed values JSON text. A value that does not fit its column's type goes to the
 * overflow column (`rows.ts`). Rows are flushed every `rowGroupSize` rows, so memory stays bounded.
 * The file's key-value metadata `socialstream.columns` lists each column's kind and the overflow name.
 */
import parquet, { type FieldDefinition, type ParquetEnvelopeWriter } from 'parquetjs-lite';
import type { AnyIterable } from '../src/operators/types.ts';
import { RowGroupBuffer, type ColumnSpec, type PhysicalType } from './parquet-columns.ts';
import type { Destination } from './atomic.ts';
import { checkRowOptions, type ColumnKind, type RowOptions } from './rows.ts';
import { checkPath, checkSource, runSink, type RecordWriter, type SinkResult } from './run.ts';
import { tableWriter } from './table.ts';

export const PARQUET_EXTENSIONS = ['.parquet'] as const;

export type ParquetCompression = 'snappy' | 'gzip' | 'none';

export interface ParquetOptions extends RowOptions {
  /** Rows per row group: rows are held in memory until a group is full. Default 10,000. */
  rowGroupSize?: number;
  /** Page compression. Default `'snappy'`. */
  compression?: ParquetCompression;
}

export const DEFAULT_ROW_GROUP_SIZE = 10_000;
/** A row group is held in memory until written; this keeps one from growing without bound. */
const MAX_ROW_GROUP_SIZE = 1_000_000;

/** Key-value metadata entry describing the columns (DuckDB: `parquet_kv_metadata(file)`). */
export const COLUMNS_METADATA_KEY = 'socialstream.columns';

const COMPRESSION: Record<ParquetCompression, string> = { snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };

/** Parquet logical type (as parquetjs-lite names it) and physical type per column kind. */
const PARQUET_TYPE: Record<ColumnKind, { logical: string; physical: PhysicalType }> = {
  integer: { logical: 'INT64', physical: 'INT64' },
  double: { logical: 'DOUBLE', physical: 'DOUBLE' },
  boolean: { logical: 'BOOLEAN', physical: 'BOOLEAN' },
  string: { logical: 'UTF8', physical: 'BYTE_ARRAY' },
  timestamp: { logical: 'TIMESTAMP_MILLIS', physical: 'INT64' },
  json: { logical: 'UTF8', physical: 'BYTE_ARRAY' },
};

export function toParquet(
  source: AnyIterable<unknown>,
  path: string,
  options: ParquetOptions = {},
): Promise<SinkResult> {
  checkSource(source);
  checkPath(path, PARQUET_EXTENSIONS);
  checkRowOptions(options);
  const { rowGroupSize, compression } = options;
  if (rowGroupSize !== undefined && !(Number.isSafeInteger(rowGroupSize) && rowGroupSize >= 1 && rowGroupSize <= MAX_ROW_GROUP_SIZE)) {
    throw new TypeError(`rowGroupSize must be an integer from 1 to ${MAX_ROW_GROUP_SIZE}, got ${String(rowGroupSize)}`);
  }
  if (compression !== undefined && !Object.hasOwn(COMPRESSION, compression)) {
    throw new TypeError(`compression must be one of ${Object.keys(COMPRESSION).join(', ')}, got ${String(compression)}`);
  }
  return runSink(source, path, (destination) => parquetWriter(destination, options));
}

export function parquetWriter(destination: Destination, options: ParquetOptions): RecordWriter {
  const compression = COMPRESSION[options.compression ?? 'snappy'];
  const rowGroupSize = options.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE;
  let envelope: ParquetEnvelopeWriter | undefined;
  let group: RowGroupBuffer | undefined;
  let metadata: Record<string, string> = {};

  const flush = async (): Promise<void> => {
    if (group!.rows > 0) await envelope!.writeRowGroup(group!.take());
  };

  return tableWriter(
    {
      async begin(layout) {
        const kinds: ColumnKind[] = [...layout.columns.map((column) => column.kind ?? 'string'), 'json'];
        const specs: ColumnSpec[] = layout.names.map((name, i) => ({ name, physical: PARQUET_TYPE[kinds[i]].physical, compression }));
        const fields: Record<string, FieldDefinition> = {};
        specs.forEach(({ name }, i) => {
          fields[name] = { type: PARQUET_TYPE[kinds[i]].logical, optional: true, compression, statistics: false };
        });
        group = new RowGroupBuffer(specs, rowGroupSize);
        // Which VARCHAR columns hold JSON text, and which column overflows: what a reader needs to rebuild records.
        metadata = {
          [COLUMNS_METADATA_KEY]: JSON.stringify({
            columns: layout.columns.map(({ name, kind }) => ({ name, kind })),
            overflow: layout.overflowName,
          }),
        };
        envelope = await parquet.ParquetEnvelopeWriter.openStream(new parquet.ParquetSchema(fields), destination.stream, {
          pageIndex: false,
        });
        await envelope.writeHeader();
      },
      async writeRow(row) {
        group!.add(row);
        if (group!.full) await flush();
      },
      async end() {
        await flush();
        await envelope!.writeFooter(metadata);
        await envelope!.close();
      },
    },
    options,
    true,
  );
}
