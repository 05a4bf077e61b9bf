/**
 * A Parquet row group's cells as the writer's thread gathers them, before they are encoded (in the
 * encoder's worker, `parquet-encoder.ts`, or here for a small group): by column, in typed arrays
 * and bytes rather than a JS value per cell.
 *
 * Why not a JS value per cell: a 10,000-row group held as values kept its strings alive across
 * young-generation collections, and copying them doubled the garbage collector's time; posting them
 * to the worker cost a copy per value. Text is therefore joined `TEXT_JOIN` values at a time and
 * written as UTF-8 into one byte buffer per column, off the JS heap, with each value's byte length:
 * the bytes the file holds, so the encoder never makes strings again (an ASCII run is one write;
 * any other is written value by value). The arrays lie on SharedArrayBuffers, so the worker reads
 * them where they were written, and the arrays of an encoded group are filled again by a later one.
 */
import { latin1Write, utf8Write } from './parquet-encoding.ts';
import type { CellColumn, CellColumns, CellColumnType } from './parquet-types.ts';
import type { Cell } from './values.ts';

/** How many values of a text column are joined at once: few writes, few values waiting to be joined. */
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
  /**
   * Per text column, the values not yet joined into the buffer: the first `waiting[c]` of
   * `pending[c]`. The arrays keep their room from one join to the next (emptied by setting their
   * length, V8 gave back their memory and grew them again: a ninth of what the writer allocated).
   */
  private pending: string[][] = [];
  private waiting = new Uint32Array(0);
  /** Per text column, how many values' lengths are written. */
  private values: number[] = [];
  /** Columns of groups already encoded, to be filled again. */
  private readonly spare: CellColumn[][] = [];
  /**
   * Per column, its entries and its text waiting to be joined when the current row began, noted at
   * the row's first entry of the column (`touched` holds that row's number): a row costs nothing
   * for the columns it does not reach, and `beginRow` no loop over every column.
   */
  private marks: Uint32Array;
  private pendingMarks: Uint32Array;
  private touched: Uint32Array;
  /** The row begun by `beginRow`, counting dropped rows too (0: none yet), as `touched` notes it. */
  private rowNumber = 0;
  /** Text columns whose waiting values reached `TEXT_JOIN` in this row, joined at its end. */
  private due: number[] = [];

  constructor(
    private types: readonly CellColumnType[],
    readonly capacity: number,
  ) {
    this.marks = new Uint32Array(types.length);
    this.pendingMarks = new Uint32Array(types.length);
    this.touched = new Uint32Array(types.length);
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
    this.waiting = grown(this.waiting, new Uint32Array(this.types.length));
    this.touched = grown(this.touched, new Uint32Array(this.types.length));
    types.forEach((type, i) => {
      // Zeroed levels are definition level 0: NULL at the top, in every row so far.
      const column = newColumn(type, Math.max(this.rows, Math.min(this.capacity, FIRST_ROWS)));
      column.entries = this.rows;
      this.columns.push(column);
      this.pending.push(textRoom());
      this.values.push(0);
      // Within a row, the column's mark is its entries before the row: NULL in every row so far.
      this.marks[first + i] = this.rows;
      this.touched[first + i] = this.rowNumber;
    });
  }

  get full(): boolean {
    return this.rows >= this.capacity;
  }

  /** One flat row: a cell per column, definition level 1 where it has a value. */
  add(row: readonly Cell[]): void {
    const columns = this.columns;
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c];
      if (column.entries === column.defined.length) grow(column, this.expected(column.entries));
      const at = column.entries++;
      if (column.repeated !== undefined) column.repeated[at] = 0;
      const cell = row[c];
      if (cell === null) {
        column.defined[at] = 0;
        continue;
      }
      column.defined[at] = 1;
      if (typeof cell === 'string') {
        if (this.queueText(c, cell)) this.writePending(c);
      } else if (column.integers !== undefined) {
        if (typeof cell === 'bigint') column.integers[at] = cell;
        else storeSafeInteger(column.integerWords!, at, cell as number);
      } else if (column.numbers !== undefined) {
        column.numbers[at] = cell as number;
      }
    }
    this.rows++;
  }

  /**
   * Starts a row whose entries are pushed column by column (`push`, the nested layout): until
   * `endRow`, `dropRow` takes them all back, so a record that fails half way leaves no trace.
   */
  beginRow(): void {
    // A row number wraps after 2^32 rows; 0 stays "no row yet" for the columns' `touched`.
    this.rowNumber = this.rowNumber === 0xffff_ffff ? 1 : this.rowNumber + 1;
  }

  /** Ends the row begun by `beginRow`; text waiting to be joined is joined now, never within a row. */
  endRow(): void {
    this.rows++;
    if (this.due.length === 0) return;
    for (const c of this.due) this.writePending(c);
    this.due.length = 0;
  }

  /** Takes back every entry pushed since `beginRow`. */
  dropRow(): void {
    for (let c = 0; c < this.columns.length; c++) {
      if (this.touched[c] !== this.rowNumber) continue;
      this.columns[c].entries = this.marks[c];
      this.waiting[c] = this.pendingMarks[c];
    }
    this.due.length = 0;
  }

  /** One entry of column `c` in a row begun by `beginRow`: its levels, and its value where it has one. */
  push(c: number, definition: number, repetition: number, cell?: Exclude<Cell, null>): void {
    this.mark(c);
    this.pushEntry(c, definition, repetition, cell);
    if (typeof cell === 'string' && this.queueText(c, cell)) this.due.push(c);
  }

  /**
   * `push` for code that knows its entry's kind (the nested layout's compiled shredding): an entry
   * without a value, a number or boolean of a DOUBLE, BOOLEAN or (not exact) INT64 column, text.
   * Each is small enough for V8 to inline where its budget allows; `push`, deciding the kind, is not.
   */
  pushNull(c: number, definition: number, repetition: number): void {
    this.mark(c);
    this.levels(c, definition, repetition);
  }

  pushNumber(c: number, definition: number, repetition: number, value: number | boolean): void {
    this.mark(c);
    // `levels` may grow the column's arrays: the place first, then the array.
    const at = this.levels(c, definition, repetition);
    // A boolean is stored as 1 or 0.
    this.columns[c].numbers![at] = value as number;
  }

  pushText(c: number, definition: number, repetition: number, text: string): void {
    this.mark(c);
    this.levels(c, definition, repetition);
    if (this.queueText(c, text)) this.due.push(c);
  }

  /** Notes, at a row's first entry of column `c`, what the column held before the row (for `dropRow`). */
  private mark(c: number): void {
    if (this.touched[c] === this.rowNumber) return;
    this.touched[c] = this.rowNumber;
    this.marks[c] = this.columns[c].entries;
    this.pendingMarks[c] = this.waiting[c];
  }

  /** Queues `text` for joining into column `c`; true when that made `TEXT_JOIN` values wait. */
  private queueText(c: number, text: string): boolean {
    const waiting = this.waiting[c];
    // A list may queue more than `TEXT_JOIN` values in one row: the array then grows.
    this.pending[c][waiting] = text;
    this.waiting[c] = waiting + 1;
    return waiting + 1 === TEXT_JOIN;
  }

  /** Stores an entry; a text value is left for the caller to queue for joining. */
  private pushEntry(c: number, definition: number, repetition: number, cell?: Exclude<Cell, null>): void {
    const at = this.levels(c, definition, repetition);
    if (cell === undefined) return;
    const column = this.columns[c];
    if (column.integers !== undefined) {
      // A safe integer or a bigint within int64 (`rows.ts` sends others to the overflow column).
      if (typeof cell === 'bigint') column.integers[at] = cell;
      else storeSafeInteger(column.integerWords!, at, cell as number);
    } else if (column.numbers !== undefined) {
      // A boolean is stored as 1 or 0.
      column.numbers[at] = cell as number;
    }
  }

  /** Stores an entry's levels; returns its place in the column. */
  private levels(c: number, definition: number, repetition: number): number {
    const column = this.columns[c];
    if (column.entries === column.defined.length) grow(column, this.expected(column.entries));
    const at = column.entries++;
    column.defined[at] = definition;
    if (column.repeated !== undefined) column.repeated[at] = repetition;
    return at;
  }

  /** Writes column `c`'s waiting values into its text buffer, with their lengths. */
  private writePending(c: number): void {
    const pending = this.pending[c];
    const column = this.columns[c];
    const waiting = this.waiting[c];
    this.values[c] = writeText(column, waiting === pending.length ? pending : pending.slice(0, waiting), this.values[c], this.expected(column.textBytes!));
    this.waiting[c] = 0;
  }

  /**
   * What a column holding `sofar` (entries or bytes) now will hold when the group is full, at the
   * rate of the rows so far (once there are enough of them to tell): growing to it at once, not by
   * doubling, allocates and copies far less. At most 8 times `sofar`, so one odd row cannot make it
   * huge.
   */
  private expected(sofar: number): number {
    if (this.rows < FIRST_ROWS) return 0;
    return Math.min(Math.ceil((sofar / this.rows) * this.capacity * 1.1), sofar * 8);
  }

  /** The rows gathered so far; the buffer is then empty again. */
  take(): CellColumns {
    for (let c = 0; c < this.columns.length; c++) if (this.waiting[c] > 0) this.writePending(c);
    const group = { rows: this.rows, columns: this.columns };
    this.reset(group.columns);
    return group;
  }

  /** Hands back the columns of a group taken earlier, once it is encoded, to be filled again. */
  recycle(group: CellColumns): void {
    this.spare.push(group.columns);
  }

  /**
   * Empties the buffer for the next group: the columns of an encoded group, or new ones as large as
   * `previous` (the group just taken) grew, so the next group does not grow its arrays again.
   */
  private reset(previous?: readonly CellColumn[]): void {
    this.rows = 0;
    this.pending = this.types.map(textRoom);
    this.waiting = new Uint32Array(this.types.length);
    this.values = this.types.map(() => 0);
    const spare = this.spare.pop();
    if (spare !== undefined) {
      for (const column of spare) {
        column.entries = 0;
        column.textBytes = 0;
        column.ascii = true;
      }
      // A group taken before columns were added lacks them.
      for (const type of this.types.slice(spare.length)) spare.push(newColumn(type, Math.min(this.capacity, FIRST_ROWS)));
      this.columns = spare;
      return;
    }
    this.columns = this.types.map((type, c) => {
      const like = previous?.[c];
      return like === undefined ? newColumn(type, Math.min(this.capacity, FIRST_ROWS)) : newColumn(type, like.defined.length, like.text?.length);
    });
  }
}

/** Room for a text column's values waiting to be joined (`RowGroupCells.pending`). */
function textRoom(): string[] {
  return new Array<string>(TEXT_JOIN).fill('');
}

/**
 * A column with room for `rows` entries (and `textBytes` of text). Every column has every property
 * (unused ones undefined), in one order: `pushEntry` reads them for every cell, and columns of one
 * object shape keep those reads monomorphic.
 */
function newColumn({ physical, repeated, exact }: CellColumnType, rows: number, textBytes = Math.min(TEXT_BYTES, rows * 64)): CellColumn {
  const text = physical === 'BYTE_ARRAY';
  const integers = physical !== 'BYTE_ARRAY' && exact === true;
  const column: CellColumn = {
    entries: 0,
    defined: new Uint8Array(shared(rows)),
    repeated: repeated ? new Uint8Array(shared(rows)) : undefined,
    numbers: text || integers ? undefined : new Float64Array(shared(rows * 8)),
    integers: integers ? new BigInt64Array(shared(rows * 8)) : undefined,
    integerWords: undefined,
    lengths: text ? new Uint32Array(shared(rows * 4)) : undefined,
    text: text ? Buffer.from(shared(textBytes)) : undefined,
    textBytes: 0,
    ascii: true,
  };
  if (column.integers !== undefined) column.integerWords = new Int32Array(column.integers.buffer);
  return column;
}

/** Which of an int64's two 32-bit words is its low half, in this machine's byte order (a BigInt64Array's). */
const LOW_WORD = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;

/**
 * Stores a safe integer at entry `at` of an int64 column as its two 32-bit halves (two's complement).
 * `BigInt(value)` made an object per cell: measured alone, two million cells took 30–60 ms that way
 * and about 9 ms this way.
 */
function storeSafeInteger(words: Int32Array, at: number, value: number): void {
  const high = Math.floor(value / 0x1_0000_0000);
  // The low half as an unsigned 32-bit number; stored into an Int32Array, it keeps its bits.
  words[2 * at + LOW_WORD] = value - high * 0x1_0000_0000;
  words[2 * at + 1 - LOW_WORD] = high;
}

function shared(bytes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(bytes);
}

/** Grows a column's room for entries (at least doubled, to `expected` if more), keeping what it holds. */
function grow(column: CellColumn, expected: number): void {
  const room = Math.max(column.defined.length * 2, expected);
  column.defined = grown(column.defined, new Uint8Array(shared(room)));
  if (column.repeated !== undefined) column.repeated = grown(column.repeated, new Uint8Array(shared(room)));
  if (column.numbers !== undefined) column.numbers = grown(column.numbers, new Float64Array(shared(room * 8)));
  if (column.integers !== undefined) {
    column.integers = grownIntegers(column.integers, new BigInt64Array(shared(room * 8)));
    column.integerWords = new Int32Array(column.integers.buffer);
  }
  if (column.lengths !== undefined) column.lengths = grown(column.lengths, new Uint32Array(shared(room * 4)));
}

function grown<T extends Uint8Array | Uint32Array | Float64Array>(old: T, room: T): T {
  room.set(old);
  return room;
}

function grownIntegers(old: BigInt64Array, room: BigInt64Array): BigInt64Array {
  room.set(old);
  return room;
}

/**
 * Appends `values` to a text column as UTF-8, each one's byte length at `lengths[first…]`;
 * returns how many values the column then holds.
 */
function writeText(column: CellColumn, values: readonly string[], first: number, expected: number): number {
  const joined = values.join('');
  const bytes = Buffer.byteLength(joined, 'utf8');
  const start = column.textBytes!;
  const text = room(column, start + bytes, expected);
  const lengths = column.lengths!;
  let at = first;
  if (bytes === joined.length) {
    // Every character is ASCII: one write, and each value's length in bytes is its length.
    latin1Write.call(text, joined, start);
    for (const value of values) lengths[at++] = value.length;
  } else {
    column.ascii = false;
    let offset = start;
    for (const value of values) {
      const written = utf8Write.call(text, value, offset);
      lengths[at++] = written;
      offset += written;
    }
  }
  column.textBytes = start + bytes;
  return at;
}

/** The column's text buffer, grown (keeping what it holds) to at least `bytes` (to `expected` if more). */
function room(column: CellColumn, bytes: number, expected: number): Buffer {
  const text = column.text as Buffer;
  if (bytes <= text.length) return text;
  const larger = Buffer.from(shared(Math.max(bytes, text.length * 2, expected)));
  larger.set(text.subarray(0, column.textBytes));
  column.text = larger;
  return larger;
}
