/**
 * Column chunk statistics (min, max, null count), so engines skip row groups a filter rules out.
 * `min_value`/`max_value` order values as the column's type does (signed numbers, false < true,
 * strings by unsigned UTF-8 bytes); the deprecated `min`/`max` are also written where their
 * signed-byte order agrees, since old readers consult only those.
 */
import { writeInt64 } from './parquet-encoding.ts';

/**
 * Longer string bounds are left out (as Arrow does by default): they would bloat the footer, and
 * a truncated bound would no longer be the exact value old readers take it for.
 */
const MAX_STATISTICS_BYTES = 4096;

/**
 * The fields of a thrift `Statistics`, as plain data: a row group may be encoded in a worker thread,
 * and only plain data crosses back (`placeRowGroup` makes the thrift structure).
 */
export interface StatisticsFields {
  null_count: number;
  min_value?: Uint8Array;
  max_value?: Uint8Array;
  /** The deprecated signed-order bounds, where they agree with `min_value`/`max_value`. */
  min?: Uint8Array;
  max?: Uint8Array;
}

/** Which of the values seen so far are the least and the greatest. */
export interface Statistics {
  nulls: number;
  /** The statistics of everything seen. */
  encode(): StatisticsFields;
}

export class NumberStatistics implements Statistics {
  nulls = 0;
  /** An exact INT64 column's bounds may be bigints (JavaScript compares the two kinds exactly). */
  min: number | bigint = Infinity;
  max: number | bigint = -Infinity;

  constructor(private readonly physical: 'INT64' | 'DOUBLE') {}

  /** NaN is no bound: the specification leaves it out of min and max. */
  observe(value: number | bigint): void {
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  encode(): StatisticsFields {
    if (this.min > this.max) return { null_count: this.nulls };
    // A zero bound is written -0 as a minimum and +0 as a maximum, so either zero is inside it.
    const min = this.encodeNumber(this.min === 0 ? -0 : this.min);
    const max = this.encodeNumber(this.max === 0 ? 0 : this.max);
    return { null_count: this.nulls, min_value: min, max_value: max, min, max };
  }

  private encodeNumber(value: number | bigint): Buffer {
    const bytes = Buffer.allocUnsafe(8);
    if (this.physical === 'INT64') writeInt64(bytes, value, 0);
    else bytes.writeDoubleLE(value as number, 0);
    return bytes;
  }
}

export class BooleanStatistics implements Statistics {
  nulls = 0;
  private seen = 0;

  observe(value: boolean): void {
    this.seen |= value ? 2 : 1;
  }

  encode(): StatisticsFields {
    if (this.seen === 0) return { null_count: this.nulls };
    const min = Buffer.from([this.seen & 1 ? 0 : 1]);
    const max = Buffer.from([this.seen & 2 ? 1 : 0]);
    return { null_count: this.nulls, min_value: min, max_value: max, min, max };
  }
}

/**
 * Bounds over UTF-8 bytes, compared unsigned (where UTF-16 order would put U+E000–U+FFFF after
 * emoji). The values are ranges of one buffer, a row group's text (`CellColumn.text`), so a value
 * is only copied out when the bounds are encoded.
 */
export class TextStatistics implements Statistics {
  nulls = 0;
  private minStart = -1;
  private minEnd = -1;
  private maxStart = -1;
  private maxEnd = -1;

  constructor(
    private readonly text: Uint8Array,
    /** A DataView of `text`. */
    private readonly view: DataView,
    /** Whether every value is ASCII: only then do signed bytes order them as unsigned ones do. */
    private readonly ascii: boolean,
  ) {}

  /** The value `text[start, end)`. */
  observe(start: number, end: number): void {
    if (this.minStart < 0) {
      this.minStart = this.maxStart = start;
      this.minEnd = this.maxEnd = end;
    } else if (compareBytes(this.view, this.text, start, end, this.minStart, this.minEnd) < 0) {
      this.minStart = start;
      this.minEnd = end;
    } else if (compareBytes(this.view, this.text, start, end, this.maxStart, this.maxEnd) > 0) {
      this.maxStart = start;
      this.maxEnd = end;
    }
  }

  encode(): StatisticsFields {
    const nulls = { null_count: this.nulls };
    if (this.minStart < 0) return nulls;
    if (this.minEnd - this.minStart > MAX_STATISTICS_BYTES || this.maxEnd - this.maxStart > MAX_STATISTICS_BYTES) return nulls;
    // Copies: the text buffer is filled again by a later row group.
    const min = Buffer.from(this.text.subarray(this.minStart, this.minEnd));
    const max = Buffer.from(this.text.subarray(this.maxStart, this.maxEnd));
    const legacy = this.ascii ? { min, max } : {};
    return { ...nulls, min_value: min, max_value: max, ...legacy };
  }
}

/**
 * `bytes[aStart, aEnd)` against `bytes[bStart, bEnd)`, unsigned and then by length: negative, zero
 * or positive. Four bytes at a time first: read big-endian, two words order as their bytes do.
 */
function compareBytes(view: DataView, bytes: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const a = aEnd - aStart;
  const b = bEnd - bStart;
  const n = a < b ? a : b;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const x = view.getUint32(aStart + i);
    const y = view.getUint32(bStart + i);
    if (x !== y) return x < y ? -1 : 1;
  }
  for (; i < n; i++) {
    const difference = bytes[aStart + i] - bytes[bStart + i];
    if (difference !== 0) return difference;
  }
  return a - b;
}
