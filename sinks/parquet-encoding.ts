/**
 * The byte-level encodings Parquet pages are made of: a growable byte buffer, PLAIN INT64 without
 * BigInt (but for an exact `bigint` column's values, which are bigints), ULEB128 varints, and the
 * RLE/bit-packed hybrid that carries definition levels and dictionary indices.
 */

const TWO_32 = 4294967296;

type Utf8Write = (this: Buffer, text: string, offset: number) => number;
/**
 * Buffer's own UTF-8 writer, behind `buffer.write`'s argument checks: those checks cost more than
 * encoding a short string, and every string cell of a Parquet file is written here. It is not
 * documented, so without it `write` does the same.
 */
export const utf8Write: Utf8Write =
  (Buffer.prototype as unknown as { utf8Write?: Utf8Write }).utf8Write ??
  function (this: Buffer, text: string, offset: number): number {
    return this.write(text, offset);
  };

type Latin1Write = (this: Buffer, text: string, offset: number) => number;
/** Buffer's own Latin-1 writer, behind `buffer.write`'s checks, as `utf8Write`: for a run of ASCII text. */
export const latin1Write: Latin1Write =
  (Buffer.prototype as unknown as { latin1Write?: Latin1Write }).latin1Write ??
  function (this: Buffer, text: string, offset: number): number {
    return this.write(text, offset, 'latin1');
  };

/** Copies at least this long are native (`Bytes.copy`). */
const NATIVE_COPY = 512;

/** Node's own memory, not zeroed: what a `Bytes` grows into unless told otherwise. */
function uninitialized(bytes: number): Buffer {
  return Buffer.allocUnsafe(bytes);
}

/** An append-only byte buffer that doubles when full, in memory from `allocate`. */
export class Bytes {
  buffer: Buffer;
  length = 0;
  /** A view of `buffer`, for reads and copies four bytes at a time (replaced when the buffer grows). */
  dataView: DataView;

  constructor(
    capacity = 1024,
    private readonly allocate: (bytes: number) => Buffer = uninitialized,
  ) {
    this.buffer = allocate(capacity);
    this.dataView = viewOf(this.buffer);
  }

  /** Makes room for `extra` more bytes. */
  reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const grown = this.allocate(Math.max(this.buffer.length * 2, this.length + extra));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
    this.dataView = viewOf(grown);
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  varint(value: number): void {
    while (value > 0x7f) {
      this.byte((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    this.byte(value);
  }

  /** An integer as PLAIN INT64 (little-endian two's complement): a safe integer split into 32-bit words, a bigint (within int64) as it is. */
  int64(value: number | bigint): void {
    this.reserve(8);
    writeInt64(this.buffer, value, this.length);
    this.length += 8;
  }

  /** A string as PLAIN BYTE_ARRAY: its UTF-8 length (4 bytes, little-endian), then its UTF-8. */
  byteArray(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.reserve(4 + text.length * 3);
    const written = utf8Write.call(this.buffer, text, this.length + 4);
    this.buffer.writeUInt32LE(written, this.length);
    this.length += 4 + written;
  }

  double(value: number): void {
    this.reserve(8);
    this.buffer.writeDoubleLE(value, this.length);
    this.length += 8;
  }

  /** A 32-bit length or count, little-endian. */
  int32(value: number): void {
    this.reserve(4);
    this.dataView.setUint32(this.length, value, true);
    this.length += 4;
  }

  /**
   * Copies `source[start, end)` in. Below `NATIVE_COPY` bytes it is copied here, four bytes a step
   * when the caller gives a DataView of `source`: Buffer's own copy makes a view per call, which
   * cost more than a short value's bytes.
   */
  copy(source: Uint8Array, start: number, end: number, sourceView?: DataView): void {
    const count = end - start;
    this.reserve(count);
    const at = this.length;
    this.length += count;
    if (count >= NATIVE_COPY) {
      if (Buffer.isBuffer(source)) source.copy(this.buffer, at, start, end);
      else this.buffer.set(source.subarray(start, end), at);
      return;
    }
    let i = start;
    let to = at;
    if (sourceView !== undefined) {
      const view = this.dataView;
      for (; i + 4 <= end; i += 4, to += 4) view.setInt32(to, sourceView.getInt32(i, true), true);
    }
    const buffer = this.buffer;
    for (; i < end; i++) buffer[to++] = source[i];
  }

  /** The bytes written so far (a view, valid until the next write). */
  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** A DataView of exactly `bytes`. */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function writeInt64(buffer: Buffer, value: number | bigint, offset: number): void {
  if (typeof value === 'bigint') {
    buffer.writeBigInt64LE(value, offset);
    return;
  }
  const high = Math.floor(value / TWO_32);
  buffer.writeUInt32LE(value - high * TWO_32, offset);
  buffer.writeInt32LE(high, offset + 4);
}

/** Bits needed for the values 0 … `max`; at least 1, since not every reader takes a width of 0. */
export function bitWidth(max: number): number {
  return max <= 1 ? 1 : 32 - Math.clz32(max);
}

/** The shortest run of one repeated value worth an RLE run rather than bit-packing. */
const MIN_REPEAT = 8;

/**
 * `count` values of `values` (each below 2^`width`, `width` ≤ 24) in the RLE/bit-packed hybrid,
 * appended to `out`: a repeated run of at least 8 becomes one RLE run, everything else bit-packed
 * runs of whole groups of 8 (the last group padded with zeros, which the page's value count hides).
 */
export function writeHybrid(out: Bytes, values: ArrayLike<number>, count: number, width: number): void {
  let literalStart = 0;
  let i = 0;
  while (i < count) {
    const value = values[i];
    let end = i + 1;
    while (end < count && values[end] === value) end++;
    if (end - i >= MIN_REPEAT) {
      // Bit-packed runs hold whole groups of 8: borrow from the repeat to round the literals up.
      const pad = (MIN_REPEAT - ((i - literalStart) % MIN_REPEAT)) % MIN_REPEAT;
      if (end - i - pad >= MIN_REPEAT) {
        if (i + pad > literalStart) writeBitPacked(out, values, literalStart, i + pad, width);
        out.varint((end - i - pad) * 2);
        for (let shift = 0; shift < width; shift += 8) out.byte((value >>> shift) & 0xff);
        literalStart = end;
      }
    }
    i = end;
  }
  if (literalStart < count) writeBitPacked(out, values, literalStart, count, width);
}

function writeBitPacked(out: Bytes, values: ArrayLike<number>, start: number, end: number, width: number): void {
  const groups = Math.ceil((end - start) / MIN_REPEAT);
  out.varint(groups * 2 + 1);
  packBits(out, values, start, end, groups * MIN_REPEAT, width, 0);
}

/** What parquet-mr and Arrow write: blocks of 128 deltas, each in 4 bit-packed miniblocks of 32. */
const DELTA_BLOCK = 128;
const MINIBLOCK = 32;
/** Values within ±2^51 keep every delta and zigzag below 2^53, where doubles are exact. */
export const MAX_DELTA_VALUE = 2 ** 51;

/**
 * `count` integers of `values` (each within ±`MAX_DELTA_VALUE`) in DELTA_BINARY_PACKED: the first
 * value, then each block's least delta and every delta's excess over it in as few bits as its
 * miniblock needs. Timestamps and counters shrink to the bits their changes take.
 */
export function writeDeltaBinaryPacked(out: Bytes, values: Float64Array, count: number): void {
  out.varint(DELTA_BLOCK);
  out.varint(DELTA_BLOCK / MINIBLOCK);
  out.varint(count);
  writeZigzag(out, count > 0 ? values[0] : 0);
  const deltas = new Float64Array(DELTA_BLOCK);
  for (let start = 1; start < count; start += DELTA_BLOCK) {
    const n = Math.min(DELTA_BLOCK, count - start);
    let min = Infinity;
    for (let i = 0; i < n; i++) {
      deltas[i] = values[start + i] - values[start + i - 1];
      if (deltas[i] < min) min = deltas[i];
    }
    writeZigzag(out, min);
    const widths: number[] = [];
    for (let m = 0; m < DELTA_BLOCK; m += MINIBLOCK) {
      let max = 0;
      for (let i = m; i < Math.min(m + MINIBLOCK, n); i++) max = Math.max(max, deltas[i] - min);
      let width = 0;
      while (2 ** width <= max) width++;
      widths.push(m < n ? width : 0);
    }
    for (const width of widths) out.byte(width);
    widths.forEach((width, m) => {
      if (width > 0) packBits(out, deltas, m * MINIBLOCK, Math.min(m * MINIBLOCK + MINIBLOCK, n), MINIBLOCK, width, min);
    });
  }
}

/** A signed integer (|value| < 2^52) as a zigzag ULEB128 varint, without 32-bit bitwise operations. */
export function writeZigzag(out: Bytes, value: number): void {
  let rest = value >= 0 ? value * 2 : -value * 2 - 1;
  while (rest >= 0x80) {
    out.byte((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.byte(rest);
}

/**
 * `values[start, end) - base`, padded with zeros to `slots` values, each in `width` bits (up to 53),
 * LSB first. A value wider than 24 bits is fed in pieces of at most 24, so the pending bits always
 * fit a 32-bit int.
 */
function packBits(out: Bytes, values: ArrayLike<number>, start: number, end: number, slots: number, width: number, base: number): void {
  out.reserve((slots * width) / 8);
  const buffer = out.buffer;
  let at = out.length;
  let pending = 0;
  let bits = 0;
  for (let i = start; i < start + slots; i++) {
    let value = i < end ? values[i] - base : 0;
    for (let rest = width; rest > 0; ) {
      const take = rest < 24 ? rest : 24;
      let low = value;
      if (rest > 24) {
        low = value % 0x1000000;
        value = (value - low) / 0x1000000;
      }
      pending |= low << bits;
      bits += take;
      rest -= take;
      while (bits >= 8) {
        buffer[at++] = pending & 0xff;
        pending >>>= 8;
        bits -= 8;
      }
    }
  }
  out.length = at;
}
