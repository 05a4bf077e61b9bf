import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { maxCompressedLength, snappyCompress } from '../../sinks/parquet-snappy.ts';
import { TextDictionary } from '../../sinks/parquet-dictionary.ts';

/** Compresses `input` with ours and reads it back with snappyjs's decompressor, an independent implementation. */
function roundTrip(input: Buffer): { back: Buffer; compressed: number } {
  const out = Buffer.alloc(maxCompressedLength(input.length) + 8);
  // Written from an offset, as a row group's pages share one buffer.
  const end = snappyCompress(input, 0, input.length, out, 5);
  const back = Buffer.from(snappy.uncompress(new Uint8Array(out.buffer, out.byteOffset + 5, end - 5)));
  return { back, compressed: end - 5 };
}

/** Deterministic bytes: a small linear congruential generator. */
function noise(length: number, seed = 1): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

describe('snappy compression of Parquet pages', () => {
  const cases: Array<[string, Buffer]> = [
    ['an empty page', Buffer.alloc(0)],
    ['a page shorter than the input margin', Buffer.from('short page')],
    ['incompressible bytes across several 64 KiB blocks', noise(200_000)],
    ['one byte repeated (copies longer than 64)', Buffer.alloc(300_000, 7)],
    ['text with repeats near and far', Buffer.from(Array.from({ length: 20_000 }, (_, i) => `row ${i % 977} of "${'ab'.repeat(i % 40)}"\n`).join(''))],
    ['long literals between repeats', Buffer.concat(Array.from({ length: 40 }, (_, i) => Buffer.concat([noise(300 + i * 50, i + 2), Buffer.from('repeated tail '.repeat(8))])))],
    ['UTF-8 text', Buffer.from('café 東京タワー emoji 🎉🚀 '.repeat(5_000))],
  ];
  for (const [what, input] of cases) {
    it(`gives back ${what} exactly through another snappy reader`, () => {
      const { back, compressed } = roundTrip(input);
      expect(back.equals(input)).toBe(true);
      expect(compressed).toBeLessThanOrEqual(maxCompressedLength(input.length));
    });
  }

  it('compresses repetitive text to a fraction of its size', () => {
    const input = Buffer.from('https://forum.example/r/typescript/comments/abc/\n'.repeat(10_000));
    expect(roundTrip(input).compressed).toBeLessThan(input.length / 10);
  });
});

describe("a text column's dictionary", () => {
  it('gives each distinct byte string one index, in order of first appearance, through many rehashes', () => {
    const values = Array.from({ length: 5_000 }, (_, i) => `value ${i % 1_500}${'x'.repeat(i % 7)}`);
    const text = Buffer.from(values.join(''));
    const view = new DataView(text.buffer, text.byteOffset, text.byteLength);
    const dictionary = new TextDictionary();
    const firstIndex = new Map<string, number>();
    let start = 0;
    for (const value of values) {
      const end = start + Buffer.byteLength(value);
      const index = dictionary.indexOf(text, view, start, end);
      if (!firstIndex.has(value)) firstIndex.set(value, firstIndex.size);
      expect(index).toBe(firstIndex.get(value));
      start = end;
    }
    expect(dictionary.size).toBe(firstIndex.size);
    const page = dictionary.page.view();
    const entries = [...firstIndex.keys()];
    entries.forEach((value, index) => {
      const at = dictionary.startOf(index);
      expect(page.readUInt32LE(at - 4)).toBe(dictionary.lengthOf(index));
      expect(page.toString('utf8', at, at + dictionary.lengthOf(index))).toBe(value);
    });
  });

  it('tells apart values that differ only in length or in one byte, and knows the empty value', () => {
    const text = Buffer.from('abcabdab');
    const view = new DataView(text.buffer, text.byteOffset, text.byteLength);
    const dictionary = new TextDictionary();
    expect(dictionary.indexOf(text, view, 0, 3)).toBe(0); // abc
    expect(dictionary.indexOf(text, view, 3, 6)).toBe(1); // abd
    expect(dictionary.indexOf(text, view, 6, 8)).toBe(2); // ab
    expect(dictionary.indexOf(text, view, 0, 0)).toBe(3); // ''
    expect(dictionary.indexOf(text, view, 3, 3)).toBe(3);
    expect(dictionary.indexOf(text, view, 0, 2)).toBe(2);
  });
});
