/**
 * Parquet written with parquetjs-lite's thrift structures (rows are laid out into column chunks, with
 * statistics and dictionaries, by `parquet-columns.ts`, in a worker thread for large row groups:
 * `parquet-encoder.ts`), in one of two layouts:
 * - `nested` (the default): records keep their shape, objects as STRUCT groups and arrays as LIST
 *   (`parquet-nested.ts`);
 * - `flat`: one optional column per dotted leaf path (`rows.ts`), arrays and deep objects as JSON text.
 * Leaves are typed so DuckDB reads them naturally — integers BIGINT (INT64; a `bigint` column keeps
 * integers past 2^53 exact, and one past int64 is JSON text: `rows.ts`), other numbers DOUBLE,
 * booleans BOOLEAN, text VARCHAR (UTF8), `YYYY-MM-DDTHH:mm:ss.sssZ` strings TIMESTAMP (when every
 * sampled value is one), mixed values JSON text. A value that does not fit its column's type goes to
 * the overflow column. Rows are flushed every `rowGroupSize` rows, so memory stays bounded.
 * The file's key-value metadata `socialstream.columns` describes the layout, each column's kind and
 * the overflow name.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import type { AnyIterable } from '../src/operators/types.ts';
import { RowGroupCells } from './parquet-cells.ts';
import { encodeRowGroup, placeRowGroup, type ColumnSpec, type PhysicalType, type PlainColumns } from './parquet-columns.ts';
import { encodeRowGroupOffThread } from './parquet-encoder.ts';
import { NestedLayout, PARQUET_TYPE, type NestedField } from './parquet-nested.ts';
import { serializeThrift } from './parquet-thrift.ts';
import type { Destination } from './atomic.ts';
import { checkRowOptions, DEFAULT_SAMPLE_SIZE, type ColumnKind, type RowOptions } from './rows.ts';
import { checkPath, checkSource, runSink, type RecordWriter, type SinkResult } from './run.ts';
import { sampledWriter, tableWriter } from './table.ts';

export const PARQUET_EXTENSIONS = ['.parquet'] as const;

export type ParquetCompression = 'snappy' | 'gzip' | 'none';

export interface ParquetOptions extends RowOptions {
  /**
   * `'nested'` (default): objects are STRUCT groups and arrays LIST, as the records hold them;
   * `columns` then names top-level fields, `kinds` is not taken, and `maxDepth` (default 6) is how
   * deep objects and arrays nest before the rest is JSON text. `'flat'`: one column per dotted leaf
   * path, arrays and objects below `maxDepth` (default 3) as JSON text.
   */
  layout?: ParquetLayout;
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

/** What the dataset code writes parts with besides `ParquetOptions`: its recorded nested fields (`NestedLayout.plan`). */
export interface ParquetWriterOptions extends ParquetOptions {
  shapes?: readonly NestedField[];
}

export type ParquetLayout = 'nested' | 'flat';
export const PARQUET_LAYOUTS: readonly ParquetLayout[] = ['nested', 'flat'];

export type ParquetEncoder = 'worker' | 'thread';
const ENCODERS: readonly ParquetEncoder[] = ['worker', 'thread'];

export const DEFAULT_ROW_GROUP_SIZE = 10_000;
/** A row group is held in memory until written; this keeps one from growing without bound. */
const MAX_ROW_GROUP_SIZE = 1_000_000;

/** Key-value metadata entry describing the columns (DuckDB: `parquet_kv_metadata(file)`). */
export const COLUMNS_METADATA_KEY = 'socialstream.columns';

const COMPRESSION: Record<ParquetCompression, string> = { snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };

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
  checkLayout(options);
  return runSink(source, path, (destination) => parquetWriter(destination, options));
}

/** Checks `layout`, and that a nested layout is not given what only the flat one takes. */
function checkLayout(options: ParquetOptions): void {
  const { layout } = options;
  if (layout !== undefined && !PARQUET_LAYOUTS.includes(layout)) {
    throw new TypeError(`layout must be one of ${PARQUET_LAYOUTS.join(', ')}, got ${String(layout)}`);
  }
  if ((layout ?? 'nested') === 'nested' && options.kinds !== undefined) {
    throw new TypeError("kinds fixes flat columns' types: it needs layout: 'flat'");
  }
}

export function parquetWriter(destination: Destination, options: ParquetWriterOptions): RecordWriter {
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
    // The columns as of this group: a later field may add some before it is encoded.
    const groupSpecs = specs;
    const encoding = plain.then((columns) => (offThread ? encodeRowGroupOffThread : encodeRowGroup)(groupSpecs, cells, columns));
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

  /** The nested layout's: re-reads its schema and metadata, which fields added after the sample change. */
  let describe: (() => void) | undefined;

  const end = async (): Promise<void> => {
    await flush();
    await writing;
    describe?.();
    await completeRowGroups();
    const footer = serializeThrift(
      new parquetTypes.FileMetaData({
        version: 1,
        schema,
        num_rows: rows,
        row_groups: rowGroups,
        key_value_metadata: Object.entries(metadata).map(([key, value]) => new parquetTypes.KeyValue({ key, value })),
        created_by: 'socialstream',
        // Declares min_value/max_value ordered by type (signed numbers, unsigned UTF-8 bytes): without it readers ignore them.
        column_orders: specs.map(() => new parquetTypes.ColumnOrder({ TYPE_ORDER: new parquetTypes.TypeDefinedOrder() })),
      }),
    );
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length);
    await write(Buffer.concat([footer, length, MAGIC]));
  };

  /** Gives each row group written before a column was added an all-NULL chunk of it, so every group has every column. */
  const completeRowGroups = async (): Promise<void> => {
    for (const rowGroup of rowGroups as Array<{ columns: unknown[]; num_rows: number }>) {
      const missing = specs.slice(rowGroup.columns.length);
      if (missing.length === 0) continue;
      const entries = rowGroup.num_rows;
      const columns = missing.map((spec) => ({
        entries,
        defined: new Uint8Array(entries),
        repeated: spec.maxRepetition > 0 ? new Uint8Array(entries) : undefined,
      }));
      const placed = placeRowGroup(await encodeRowGroup(missing, { rows: entries, columns }, []), offset);
      rowGroup.columns.push(...(placed.metadata as { columns: unknown[] }).columns);
      for (const chunk of placed.chunks) await write(chunk);
    }
  };

  if (options.layout === 'flat') {
    return tableWriter(
      {
        async begin(layout, names) {
          const kinds: ColumnKind[] = [...layout.columns.map((column) => column.kind ?? 'string'), 'json'];
          specs = names.map((name, i) => {
            const { physical, exact } = PARQUET_TYPE[kinds[i]];
            return { path: [name], physical, exact, maxDefinition: 1, maxRepetition: 0, compression };
          });
          schema = schemaElements(names.map((name, i) => ({ name, ...PARQUET_TYPE[kinds[i]] })));
          group = new RowGroupCells(specs.map(({ physical, exact }) => ({ physical, exact, repeated: false })), rowGroupSize);
          // Which VARCHAR columns hold JSON text, and which column overflows: what a reader needs to rebuild records.
          metadata = {
            [COLUMNS_METADATA_KEY]: JSON.stringify({
              layout: 'flat',
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
        end,
      },
      options,
      true,
    );
  }
  return sampledWriter(
    {
      async begin(sample, repairs) {
        const layout = NestedLayout.plan(sample, options, repairs);
        const specsOf = (): ColumnSpec[] =>
          layout.columns.map(({ path, kind, maxDefinition, maxRepetition }) => ({
            path,
            physical: PARQUET_TYPE[kind].physical,
            exact: PARQUET_TYPE[kind].exact,
            maxDefinition,
            maxRepetition,
            compression,
          }));
        specs = specsOf();
        group = new RowGroupCells(specs.map(({ physical, exact, maxRepetition }) => ({ physical, exact, repeated: maxRepetition > 0 })), rowGroupSize);
        // Each field's shape (which VARCHAR leaves hold JSON text), and which column overflows: what a reader needs to rebuild records.
        describe = () => {
          schema = layout.schema();
          metadata = { [COLUMNS_METADATA_KEY]: JSON.stringify(layout.describe()) };
        };
        await write(MAGIC);
        return (record) => {
          layout.shred(record, group!, repairs);
          // A field first seen now added columns: later groups are encoded with them.
          if (layout.columns.length !== specs.length) specs = specsOf();
          return group!.full ? flush() : undefined;
        };
      },
      end,
    },
    options.sampleSize ?? DEFAULT_SAMPLE_SIZE,
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
