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
import { encodeRowGroup, placeRowGroup, type CompressedRowGroup } from './parquet-columns.ts';
import { encodeRowGroupOffThread } from './parquet-encoder.ts';
import { NestedLayout, PARQUET_TYPE } from './parquet-nested.ts';
import { serializeThrift } from './parquet-thrift.ts';
import type { CellColumnType, ColumnSpec, PhysicalType, PlainColumns } from './parquet-types.ts';
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

export function parquetWriter(destination: Destination, options: ParquetOptions): RecordWriter {
  const file = new ParquetFile(destination, {
    compression: COMPRESSION[options.compression ?? 'snappy'],
    rowGroupSize: options.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE,
    offThread: (options.encoder ?? defaultEncoder()) === 'worker',
  });
  return options.layout === 'flat' ? flatWriter(file, options) : nestedWriter(file, options);
}

/** The flat layout: one optional column per dotted leaf path, fed a row of cells per record (`rows.ts`). */
function flatWriter(file: ParquetFile, options: ParquetOptions): RecordWriter {
  return tableWriter(
    {
      async begin(layout, names) {
        const kinds: ColumnKind[] = [...layout.columns.map((column) => column.kind ?? 'string'), 'json'];
        const specs = names.map((name, i) => file.spec([name], kinds[i], 1, 0));
        // Which VARCHAR columns hold JSON text, and which column overflows: what a reader needs to rebuild records.
        file.describe(schemaElements(names.map((name, i) => ({ name, ...PARQUET_TYPE[kinds[i]] }))), {
          layout: 'flat',
          columns: layout.columns.map(({ kind }, i) => ({ name: names[i], kind })),
          overflow: layout.overflowName,
        });
        await file.begin(specs);
      },
      writeRow(row) {
        file.cells.add(row);
        return file.rowAdded();
      },
      end: () => file.end(),
    },
    options,
    true,
  );
}

/** The nested layout: records shredded into STRUCT and LIST columns (`parquet-nested.ts`). */
function nestedWriter(file: ParquetFile, options: ParquetOptions): RecordWriter {
  let layout: NestedLayout | undefined;
  const specs = (): ColumnSpec[] => layout!.columns.map(({ path, kind, maxDefinition, maxRepetition }) => file.spec(path, kind, maxDefinition, maxRepetition));
  return sampledWriter(
    {
      async begin(sample, repairs) {
        layout = NestedLayout.plan(sample, options, repairs);
        await file.begin(specs());
        return (record) => {
          layout!.shred(record, file.cells, repairs);
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
}

/** A thrift `RowGroup` as the footer lists it. */
interface RowGroupEntry {
  columns: unknown[];
  num_rows: number;
}

/**
 * One Parquet file being written: the magic, row groups in order (each encoded, maybe in the
 * encoder's worker, while the next is gathered), and the footer. A layout fills `cells` and calls
 * `rowAdded` after each row.
 */
class ParquetFile {
  /** The current row group's cells (after `begin`). */
  cells!: RowGroupCells;
  private specs: ColumnSpec[] = [];
  private schema: unknown[] = [];
  private description: unknown;
  /** The columns whose dictionaries did not pay, as of the group before: each group is encoded knowing them. */
  private plain: Promise<PlainColumns> = Promise.resolve([]);
  private readonly rowGroups: RowGroupEntry[] = [];
  private offset = 0;
  private rows = 0;
  /**
   * The row group being encoded and written while the next one is gathered: at most one is, so
   * groups reach the file in order and memory holds two groups at most.
   */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly destination: Destination,
    private readonly options: { compression: string; rowGroupSize: number; offThread: boolean },
  ) {}

  /** The spec of a column of `kind`, compressed as this file's are. */
  spec(path: readonly string[], kind: ColumnKind, maxDefinition: number, maxRepetition: number): ColumnSpec {
    const { physical, exact } = PARQUET_TYPE[kind];
    return { path, physical, exact, maxDefinition, maxRepetition, compression: this.options.compression };
  }

  /** How many columns the file has so far. */
  get columns(): number {
    return this.specs.length;
  }

  /** Writes the magic; rows may then be added. */
  async begin(specs: ColumnSpec[]): Promise<void> {
    this.specs = specs;
    this.cells = new RowGroupCells(specs.map(cellType), this.options.rowGroupSize);
    await this.write(MAGIC);
  }

  /** Columns added since (the layout already added them to `cells`): groups encoded from now on carry them. */
  addColumns(specs: ColumnSpec[]): void {
    this.specs = specs;
  }

  /** The schema elements and the `socialstream.columns` description the footer will hold. */
  describe(schema: unknown[], description: unknown): void {
    this.schema = schema;
    this.description = description;
  }

  /** After each row: a full group goes to be encoded (a promise only when it had to wait). */
  rowAdded(): Promise<void> | undefined {
    return this.cells.full ? this.flush() : undefined;
  }

  /** Writes the last group, completes the groups written before a column was added, and writes the footer. */
  async end(): Promise<void> {
    await this.flush();
    await this.writing;
    await this.completeRowGroups();
    const footer = this.footer();
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length);
    await this.write(Buffer.concat([footer, length, MAGIC]));
  }

  /** Hands the gathered rows to the encoder; resolves once the group before them is written. */
  private async flush(): Promise<void> {
    const group = this.cells;
    if (group.rows === 0) return;
    this.rows += group.rows;
    const cells = group.take();
    // The columns as of this group: a later field may add some before it is encoded.
    const specs = this.specs;
    const encode = this.options.offThread ? encodeRowGroupOffThread : encodeRowGroup;
    const encoding = this.plain.then((plain) => encode(specs, cells, plain));
    this.plain = encoding.then((encoded) => encoded.plain);
    this.plain.catch(() => undefined);
    const before = this.writing;
    this.writing = (async () => {
      const ready = await encoding;
      group.recycle(cells);
      await before;
      await this.place(ready);
    })();
    // Its failure is reported by the next flush or by end(), whichever awaits it; never unhandled.
    this.writing.catch(() => undefined);
    await before;
  }

  /** Writes an encoded group at the file's current end and lists it for the footer. */
  private async place(group: CompressedRowGroup): Promise<void> {
    const placed = placeRowGroup(group, this.offset);
    this.rowGroups.push(placed.metadata as RowGroupEntry);
    await this.write(placed.body);
  }

  /** Gives each row group written before a column was added an all-NULL chunk of it, so every group has every column. */
  private async completeRowGroups(): Promise<void> {
    for (const rowGroup of this.rowGroups) {
      const missing = this.specs.slice(rowGroup.columns.length);
      if (missing.length === 0) continue;
      const entries = rowGroup.num_rows;
      const columns = missing.map((spec) => ({
        entries,
        defined: new Uint8Array(entries),
        repeated: spec.maxRepetition > 0 ? new Uint8Array(entries) : undefined,
      }));
      const placed = placeRowGroup(await encodeRowGroup(missing, { rows: entries, columns }, []), this.offset);
      rowGroup.columns.push(...(placed.metadata as RowGroupEntry).columns);
      await this.write(placed.body);
    }
  }

  private footer(): Buffer {
    return serializeThrift(
      new parquetTypes.FileMetaData({
        version: 1,
        schema: this.schema,
        num_rows: this.rows,
        row_groups: this.rowGroups,
        key_value_metadata: [new parquetTypes.KeyValue({ key: COLUMNS_METADATA_KEY, value: JSON.stringify(this.description) })],
        created_by: 'socialstream',
        // Declares min_value/max_value ordered by type (signed numbers, unsigned UTF-8 bytes): without it readers ignore them.
        column_orders: this.specs.map(() => new parquetTypes.ColumnOrder({ TYPE_ORDER: new parquetTypes.TypeDefinedOrder() })),
      }),
    );
  }

  private async write(chunk: Buffer): Promise<void> {
    this.offset += chunk.length;
    await this.destination.write(chunk);
  }
}

/** What a column's cells hold, for `RowGroupCells`. */
function cellType({ physical, exact, maxRepetition }: ColumnSpec): CellColumnType {
  return { physical, exact, repeated: maxRepetition > 0 };
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
