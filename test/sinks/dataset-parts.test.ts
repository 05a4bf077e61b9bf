/** A dataset's part files read back as a merge reads them (src/dataset/parts.ts). */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPart, writePart } from '../../src/dataset/parts.ts';
import { scratchDir } from './helpers/files.ts';

const dir = scratchDir();

describe('a Parquet part', () => {
  it('gives back integers beyond 2^53 with every digit, and safe ones as numbers', async () => {
    const path = join(dir, 'big.part');
    const big = 2n ** 60n + 1n;
    await writePart([{ n: big }, { n: 7 }], path, { format: 'parquet', columns: [{ name: 'n', kind: 'integer' }] });
    const back: unknown[] = [];
    for await (const record of readPart(path, 'parquet', new Set())) back.push(record);
    expect(back).toEqual([{ n: big }, { n: 7 }]);
  });
});

describe("a record's own fields named like a dataset's columns", () => {
  /** As admission stages it (`holdOwnFields`): its own `_fetched_at`, `_extra` and `_DATE` held in its field `_extra`, by path. */
  const staged = { id: 'a', _fetched_at: 'the stamp', _extra: { _fetched_at: 'mine', _extra: { n: 1 }, _DATE: '1999' } };
  const held = new Set(['_fetched_at', '_key', '_stand_in', '_extra', '_date']);
  const schema = (format: 'parquet' | 'csv', parquetLayout?: 'flat' | 'nested') => ({
    format,
    parquetLayout,
    columns: [
      { name: 'id', kind: 'string' as const },
      { name: '_fetched_at', kind: 'string' as const },
    ],
  });
  for (const [format, layout] of [['parquet', 'flat'], ['parquet', 'nested'], ['csv', undefined]] as const) {
    it(`come back from a ${format}${layout === undefined ? '' : ` ${layout}`} part exactly as they were staged, beside the dataset's column`, async () => {
      const path = join(dir, `held-${format}-${layout}.part`);
      await writePart([staged], path, schema(format, layout));
      const back: unknown[] = [];
      for await (const record of readPart(path, format, held)) back.push(record);
      expect(back).toEqual([staged]);
    });
  }
});
