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
 * sampled value is one); mixed kinds meet on the type lattice (`src/column-kinds.ts` `joinKinds`, docs/types.md).
 * A value that does not fit its column's type goes to the overflow column; one a wider type holds is
 * put back into its widened column when the file closes (`parquet-widening.ts`). Rows are flushed
 * every `rowGroupSize` rows, so memory stays bounded.
 * The file's key-value metadata `socialstream.columns` describes the layout, each column's kind and
 * the overflow name.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import type { AnyIterable } from '../src/operators/types.ts';
import { ParquetFile } from './parquet-file.ts';
import type { RowGroupCells } from './parquet-cells.ts';
import { DEFAULT_NESTED_MAX_DEPTH, NestedLayout, schemaOf } from './parquet-nested.ts';
import type { NestedField } from './shapes.ts';
import { Spills, widenColumns, widenFields } from './parquet-widening.ts';
import { readParquetRecords } from './read-back.ts';
import type { ColumnSpec } from './parquet-types.ts';
import type { Destination } from './atomic.ts';
import { checkRowOptions, DEFAULT_MAX_DEPTH, DEFAULT_SAMPLE_SIZE, ROW_OPTIONS, type MapCell, type PartRowOptions, type RowCell, type RowLayout, type RowOptions } from './rows.ts';
import type { Cell } from './values.ts';
import { refuseUnknownOptions, type KnownOptions } from '../src/known-options.ts';
import { checkPath, checkSource, runSink, type RecordWriter, type SinkResult } from './run.ts';
import { sampledWriter, tableWriter } from './table.ts';

export const PARQUET_EXTENSIONS = ['.parquet'] as const;

/** How Parquet column chunks are compressed; snappy by default. */
export type ParquetCompression = 'snappy' | 'gzip' | 'none';

/** Options of `toParquet`: layout, compression, row group size, encoder. */
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

/** What the dataset code writes parts with besides `ParquetOptions` (its recorded nested fields, `NestedLayout.plan`), and an export its file (its record). */
export interface ParquetWriterOptions extends ParquetOptions, PartRowOptions {
  shapes?: readonly NestedField[];
  /**
   * More key-value metadata for the footer, asked for when the footer is written: an export's file
   * learns only then whether it is complete, and records the export that made it only if so.
   */
  metadata?: () => Readonly<Record<string, string>>;
}

/**
 * `nested` keeps records' shape (objects as STRUCT, arrays as LIST), the default; `flat` writes
 * dotted columns, as CSV does.
 */
export type ParquetLayout = 'nested' | 'flat';
export const PARQUET_LAYOUTS: readonly ParquetLayout[] = ['nested', 'flat'];

/**
 * Where Parquet row groups are encoded: a worker thread (the default under Node), or the caller's
 * thread (under Deno).
 */
export type ParquetEncoder = 'worker' | 'thread';
const ENCODERS: readonly ParquetEncoder[] = ['worker', 'thread'];

export const DEFAULT_ROW_GROUP_SIZE = 10_000;
/** A row group is held in memory until written; this keeps one from growing without bound. */
const MAX_ROW_GROUP_SIZE = 1_000_000;

export { COLUMNS_METADATA_KEY } from './parquet-file.ts';

const COMPRESSION: Record<ParquetCompression, string> = { snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };

/** The names of `ParquetOptions`: `toParquet` refuses any other. */
export const PARQUET_OPTIONS = {
  ...ROW_OPTIONS,
  layout: true,
  rowGroupSize: true,
  compression: true,
  encoder: true,
} as const satisfies KnownOptions<ParquetOptions>;

/**
 * Writes every record of `source` to a Parquet file at `path`: by default nested (objects as STRUCT,
 * arrays as LIST), `layout: 'flat'` for dotted columns; a `bigint` column is an exact INT64. Streams
 * with backpressure in bounded memory and writes to a temporary name, renamed when whole; resolves
 * with what it wrote. If the source fails, the file still closes valid and the sink rejects with the
 * source's error (`partialOf(error)` says what it kept).
 */
export function toParquet(
  source: AnyIterable<unknown>,
  path: string,
  options: ParquetOptions = {},
): Promise<SinkResult> {
  checkSource(source);
  checkPath(path, PARQUET_EXTENSIONS);
  refuseUnknownOptions(options, PARQUET_OPTIONS, 'toParquet');
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

/**
 * A Parquet writer over `destination`. If its sample typed a column too narrowly for a later value,
 * the file is re-encoded once at close under the widened schema (`parquet-widening.ts`), replacing
 * what was written before it is committed; a dataset's part (`shapes`, or every column pinned) never
 * is: its schema is the dataset's.
 */
export function parquetWriter(destination: Destination, options: ParquetWriterOptions): RecordWriter {
  const file = new ParquetFile(destination, {
    compression: COMPRESSION[options.compression ?? 'snappy'],
    rowGroupSize: options.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE,
    offThread: (options.encoder ?? defaultEncoder()) === 'worker',
    metadata: options.metadata,
  });
  const { writer, widened } = options.layout === 'flat' ? flatWriter(file, options) : nestedWriter(file, options);
  return {
    write: (record) => writer.write(record),
    get repaired() {
      return writer.repaired;
    },
    async close() {
      await writer.close();
      const fixed = widened();
      if (fixed !== undefined) await destination.replace((written, into) => reencode(written, parquetWriter(into, fixed)));
    },
  };
}

/** A layout's writer, and the options a file must be written again with when its sample typed a column too narrowly. */
interface LayoutWriter {
  writer: RecordWriter;
  readonly widened: () => ParquetWriterOptions | undefined;
}

/** Writes the records of the Parquet file at `written` again, in order, through `writer` (a row group of them at a time). */
async function reencode(written: string, writer: RecordWriter): Promise<void> {
  for await (const record of readParquetRecords(written)) {
    const waiting = writer.write(record);
    if (waiting !== undefined) await waiting;
  }
  await writer.close();
}

/**
 * The flat layout: one optional column per dotted leaf path, fed a row of cells per record (`rows.ts`). A MAP column (a
 * flat dataset's object keyed by data, `PartRowOptions.maps`) is the Parquet specification's MAP group, as the nested
 * layout writes one (`parquet-nested.ts`): its `key` and `value` are two leaf columns, filled entry by entry.
 */
function flatWriter(file: ParquetFile, options: ParquetWriterOptions): LayoutWriter {
  const pinned = (name: string): boolean => options.kinds !== undefined && Object.hasOwn(options.kinds, name);
  // A dataset's part pins every column: nothing could widen, so nothing is noted.
  const fixes = !(options.columns !== undefined && options.columns.every(pinned));
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  // The flat layout descends into an object at depth d only while d < maxDepth; deeper, it is JSON text.
  const spills = fixes ? new Spills(maxDepth - 1) : undefined;
  let layout: RowLayout | undefined;
  /** Per cell of a row, whether it is a MAP's; none when no column is (each row then goes in whole: `RowGroupCells.add`). */
  let maps: boolean[] | undefined;
  const writer = tableWriter(
    {
      async begin(planned, names) {
        layout = planned;
        const columns = [...layout.columns.map((column, i) => ({ ...column, name: names[i], kind: column.kind ?? 'string' })), { name: names.at(-1)!, kind: 'json' as const }];
        maps = columns.some((column) => column.map !== undefined) ? columns.map((column) => column.map !== undefined) : undefined;
        const specs = columns.flatMap(({ name, kind, map }) =>
          map === undefined ? [file.spec([name], kind, 1, 0)] : [file.spec([name, 'key_value', 'key'], 'string', 2, 1), file.spec([name, 'key_value', 'value'], kind, 3, 1)],
        );
        const elements: unknown[] = [new parquetTypes.SchemaElement({ name: 'root', num_children: columns.length })];
        for (const { name, kind, map } of columns) schemaOf(name, map === undefined ? { kind } : { map: { kind } }, elements);
        // Which VARCHAR columns hold JSON text, which are MAPs, and which column overflows: what a reader needs to rebuild records.
        file.describe(elements, {
          layout: 'flat',
          columns: layout.columns.map(({ kind, map }, i) => ({ name: names[i], kind, ...(map === undefined ? {} : { map }) })),
          overflow: layout.overflowName,
        });
        await file.begin(specs);
      },
      writeRow(row) {
        if (maps !== undefined) addRowWithMaps(file.cells, row, maps);
        else file.cells.add(row as Cell[]);
        return file.rowAdded();
      },
      spilled: spills?.note,
      end: () => file.end(),
    },
    options,
    true,
  );
  return {
    writer,
    widened: () => {
      if (spills === undefined || layout === undefined) return undefined;
      const columns = widenColumns(layout.columns, spills, { maxDepth, pinned, addsColumns: options.columns === undefined });
      if (columns === undefined) return undefined;
      return { ...options, columns: columns.map(({ name }) => name), kinds: Object.fromEntries(columns.map(({ name, kind }) => [name, kind!])) };
    },
  };
}

/**
 * A flat row with MAP cells, entry by entry into the row group's columns (a leaf's cell is definition level 1 when set;
 * a MAP's entries are the repeated `key_value` group: key at level 2, value at 3 when set, an empty map at 1).
 */
function addRowWithMaps(cells: RowGroupCells, row: readonly RowCell[], maps: readonly boolean[]): void {
  cells.beginRow();
  let c = 0;
  row.forEach((cell, i) => {
    if (!maps[i]) {
      if (cell === null) cells.push(c++, 0, 0);
      else cells.push(c++, 1, 0, cell as Exclude<Cell, null>);
      return;
    }
    const entries = cell as MapCell | null;
    if (entries === null || entries.keys.length === 0) {
      // NULL, or a map without entries.
      const level = entries === null ? 0 : 1;
      cells.push(c, level, 0);
      cells.push(c + 1, level, 0);
    } else {
      entries.keys.forEach((key, at) => {
        const value = entries.values[at];
        cells.push(c, 2, at === 0 ? 0 : 1, key);
        if (value === null) cells.push(c + 1, 2, at === 0 ? 0 : 1);
        else cells.push(c + 1, 3, at === 0 ? 0 : 1, value);
      });
    }
    c += 2;
  });
  cells.endRow();
}

/** The nested layout: records shredded into STRUCT and LIST columns (`parquet-nested.ts`). */
function nestedWriter(file: ParquetFile, options: ParquetWriterOptions): LayoutWriter {
  let layout: NestedLayout | undefined;
  // A dataset's part has the dataset's shapes: nothing is noted, nothing widened.
  const spills = options.shapes === undefined ? new Spills(options.maxDepth ?? DEFAULT_NESTED_MAX_DEPTH) : undefined;
  const specs = (): ColumnSpec[] => layout!.columns.map(({ path, kind, maxDefinition, maxRepetition }) => file.spec(path, kind, maxDefinition, maxRepetition));
  const writer = sampledWriter(
    {
      async begin(sample, repairs) {
        layout = NestedLayout.plan(sample, options, repairs);
        await file.begin(specs());
        return (record) => {
          layout!.shred(record, file.cells, repairs, spills?.note);
          // A field first seen now added columns: later groups are encoded with them.
          if (layout!.columns.length !== file.columns) file.addColumns(specs());
          return file.rowAdded();
        };
      },
      async end() {
        // The schema and description as of the last record: fields added after the sample change them.
        if (layout !== undefined) file.describe(layout.schema(), layout.describe());
        await file.end();
      },
    },
    options.sampleSize ?? DEFAULT_SAMPLE_SIZE,
  );
  return {
    writer,
    widened: () => {
      if (spills === undefined || layout === undefined) return undefined;
      const shapes = widenFields(layout.fields, spills);
      return shapes === undefined ? undefined : { ...options, shapes };
    },
  };
}

/**
 * Under Deno, handing a row group to a `node:worker_threads` worker and back cost more than encoding
 * it here: 20,000 posts took 2–3× as long as under Node (`bench/deno.ts` has the figures).
 */
function defaultEncoder(): ParquetEncoder {
  return 'Deno' in globalThis ? 'thread' : 'worker';
}
