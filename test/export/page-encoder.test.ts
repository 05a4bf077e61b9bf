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
    const large = Array.from({ length: 500 }, (_, index) => ({ id: `p${index}`, text: '✓'.repeat(index), nested: { n: index, list: [index, null, true] } }));
    for (const page of [small, large, small, large]) {
      const { bytes, repaired, scrubbed } = encoder.encode(page, scrub);
      expect(lines(Buffer.from(bytes))).toEqual(page);
      expect(bytes.at(-1)).toBe(0x0a);
      expect(bytes.toString('utf8').split('\n')).toHaveLength(page.length + 1);
      expect({ repaired, scrubbed }).toEqual({ repaired: 0, scrubbed: false });
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
    const { bytes, repaired } = new PageEncoder().encode([{ id: 'a', text: 'broken \ud83d here' }, { id: 'b' }], scrub);
    expect(repaired).toBe(1);
    expect(lines(bytes)).toEqual([{ id: 'a', text: 'broken \ufffd here' }, { id: 'b' }]);
  });

  it('refuses a record JSON cannot hold, naming what it was', () => {
    expect(() => new PageEncoder().encode([{ id: 'a' }, undefined], scrub)).toThrow(/a record must be a JSON value, got undefined/);
  });
});
