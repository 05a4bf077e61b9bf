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
    for await (const record of readPart(path, 'parquet')) back.push(record);
    expect(back).toEqual([{ n: big }, { n: 7 }]);
  });
});
