import { describe, expect, it } from 'vitest';
import { PageEncoder } from '../../src/export/page-encoder.ts';
import { keyScrubber } from '../../src/scrub.ts';

const KEY = 'sk_live_page_encoder_0123456789';
const scrub = keyScrubber(KEY);
const lines = (bytes: Buffer): unknown[] =>
  bytes
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);

describe('PageEncoder', () => {
  it('writes each record as one NDJSON line, in UTF-8, across pages of every size in one reused buffer', () => {
    const encoder = new PageEncoder();
    const small = [{ id: 'a', text: 'héllo 👋 世界' }];
    // Past the size of buffer kept for the next page: the next page starts on a new one.
    const huge = [{ id: 'h', text: 'x'.repeat(3 << 20) }, { id: 'i', text: '✓'.repeat(1 << 20) }];
    const large = Array.from({ length: 500 }, (_, index) => ({ id: `p${index}`, text: '✓'.repeat(index), nested: { n: index, list: [index, null, true] } }));
    for (const page of [small, large, huge, small, large]) {
      const { bytes, repaired, scrubbed } = encoder.encode(page, scrub);
      expect(lines(Buffer.from(bytes))).toEqual(page);
      expect(bytes.at(-1)).toBe(0x0a);
      expect(bytes.toString('utf8').split('\n')).toHaveLength(page.length + 1);
      expect({ repaired, scrubbed }).toEqual({ repaired: 0, scrubbed: false });
    }
  });

  it('writes records of every kind exactly as JSON.stringify writes them, a line each', () => {
    class Post {
      constructor(readonly id: string) {}
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { id: 'bare' });
    const pages: unknown[][] = [
      [{ id: 'one' }],
      [{ id: 'a' }, {}, { id: 'b' }, {}],
      [{ id: 'a', text: 'a },{ b' }, { id: 'b' }],
      [{ id: 'a', media: [{ n: 1 }, { n: 2 }] }, { id: 'b', media: [] }],
      [{ id: 'a', at: new Date(0) }, bare, { id: 'c', nested: { deeper: { list: [{}, {}] } } }],
      [new Post('p'), { id: 'x' }],
      [{ id: 'a' }, { toJSON: () => 'custom' }],
      [{ id: 'a' }, Object('boxed'), 'text', 7, null, [1, { a: '},{' }]],
      [{ id: '\u00e9', quote: '"},{"', newline: 'a\nb' }, { id: 'é' }],
    ];
    const encoder = new PageEncoder();
    for (const page of pages) {
      const { bytes } = encoder.encode(page, scrub);
      expect(bytes.toString('utf8')).toBe(page.map((record) => JSON.stringify(record)).join('\n') + '\n');
    }
  });

  it('takes the key out of every line it is in, and says so', () => {
    const encoder = new PageEncoder();
    const page = [{ id: 'a', title: `key ${KEY}` }, { id: 'b' }, { id: 'c', hex: Buffer.from(KEY).toString('hex').toUpperCase() }];
    const { bytes, scrubbed } = encoder.encode(page, scrub);
    const text = bytes.toString('utf8');
    expect(scrubbed).toBe(true);
    expect(text).not.toContain(KEY);
    expect(text.toLowerCase()).not.toContain(Buffer.from(KEY).toString('hex'));
    expect(lines(bytes)).toEqual([{ id: 'a', title: 'key [redacted]' }, { id: 'b' }, { id: 'c', hex: '[redacted]' }]);
  });

  it('writes a lone surrogate as U+FFFD and counts the string', () => {
    const { bytes, repaired } = new PageEncoder().encode([{ id: 'a', text: 'broken \ud83d here' }, { id: 'b', text: 'fine 😀' }], scrub);
    expect(repaired).toBe(1);
    expect(lines(bytes)).toEqual([{ id: 'a', text: 'broken \ufffd here' }, { id: 'b', text: 'fine 😀' }]);
  });

  it('scrubs the key from each line it is in, and leaves the others as they were', () => {
    const encoder = new PageEncoder();
    for (const extra of [{ id: 'plain' }, { id: 'split', text: '},{' }]) {
      const { bytes, scrubbed } = encoder.encode([{ id: 'a', note: KEY }, extra], scrub);
      expect(scrubbed).toBe(true);
      expect(lines(bytes)).toEqual([{ id: 'a', note: '[redacted]' }, extra]);
    }
  });

  it('refuses a record JSON cannot hold, naming what it was', () => {
    expect(() => new PageEncoder().encode([{ id: 'a' }, undefined], scrub)).toThrow(/a record must be a JSON value, got undefined/);
  });
});
