/**
 * A text column's dictionary, keyed by the values' UTF-8 bytes (`CellColumn.text`), so the encoder
 * never makes a string of a value: a hash of the bytes finds its slot (open addressing over a
 * power-of-two table), and the bytes are compared only when the hashes agree. The entries are
 * kept as the dictionary page holds them (each PLAIN: a 4-byte length, then the bytes).
 */
import { Bytes } from './parquet-encoding.ts';

export class TextDictionary {
  /** The dictionary page's bytes. */
  readonly page = new Bytes();
  /** How many distinct values it holds. */
  size = 0;
  /** Where each entry's bytes start in `page` (after its length), and their length. */
  private starts = new Uint32Array(256);
  private lengths = new Uint32Array(256);
  private hashes = new Int32Array(256);
  /** Entry index + 1 by slot; 0 is an empty slot. */
  private slots = new Int32Array(1024);

  /** The index of the value `text[start, end)` (`view` is a DataView of `text`), added as the last entry when it is new. */
  indexOf(text: Uint8Array, view: DataView, start: number, end: number): number {
    const hash = hashBytes(view, text, start, end);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (let entry = this.slots[slot]; entry !== 0; entry = this.slots[slot]) {
      const index = entry - 1;
      if (this.hashes[index] === hash && this.holds(index, text, view, start, end)) return index;
      slot = (slot + 1) & mask;
    }
    return this.add(slot, hash, text, start, end);
  }

  /** Where entry `index`'s bytes lie in `page`. */
  startOf(index: number): number {
    return this.starts[index];
  }

  lengthOf(index: number): number {
    return this.lengths[index];
  }

  /** Whether entry `index` is `text[start, end)`: compared four bytes at a time, then byte by byte. */
  private holds(index: number, text: Uint8Array, view: DataView, start: number, end: number): boolean {
    if (this.lengths[index] !== end - start) return false;
    const bytes = this.page.buffer;
    const page = this.page.dataView;
    const from = this.starts[index] - start;
    let i = start;
    for (; i + 4 <= end; i += 4) if (page.getInt32(from + i, true) !== view.getInt32(i, true)) return false;
    for (; i < end; i++) if (bytes[from + i] !== text[i]) return false;
    return true;
  }

  private add(slot: number, hash: number, text: Uint8Array, start: number, end: number): number {
    const index = this.size++;
    if (index === this.starts.length) {
      this.starts = grown(this.starts, new Uint32Array(index * 2));
      this.lengths = grown(this.lengths, new Uint32Array(index * 2));
      this.hashes = grown(this.hashes, new Int32Array(index * 2));
    }
    this.page.int32(end - start);
    this.starts[index] = this.page.length;
    this.lengths[index] = end - start;
    this.hashes[index] = hash;
    this.page.copy(text, start, end);
    this.slots[slot] = index + 1;
    // At most half full, so a probe ends soon on an empty slot.
    if (this.size * 2 > this.slots.length) this.rehash();
    return index;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let index = 0; index < this.size; index++) {
      let slot = this.hashes[index] & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = index + 1;
    }
    this.slots = slots;
  }
}

/** MurmurHash3 (32-bit) of the bytes, four at a time, seeded with their length. */
function hashBytes(view: DataView, text: Uint8Array, start: number, end: number): number {
  let hash = end - start;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    hash ^= scramble(view.getInt32(i, true));
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
  }
  let tail = 0;
  for (let shift = 0; i < end; i++, shift += 8) tail |= text[i] << shift;
  hash ^= scramble(tail);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

function scramble(word: number): number {
  const k = Math.imul(word, 0xcc9e2d51);
  return Math.imul((k << 15) | (k >>> 17), 0x1b873593);
}

function grown<T extends Uint32Array | Int32Array>(old: T, room: T): T {
  room.set(old);
  return room;
}
