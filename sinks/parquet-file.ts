/**
 * One Parquet file being written (`parquet.ts` feeds it rows in either layout): the magic, then row
 * groups in order, each encoded (`parquet-columns.ts`, in the encoder's worker for large groups:
 * `parquet-encoder.ts`) while the next is gathered, then the footer.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import type { Destination } from './atomic.ts';
import { RowGroupCells } from './parquet-cells.ts';
import { encodeRowGroup, placeRowGroup, type CompressedRowGroup } from './parquet-columns.ts';
import { encodeRowGroupOffThread, startEncoderWorker, workerRows } from './parquet-encoder.ts';
import { PARQUET_TYPE } from './parquet-nested.ts';
import { serializeThrift } from './parquet-thrift.ts';
import type { CellColumnType, ColumnSpec, PlainColumns } from './parquet-types.ts';
import type { ColumnKind } from '../src/column-kinds.ts';

/** Key-value metadata entry describing the columns (DuckDB: `parquet_kv_metadata(file)`). */
export const COLUMNS_METADATA_KEY = 'socialstream.columns';

const MAGIC = Buffer.from('PAR1');

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
export class ParquetFile {
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
   * The row groups being encoded and written while the next one is gathered: at most two are, so
   * groups reach the file in order and memory holds three groups at most.
   */
  private writing: Promise<void> = Promise.resolve();
  /**
   * Once the group being gathered holds this many rows it will be encoded in the worker, which is
   * started then (`startEncoderWorker`); never (-1) when groups are encoded on this thread.
   */
  private workerRows = -1;

  constructor(
    private readonly destination: Destination,
    private readonly options: { compression: string; rowGroupSize: number; offThread: boolean; metadata?: () => Readonly<Record<string, string>> },
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
    if (this.options.offThread) this.workerRows = workerRows(specs.length);
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
    if (this.cells.rows === this.workerRows) startEncoderWorker();
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
    // Its failure is reported by a later flush or by end(), whichever awaits it; never unhandled.
    this.writing.catch(() => undefined);
    // Two groups may wait for the encoder: the first group of a file takes the encoder several
    // times as long as the next ones (its code is not yet optimized), and the writer goes on
    // gathering meanwhile instead of stalling.
    const earlier = this.queued;
    this.queued = before;
    await earlier;
  }

  /** The write the next flush waits for: the group before the one being encoded. */
  private queued: Promise<void> = Promise.resolve();

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
        key_value_metadata: [
          new parquetTypes.KeyValue({ key: COLUMNS_METADATA_KEY, value: JSON.stringify(this.description) }),
          ...Object.entries(this.options.metadata?.() ?? {}).map(([key, value]) => new parquetTypes.KeyValue({ key, value })),
        ],
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
