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
import type { ColumnSpec } from './parquet-columns.ts';
import type { Cell } from './rows.ts';

/** One column of a row group's cells; plain data, so it can be posted to the worker. */
export interface CellColumn {
  /** 1 where the row has a value, 0 where it is NULL. */
  defined: Uint8Array;
  /** INT64, DOUBLE and BOOLEAN (1 or 0) columns: each row's value. */
  numbers?: Float64Array;
  /** Exact INT64 columns (`ColumnSpec.exact`): each row's value, past 2^53 too. */
  integers?: BigInt64Array;
  /** BYTE_ARRAY columns: each value's length in UTF-16 units… */
  lengths?: Uint32Array;
  /** …the values' runs, written one after another from the start of `text`… */
  runs?: TextRun[];
  /** …and the buffer they are written into (only its start, up to the last run's end, is used). */
  text?: Uint8Array;
}

/** `TEXT_JOIN` values (fewer in a group's last run) as bytes of `text`, up to `end`. */
interface TextRun {
  encoding: 'latin1' | 'utf16le';
  end: number;
}

/** One row group's cells, by column. */
export interface CellColumns {
  rows: number;
  columns: CellColumn[];
}

/** How many values of a text column are joined at once: few runs to write and read, few values waiting to be joined. */
const TEXT_JOIN = 256;

/** Room for a text column's first group; the buffer grows as needed and is kept for the next groups. */
const TEXT_BYTES = 16 * 1024;

/**
 * Rows a group's columns have room for at first; they double as rows come, up to the group's
 * capacity. A dataset publish writes a part file of a few rows in each partition it touches, and
 * room for a whole group (10,000 rows) in every column of each was most of its time.
 */
const FIRST_ROWS = 64;

/** Gathers rows into columns until a row group is full: a store or two per cell. */
export class RowGroupCells {
  rows = 0;
  private columns: CellColumn[] = [];
  /** Rows the columns have room for. */
  private room = 0;
  /** Per text column, the values not yet joined into a run. */
  private pending: string[][] = [];
  /** Columns of groups already encoded, to be filled again. */
  private readonly spare: CellColumn[][] = [];

  constructor(
    private readonly specs: readonly Pick<ColumnSpec, 'physical' | 'exact'>[],
    readonly capacity: number,
  ) {
    this.reset();
  }

  get full(): boolean {
    return this.rows >= this.capacity;
  }

  add(row: readonly Cell[]): void {
    if (this.rows === this.room) this.grow();
    const at = this.rows++;
    for (let c = 0; c < this.columns.length; c++) {
      const cell = row[c];
      if (cell === null) continue;
      const column = this.columns[c];
      column.defined[at] = 1;
      if (column.integers !== undefined) {
        // A safe integer or a bigint within int64 (`rows.ts` sends others to the overflow column).
        column.integers[at] = typeof cell === 'bigint' ? cell : BigInt(cell);
        continue;
      }
      if (column.lengths === undefined) {
        // A boolean is stored as 1 or 0.
        column.numbers![at] = cell as number;
        continue;
      }
      column.lengths[at] = (cell as string).length;
      const pending = this.pending[c];
      pending.push(cell as string);
      if (pending.length === TEXT_JOIN) {
        writeRun(column, pending.join(''));
        pending.length = 0;
      }
    }
  }

  /** The rows gathered so far; the buffer is then empty again. */
  take(): CellColumns {
    this.columns.forEach((column, c) => {
      if (this.pending[c].length > 0) writeRun(column, this.pending[c].join(''));
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
    this.pending = this.specs.map(() => []);
    const spare = this.spare.pop();
    if (spare !== undefined) {
      for (const column of spare) {
        // Only `defined` must start clear: values are read only where it is set.
        column.defined.fill(0);
        if (column.runs !== undefined) column.runs = [];
      }
      this.columns = spare;
      this.room = spare.length === 0 ? this.capacity : spare[0].defined.length;
      return;
    }
    const rows = Math.min(this.capacity, FIRST_ROWS);
    this.columns = this.specs.map(({ physical, exact }) =>
      physical === 'BYTE_ARRAY'
        ? { defined: new Uint8Array(rows), lengths: new Uint32Array(rows), runs: [], text: Buffer.allocUnsafe(Math.min(TEXT_BYTES, rows * 64)) }
        : exact === true
          ? { defined: new Uint8Array(rows), integers: new BigInt64Array(rows) }
          : { defined: new Uint8Array(rows), numbers: new Float64Array(rows) },
    );
    this.room = this.columns.length === 0 ? this.capacity : rows;
  }

  /** Doubles the room of every column (up to the capacity), keeping what they hold. */
  private grow(): void {
    const rows = Math.min(this.capacity, this.room * 2);
    for (const column of this.columns) {
      column.defined = grown(column.defined, new Uint8Array(rows));
      if (column.numbers !== undefined) column.numbers = grown(column.numbers, new Float64Array(rows));
      if (column.integers !== undefined) column.integers = grownIntegers(column.integers, new BigInt64Array(rows));
      if (column.lengths !== undefined) column.lengths = grown(column.lengths, new Uint32Array(rows));
    }
    this.room = rows;
  }
}

function grown<T extends Uint8Array | Uint32Array | Float64Array>(old: T, room: T): T {
  room.set(old);
  return room;
}

function grownIntegers(old: BigInt64Array, room: BigInt64Array): BigInt64Array {
  room.set(old);
  return room;
}

function writeRun(column: CellColumn, joined: string): void {
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
  runs.push({ encoding, end });
}

/** The same bytes as a Buffer: cells posted to the worker arrive as Uint8Arrays. */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Reads a text column's values back as strings, in row order, one `next` per non-NULL row. */
export class TextValues {
  private text = '';
  private run = -1;
  /** Where the next value starts in `text`, and how many of its run's values were read. */
  private at = 0;
  private taken = TEXT_JOIN;

  constructor(private readonly column: CellColumn) {}

  /** The next value, `length` UTF-16 units long. */
  next(length: number): string {
    if (this.taken === TEXT_JOIN) this.nextRun();
    const value = this.text.slice(this.at, this.at + length);
    this.at += length;
    this.taken++;
    return value;
  }

  private nextRun(): void {
    const runs = this.column.runs!;
    const start = this.run < 0 ? 0 : runs[this.run].end;
    const { encoding, end } = runs[++this.run];
    this.text = bufferOf(this.column.text!).toString(encoding, start, end);
    this.at = 0;
    this.taken = 0;
  }
}
