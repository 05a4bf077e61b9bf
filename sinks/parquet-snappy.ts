/**
 * Snappy compression (the raw format Parquet pages use: a varint length, then literals and copies
 * in blocks of 64 KiB), written for V8. snappyjs, which it replaces for writing, hashed each
 * 4-byte window with a float multiply (`key * 0x1e35a7bd` past 2^53, then `>>>`), cleared its
 * table one entry at a time and copied literals a byte at a time: its compressor was the largest
 * single cost of the Parquet sink (a sixth of its time on sandbox posts). Here the hash is
 * `Math.imul`, long literals are one `copy`, and the output goes into a buffer the caller gives,
 * so a row group's pages share one. The format is snappy's own; any snappy reader reads it.
 */

/** Snappy compresses 64 KiB blocks independently: copies never reach into an earlier block. */
const BLOCK_SIZE = 1 << 16;
const MAX_HASH_BITS = 14;
/** Below this many bytes left in a block, the rest is one literal (snappy's `kInputMarginBytes`). */
const INPUT_MARGIN = 15;
/** Literals at least this long are copied with `Buffer#copy`. */
const LONG_LITERAL = 512;

/** Positions (from the block start) of recent 4-byte windows, by hash; one per thread, cleared per block. */
const table = new Uint16Array(1 << MAX_HASH_BITS);

/** The most bytes `snappyCompress` writes for `length` input bytes (snappy's `MaxCompressedLength`). */
export function maxCompressedLength(length: number): number {
  return 32 + length + Math.floor(length / 6);
}

/**
 * Compresses `input[start, end)` into `output` from `at` (which must have room for
 * `maxCompressedLength(end - start)` bytes), returning where the compressed bytes end.
 */
export function snappyCompress(input: Buffer, start: number, end: number, output: Buffer, at: number): number {
  let length = end - start;
  while (length > 0x7f) {
    output[at++] = (length & 0x7f) | 0x80;
    length >>>= 7;
  }
  output[at++] = length;
  const inputView = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const outputView = new DataView(output.buffer, output.byteOffset, output.byteLength);
  for (let block = start; block < end; block += BLOCK_SIZE) {
    at = compressBlock(input, inputView, block, Math.min(block + BLOCK_SIZE, end), output, outputView, at);
  }
  return at;
}

/** How many bytes from `a` on equal those from `b` on (`b` < `a`), up to `end`: four at a time while four remain. */
function matchLength(view: DataView, input: Buffer, a: number, b: number, end: number): number {
  const from = a;
  while (a + 4 <= end && view.getInt32(a, true) === view.getInt32(b, true)) {
    a += 4;
    b += 4;
  }
  while (a < end && input[a] === input[b]) {
    a++;
    b++;
  }
  return a - from;
}

function compressBlock(input: Buffer, view: DataView, start: number, end: number, output: Buffer, outputView: DataView, at: number): number {
  const size = end - start;
  let bits = 8;
  while (bits < MAX_HASH_BITS && 1 << bits < size) bits++;
  const shift = 32 - bits;
  table.fill(0, 0, 1 << bits);
  let nextEmit = start;
  if (size >= INPUT_MARGIN) {
    const limit = end - INPUT_MARGIN;
    let ip = start + 1;
    let nextHash = Math.imul(view.getInt32(ip, true), 0x1e35a7bd) >>> shift;
    outer: for (;;) {
      // Look for a 4-byte match, stepping further apart the longer none is found (snappy's skip).
      let skip = 32;
      let next = ip;
      let candidate: number;
      let current: number;
      do {
        ip = next;
        const hash = nextHash;
        next = ip + (skip++ >>> 5);
        if (next > limit) break outer;
        current = view.getInt32(ip, true);
        nextHash = Math.imul(view.getInt32(next, true), 0x1e35a7bd) >>> shift;
        candidate = start + table[hash];
        table[hash] = ip - start;
      } while (current !== view.getInt32(candidate, true));
      at = emitLiteral(input, view, nextEmit, ip, output, outputView, at);
      // Emit copies while the bytes after each one match again at once.
      for (;;) {
        const base = ip;
        const matched = 4 + matchLength(view, input, ip + 4, candidate + 4, end);
        ip += matched;
        at = emitCopy(output, at, base - candidate, matched);
        nextEmit = ip;
        if (ip >= limit) break outer;
        table[Math.imul(view.getInt32(ip - 1, true), 0x1e35a7bd) >>> shift] = ip - 1 - start;
        const hash = Math.imul(view.getInt32(ip, true), 0x1e35a7bd) >>> shift;
        candidate = start + table[hash];
        table[hash] = ip - start;
        if (view.getInt32(ip, true) !== view.getInt32(candidate, true)) break;
      }
      ip++;
      nextHash = Math.imul(view.getInt32(ip, true), 0x1e35a7bd) >>> shift;
    }
  }
  return nextEmit < end ? emitLiteral(input, view, nextEmit, end, output, outputView, at) : at;
}

function emitLiteral(input: Buffer, inputView: DataView, from: number, to: number, output: Buffer, outputView: DataView, at: number): number {
  const n = to - from - 1;
  if (n < 0) return at;
  if (n < 60) output[at++] = n << 2;
  else if (n < 0x100) {
    output[at++] = 60 << 2;
    output[at++] = n;
  } else {
    // A literal lies within one 64 KiB block, so two length bytes always suffice.
    output[at++] = 61 << 2;
    output[at++] = n & 0xff;
    output[at++] = n >>> 8;
  }
  if (n + 1 >= LONG_LITERAL) return at + input.copy(output, at, from, to);
  // Four bytes a step: `Buffer#copy` makes a view per call, which costs more than a short literal.
  let i = from;
  for (; i + 4 <= to; i += 4, at += 4) outputView.setInt32(at, inputView.getInt32(i, true), true);
  for (; i < to; i++) output[at++] = input[i];
  return at;
}

function emitCopy(output: Buffer, at: number, offset: number, length: number): number {
  while (length >= 68) {
    at = emitCopyUpTo64(output, at, offset, 64);
    length -= 64;
  }
  if (length > 64) {
    at = emitCopyUpTo64(output, at, offset, 60);
    length -= 60;
  }
  return emitCopyUpTo64(output, at, offset, length);
}

function emitCopyUpTo64(output: Buffer, at: number, offset: number, length: number): number {
  if (length < 12 && offset < 2048) {
    output[at] = 1 | ((length - 4) << 2) | ((offset >>> 8) << 5);
    output[at + 1] = offset & 0xff;
    return at + 2;
  }
  output[at] = 2 | ((length - 1) << 2);
  output[at + 1] = offset & 0xff;
  output[at + 2] = offset >>> 8;
  return at + 3;
}
