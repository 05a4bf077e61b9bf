/**
 * Parquet written with parquetjs-lite's thrift structures (rows are laid out into column chunks, with
 * statistics and dictionaries, by `parquet-columns.ts`, in a worker thread for large row groups:
 * `parquet-encoder.ts`): one optional column per
 * row-mapping column, typed so DuckDB reads them naturally — integers BIGINT (INT64; a `bigint`
 * column keeps integers past 2^53 exact, and one past int64 is JSON text: `rows.ts`), other numbers
 * DOUBLE, booleans BOOLEAN, text VARCHAR (UTF8), `YYYY-MM-DDTHH:mm:ss.sssZ` strings TIMESTAMP (when
 * every sampled value is one), and arrays, deep objects and mixed values JSON text. A value that does
 * not fit its column's type goes to the overflow column (`rows.ts`). Rows are flushed every
 * `rowGroupSize` rows, so memory stays bounded.
 * The file's key-value metadata `socialstream.columns` lists each column's kind and the overflow name.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import type { AnyIterable } from '../src/operators/types.ts';
import { RowGroupCells } from './parquet-cells.ts';
import { encodeRowGroup, placeRowGroup, type ColumnSpec, type PhysicalType, type PlainColumns } from './parquet-columns.ts';
import { encodeRowGroupOffThread } from './parquet-encoder.ts';
import { serializeThrift } from './parquet-thrift.ts';
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
  /**
   * Where large row groups are encoded and compressed: `'worker'` (a worker thread, while this thread
   * maps the next rows) or `'thread'` (this thread). Default `'worker'` under Node and `'thread'`
   * under Deno, whose worker threads cost more than they save (`bench/deno.ts`).
   */
  encoder?: ParquetEncoder;
}

export type ParquetEncoder = 'worker' | 'thread';
const ENCODERS: readonly ParquetEncoder[] = ['worker', 'thread'];

export const DEFAULT_ROW_GROUP_SIZE = 10_000;
/** A row group is held in memory until written; this keeps one from growing without bound. */
const MAX_ROW_GROUP_SIZE = 1_000_000;

/** Key-value metadata entry describing the columns (DuckDB: `parquet_kv_metadata(file)`). */
export const COLUMNS_METADATA_KEY = 'socialstream.columns';

const COMPRESSION: Record<ParquetCompression, string> = { snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };

/** Parquet physical type and converted type (if any) per column kind. */
const PARQUET_TYPE: Record<ColumnKind, { physical: PhysicalType; exact?: true; converted?: string }> = {
  integer: { physical: 'INT64' },
  bigint: { physical: 'INT64', exact: true },
  double: { physical: 'DOUBLE' },
  boolean: { physical: 'BOOLEAN' },
  string: { physical: 'BYTE_ARRAY', converted: 'UTF8' },
  timestamp: { physical: 'INT64', converted: 'TIMESTAMP_MILLIS' },
  json: { physical: 'BYTE_ARRAY', converted: 'UTF8' },
};

const MAGIC = Buffer.from('PAR1');

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
  if (options.encoder !== undefined && !ENCODERS.includes(options.encoder)) {
    throw new TypeError(`encoder must be one of ${ENCODERS.join(', ')}, got ${String(options.encoder)}`);
  }
  return runSink(source, path, (destination) => parquetWriter(destination, options));
}

export function parquetWriter(destination: Destination, options: ParquetOptions): RecordWriter {
  const compression = COMPRESSION[options.compression ?? 'snappy'];
  const rowGroupSize = options.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE;
  const offThread = (options.encoder ?? defaultEncoder()) === 'worker';
  let specs: ColumnSpec[] = [];
  let group: RowGroupCells | undefined;
  /** The columns whose dictionaries did not pay, as of the group before: each group is encoded knowing them. */
  let plain: Promise<PlainColumns> = Promise.resolve([]);
  let schema: unknown[] = [];
  let metadata: Record<string, string> = {};
  const rowGroups: unknown[] = [];
  let offset = 0;
  let rows = 0;

  /**
   * The row group being encoded and written while the next one is gathered: at most one is, so
   * groups reach the file in order and memory holds two groups at most.
   */
  let writing: Promise<void> = Promise.resolve();

  const write = async (chunk: Buffer): Promise<void> => {
    await destination.write(chunk);
    offset += chunk.length;
  };
  const flush = async (): Promise<void> => {
    if (group!.rows === 0) return;
    rows += group!.rows;
    const cells = group!.take();
    const encoding = plain.then((columns) => (offThread ? encodeRowGroupOffThread : encodeRowGroup)(specs, cells, columns));
    plain = encoding.then((encoded) => encoded.plain);
    plain.catch(() => undefined);
    const before = writing;
    writing = (async () => {
      const ready = await encoding;
      group!.recycle(cells);
      await before;
      const encoded = placeRowGroup(ready, offset);
      rowGroups.push(encoded.metadata);
      for (const chunk of encoded.chunks) await write(chunk);
    })();
    // Its failure is reported by the next flush or by end(), whichever awaits it; never unhandled.
    writing.catch(() => undefined);
    await before;
  };

  return tableWriter(
    {
      async begin(layout, names) {
        const kinds: ColumnKind[] = [...layout.columns.map((column) => column.kind ?? 'string'), 'json'];
        specs = names.map((name, i) => ({ name, physical: PARQUET_TYPE[kinds[i]].physical, exact: PARQUET_TYPE[kinds[i]].exact, compression }));
        schema = schemaElements(specs.map(({ name }, i) => ({ name, ...PARQUET_TYPE[kinds[i]] })));
        group = new RowGroupCells(specs, rowGroupSize);
        // Which VARCHAR columns hold JSON text, and which column overflows: what a reader needs to rebuild records.
        metadata = {
          [COLUMNS_METADATA_KEY]: JSON.stringify({
            columns: layout.columns.map(({ kind }, i) => ({ name: names[i], kind })),
            overflow: layout.overflowName,
          }),
        };
        await write(MAGIC);
      },
      writeRow(row) {
        group!.add(row);
        return group!.full ? flush() : undefined;
      },
      async end() {
        await flush();
        await writing;
        const footer = serializeThrift(
          new parquetTypes.FileMetaData({
            version: 1,
            schema,
            num_rows: rows,
            row_groups: rowGroups,
            key_value_metadata: Object.entries(metadata).map(([key, value]) => new parquetTypes.KeyValue({ key, value })),
            created_by: 'socialstream',
            // Declares min_value/max_value ordered by type (signed numbers, unsigned UTF-8 bytes): without it readers ignore them.
            column_orders: schema.slice(1).map(() => new parquetTypes.ColumnOrder({ TYPE_ORDER: new parquetTypes.TypeDefinedOrder() })),
          }),
        );
        const length = Buffer.alloc(4);
        length.writeUInt32LE(footer.length);
        await write(Buffer.concat([footer, length, MAGIC]));
      },
    },
    options,
    true,
  );
}

/**
 * Under Deno, handing a row group to a `node:worker_threads` worker and back cost more than encoding
 * it here: 20,000 posts took 2–3× as long as under Node (`bench/deno.ts` has the figures).
 */
function defaultEncoder(): ParquetEncoder {
  return 'Deno' in globalThis ? 'thread' : 'worker';
}

/** The thrift schema: a root holding one optional leaf per column. */
function schemaElements(columns: Array<{ name: string; physical: PhysicalType; converted?: string }>): unknown[] {
  return [
    new parquetTypes.SchemaElement({ name: 'root', num_children: columns.length }),
    ...columns.map(
      ({ name, physical, converted }) =>
        new parquetTypes.SchemaElement({
          name,
          type: parquetTypes.Type[physical],
          repetition_type: parquetTypes.FieldRepetitionType.OPTIONAL,
          converted_type: converted === undefined ? undefined : parquetTypes.ConvertedType[converted],
        }),
    ),
  ];
}
