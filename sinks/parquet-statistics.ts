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
 * Bounds over the UTF-8 bytes as written. ASCII text compares the same as JS strings, so those
 * comparisons stay in JS; anything else compares the encoded bytes (where UTF-16 order would put
 * U+E000–U+FFFF after emoji, and a lone surrogate is written as U+FFFD).
 */
export class StringStatistics implements Statistics {
  nulls = 0;
  private min: string | undefined;
  private max = '';
  private minBytes: Buffer | undefined;
  private maxBytes: Buffer | undefined;
  private minAscii = true;
  private maxAscii = true;
  /** Whether every value was ASCII: only then do signed bytes order them as unsigned ones do. */
  private ascii = true;

  /** `text`, of which `bytes[start, end)` is the UTF-8 encoding. */
  observe(text: string, bytes: Buffer, start: number, end: number): void {
    const ascii = end - start === text.length;
    if (this.min === undefined) {
      this.setMin(text, ascii);
      this.setMax(text, ascii);
      this.ascii = ascii;
      return;
    }
    if (!ascii) this.ascii = false;
    if (this.belowMin(text, ascii, bytes, start, end)) this.setMin(text, ascii);
    else if (this.aboveMax(text, ascii, bytes, start, end)) this.setMax(text, ascii);
  }

  private belowMin(text: string, ascii: boolean, bytes: Buffer, start: number, end: number): boolean {
    if (ascii && this.minAscii) return text < this.min!;
    return bytes.compare((this.minBytes ??= Buffer.from(this.min!)), 0, undefined, start, end) < 0;
  }

  private aboveMax(text: string, ascii: boolean, bytes: Buffer, start: number, end: number): boolean {
    if (ascii && this.maxAscii) return text > this.max;
    return bytes.compare((this.maxBytes ??= Buffer.from(this.max)), 0, undefined, start, end) > 0;
  }

  encode(): StatisticsFields {
    const nulls = { null_count: this.nulls };
    if (this.min === undefined) return nulls;
    const min = (this.minBytes ??= Buffer.from(this.min));
    const max = (this.maxBytes ??= Buffer.from(this.max));
    if (min.length > MAX_STATISTICS_BYTES || max.length > MAX_STATISTICS_BYTES) return nulls;
    const legacy = this.ascii ? { min, max } : {};
    return { ...nulls, min_value: min, max_value: max, ...legacy };
  }

  private setMin(text: string, ascii: boolean): void {
    this.min = text;
    this.minAscii = ascii;
    this.minBytes = undefined;
  }

  private setMax(text: string, ascii: boolean): void {
    this.max = text;
    this.maxAscii = ascii;
    this.maxBytes = undefined;
  }
}
