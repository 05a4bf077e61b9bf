/**
 * A Parquet row group's cells as the writer's thread gathers them, before they are encoded (in the
 * encoder's worker, `parquet-encoder.ts`, or here for a small group): by column, in typed arrays
 * and bytes rather than a JS value per cell.
 *
 * Why not a JS value per cell: a 10,000-row group held as values kept its strings alive across
 * young-generation collections, and copying them doubled the garbage collector's time; posting them
 * to the worker cost a copy per value. Text is therefore joined `TEXT_JOIN` values at a time and
 * written into one byte buffer per column, off the JS heap: an ASCII run as one byte per character,
 * any other as UTF-16 code units, which keep even a lone surrogate as it was. The arrays and buffers
 * of an encoded group are filled again by a later one, so a file allocates them only twice.
 */
import type { PhysicalType } from './parquet-columns.ts';
import type { Cell } from './rows.ts';

/**
 * One column of a row group's cells; plain data, so it can be posted to the worker. A column holds
 * one entry per row in the flat layout; in the nested layout a list column holds one per element
 * (an empty or NULL list, one), as Parquet's repetition and definition levels count them.
 */
export interface CellColumn {
  /** How many entries (levels) the column holds. */
  entries: number;
  /** Each entry's definition level: the column's greatest where it has a value, less where it (or a parent) is NULL. */
  defined: Uint8Array;
  /** Each entry's repetition level (columns inside a list only). */
  repeated?: Uint8Array;
  /** INT64, DOUBLE and BOOLEAN (1 or 0) columns: each entry's value. */
  numbers?: Float64Array;
  /** Exact INT64 columns (`ColumnSpec.exact`): each entry's value, past 2^53 too. */
  integers?: BigInt64Array;
  /** BYTE_ARRAY columns: each value's length in UTF-16 units… */
  lengths?: Uint32Array;
  /** …the values' runs, written one after another from the start of `text`… */
  runs?: TextRun[];
  /** …and the buffer they are written into (only its start, up to the last run's end, is used). */
  text?: Uint8Array;
}

/** `count` values (about `TEXT_JOIN`) as bytes of `text`, up to `end`. */
interface TextRun {
  encoding: 'latin1' | 'utf16le';
  end: number;
  count: number;
}

/** One row group's cells, by column. */
export interface CellColumns {
  rows: number;
  columns: CellColumn[];
}

/** What a column holds: its physical type, whether it lies inside a list (so it needs repetition levels), whether it is exact. */
export interface CellColumnType {
  physical: PhysicalType;
  repeated: boolean;
  /** An exact INT64 column (`ColumnSpec.exact`): its values are kept as bigints. */
  exact?: boolean;
}

/** How many values of a text column are joined at once: few runs to write and read, few values waiting to be joined. */
const TEXT_JOIN = 256;

/** Room for a text column's first group; the buffer grows as needed and is kept for the next groups. */
const TEXT_BYTES = 16 * 1024;

/**
 * Entries a group's columns have room for at first; they double as entries come. A dataset publish
 * writes a part file of a few rows in each partition it touches, and room for a whole group
 * (10,000 rows) in every column of each was most of its time.
 */
const FIRST_ROWS = 64;

/** Gathers rows into columns until a row group is full: a store or two per cell. */
export class RowGroupCells {
  rows = 0;
  private columns: CellColumn[] = [];
  /** Per text column, the values not yet joined into a run. */
  private pending: string[][] = [];
  /** Columns of groups already encoded, to be filled again. */
  private readonly spare: CellColumn[][] = [];
  /** Per column, its entries and its text waiting to be joined when the current row began. */
  private marks: Uint32Array;
  private pendingMarks: Uint32Array;

  constructor(
    private types: readonly CellColumnType[],
    readonly capacity: number,
  ) {
    this.marks = new Uint32Array(types.length);
    this.pendingMarks = new Uint32Array(types.length);
    this.reset();
  }

  /**
   * Adds columns (a field first seen after the sample, in the nested layout), NULL in the rows
   * gathered so far; groups filled again later get them too. May be called within a row.
   */
  addColumns(types: readonly CellColumnType[]): void {
    const first = this.types.length;
    this.types = [...this.types, ...types];
    this.marks = grown(this.marks, new Uint32Array(this.types.length));
    this.pendingMarks = grown(this.pendingMarks, new Uint32Array(this.types.length));
    types.forEach((type, i) => {
      // Zeroed levels are definition level 0: NULL at the top, in every row so far.
      const column = newColumn(type, Math.max(this.rows, Math.min(this.capacity, FIRST_ROWS)));
      column.entries = this.rows;
      this.columns.push(column);
      this.pending.push([]);
      this.marks[first + i] = this.rows;
    });
  }

  get full(): boolean {
    return this.rows >= this.capacity;
  }

  /** One flat row: a cell per column, definition level 1 where it has a value. */
  add(row: readonly Cell[]): void {
    for (let c = 0; c < this.columns.length; c++) {
      const cell = row[c];
      if (cell === null) {
        this.pushEntry(c, 0, 0);
        continue;
      }
      this.pushEntry(c, 1, 0, cell);
      if (typeof cell !== 'string') continue;
      const pending = this.pending[c];
      pending.push(cell);
      if (pending.length === TEXT_JOIN) {
        writeRun(this.columns[c], pending);
        pending.length = 0;
      }
    }
    this.rows++;
  }

  /**
   * Starts a row whose entries are pushed column by column (`push`, the nested layout): until
   * `endRow`, `dropRow` takes them all back, so a record that fails half way leaves no trace.
   */
  beginRow(): void {
    for (let c = 0; c < this.columns.length; c++) {
      this.marks[c] = this.columns[c].entries;
      this.pendingMarks[c] = this.pending[c].length;
    }
  }

  /** Ends the row begun by `beginRow`; text waiting to be joined is joined now, never within a row. */
  endRow(): void {
    this.rows++;
    for (let c = 0; c < this.columns.length; c++) {
      const pending = this.pending[c];
      if (pending.length >= TEXT_JOIN) {
        writeRun(this.columns[c], pending);
        pending.length = 0;
      }
    }
  }

  /** Takes back every entry pushed since `beginRow`. */
  dropRow(): void {
    for (let c = 0; c < this.columns.length; c++) {
      const column = this.columns[c];
      column.entries = this.marks[c];
      this.pending[c].length = this.pendingMarks[c];
    }
  }

  /** One entry of column `c` in a row begun by `beginRow`: its levels, and its value where it has one. */
  push(c: number, definition: number, repetition: number, cell?: Exclude<Cell, null>): void {
    this.pushEntry(c, definition, repetition, cell);
    if (typeof cell === 'string') this.pending[c].push(cell);
  }

  /** Stores an entry; a text value is left for the caller to queue for joining. */
  private pushEntry(c: number, definition: number, repetition: number, cell?: Exclude<Cell, null>): void {
    const column = this.columns[c];
    if (column.entries === column.defined.length) grow(column);
    const at = column.entries++;
    column.defined[at] = definition;
    if (column.repeated !== undefined) column.repeated[at] = repetition;
    if (cell === undefined) return;
    if (column.integers !== undefined) {
      // A safe integer or a bigint within int64 (`rows.ts` sends others to the overflow column).
      column.integers[at] = typeof cell === 'bigint' ? cell : BigInt(cell);
      return;
    }
    if (column.lengths === undefined) {
      // A boolean is stored as 1 or 0.
      column.numbers![at] = cell as number;
      return;
    }
    column.lengths[at] = (cell as string).length;
  }

  /** The rows gathered so far; the buffer is then empty again. */
  take(): CellColumns {
    this.columns.forEach((column, c) => {
      if (this.pending[c].length > 0) writeRun(column, this.pending[c]);
    });
    const group = { rows: this.rows, columns: this.columns };
    this.reset();
    return group;
  }

  /** Hands back the columns of a group taken earlier, once it is encoded, to be filled again. */
  recycle(group: CellColumns): void {
    this.spare.push(group.columns);
  }

  private reset(): void {
    this.rows = 0;
    this.pending = this.types.map(() => []);
    const spare = this.spare.pop();
    if (spare !== undefined) {
      for (const column of spare) {
        column.entries = 0;
        if (column.runs !== undefined) column.runs = [];
      }
      // A group taken before columns were added lacks them.
      for (const type of this.types.slice(spare.length)) spare.push(newColumn(type, Math.min(this.capacity, FIRST_ROWS)));
      this.columns = spare;
      return;
    }
    this.columns = this.types.map((type) => newColumn(type, Math.min(this.capacity, FIRST_ROWS)));
  }
}

function newColumn({ physical, repeated, exact }: CellColumnType, rows: number): CellColumn {
  const levels = { entries: 0, defined: new Uint8Array(rows), repeated: repeated ? new Uint8Array(rows) : undefined };
  return physical === 'BYTE_ARRAY'
    ? { ...levels, lengths: new Uint32Array(rows), runs: [], text: Buffer.allocUnsafe(Math.min(TEXT_BYTES, rows * 64)) }
    : exact === true
      ? { ...levels, integers: new BigInt64Array(rows) }
      : { ...levels, numbers: new Float64Array(rows) };
}

/** Doubles a column's room for entries, keeping what it holds. */
function grow(column: CellColumn): void {
  const room = column.defined.length * 2;
  column.defined = grown(column.defined, new Uint8Array(room));
  if (column.repeated !== undefined) column.repeated = grown(column.repeated, new Uint8Array(room));
  if (column.numbers !== undefined) column.numbers = grown(column.numbers, new Float64Array(room));
  if (column.integers !== undefined) column.integers = grownIntegers(column.integers, new BigInt64Array(room));
  if (column.lengths !== undefined) column.lengths = grown(column.lengths, new Uint32Array(room));
}

function grown<T extends Uint8Array | Uint32Array | Float64Array>(old: T, room: T): T {
  room.set(old);
  return room;
}

function grownIntegers(old: BigInt64Array, room: BigInt64Array): BigInt64Array {
  room.set(old);
  return room;
}

function writeRun(column: CellColumn, values: readonly string[]): void {
  const joined = values.join('');
  const runs = column.runs!;
  // A UTF-8 length equal to the string's length means every character is ASCII.
  const encoding = Buffer.byteLength(joined, 'utf8') === joined.length ? 'latin1' : 'utf16le';
  const start = runs.length === 0 ? 0 : runs[runs.length - 1].end;
  const end = start + (encoding === 'latin1' ? joined.length : joined.length * 2);
  let text = column.text!;
  if (end > text.length) {
    const grown = Buffer.allocUnsafe(Math.max(end, text.length * 2));
    grown.set(text.subarray(0, start));
    column.text = text = grown;
  }
  bufferOf(text).write(joined, start, encoding);
  runs.push({ encoding, end, count: values.length });
}

/** The same bytes as a Buffer: cells posted to the worker arrive as Uint8Arrays. */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Reads a text column's values back as strings, in entry order, one `next` per entry with a value. */
export class TextValues {
  private text = '';
  private run = -1;
  /** Where the next value starts in `text`, and how many of its run's values were read. */
  private at = 0;
  private taken = 0;
  private count = 0;

  constructor(private readonly column: CellColumn) {}

  /** The next value, `length` UTF-16 units long. */
  next(length: number): string {
    if (this.taken === this.count) this.nextRun();
    const value = this.text.slice(this.at, this.at + length);
    this.at += length;
    this.taken++;
    return value;
  }

  private nextRun(): void {
    const runs = this.column.runs!;
    const start = this.run < 0 ? 0 : runs[this.run].end;
    const { encoding, end, count } = runs[++this.run];
    this.text = bufferOf(this.column.text!).toString(encoding, start, end);
    this.at = 0;
    this.taken = 0;
    this.count = count;
  }
}
