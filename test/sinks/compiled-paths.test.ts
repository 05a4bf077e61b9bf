/**
 * The Parquet layouts' compiled fast paths (`sinks/compiled-code.ts`) against their walks: a feed
 * of records of one shape that drift now and then (a value of another kind, a key more or less, a
 * `Date`, a bigint, a lone surrogate, a `toJSON`, a hole in a list) is written with the fast path
 * taking every record it can (`fastPaths.makeAfter = 1`) and with the walk alone; the two files must
 * be the same bytes, with the same repairs counted. The feed is also shredded by the layouts
 * themselves, to show the fast path took most records and refused some (both branches ran).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toParquet } from '../../sinks/index.ts';
import { fastPaths } from '../../sinks/fast-path.ts';
import { RowGroupCells } from '../../sinks/parquet-cells.ts';
import { NestedLayout, PARQUET_TYPE } from '../../sinks/parquet-nested.ts';
import { RowLayout } from '../../sinks/rows.ts';
import { Repairs } from '../../sinks/strings.ts';
import { stringifyExact } from '../../src/exact-json.ts';
import { driftingFeed as feed } from './helpers/drifting-feed.ts';
import { scratchDir } from './helpers/files.ts';

const dir = scratchDir();
const MAKE_AFTER = fastPaths.makeAfter;
afterEach(() => {
  fastPaths.makeAfter = MAKE_AFTER;
});

async function written(records: unknown[], name: string, options: { layout: 'nested' | 'flat'; sampleSize: number }, makeAfter: number) {
  fastPaths.makeAfter = makeAfter;
  const path = join(dir, name);
  const result = await toParquet(records, path, { ...options, encoder: 'thread', rowGroupSize: 700 });
  return { bytes: readFileSync(path), repaired: result.repaired, records: result.records };
}

describe('the compiled fast paths write what the walks write', () => {
  for (const layout of ['nested', 'flat'] as const) {
    for (const [seed, sampleSize, oddOneIn] of [
      [1, 1000, 20],
      [2, 30, 20],
      [3, 30, 4],
      [4, 200, 60],
      [22, 100, 8],
    ] as const) {
      it(`${layout}, seed ${seed}: a sample of ${sampleSize}, one record in ${oddOneIn} drifting`, async () => {
        const records = feed(seed, 3_000, oddOneIn);
        const walk = await written(records, `walk-${layout}-${seed}.parquet`, { layout, sampleSize }, Infinity);
        const fast = await written(records, `fast-${layout}-${seed}.parquet`, { layout, sampleSize }, 1);
        expect(fast.records).toBe(3_000);
        expect(fast.repaired).toBe(walk.repaired);
        expect(fast.bytes.equals(walk.bytes)).toBe(true);
      });
    }
  }

  it('takes most records of the feed and refuses the odd ones, in both layouts', () => {
    fastPaths.makeAfter = 1;
    const records = feed(5, 3_000, 30);
    const sample = records.slice(0, 1000);
    const nested = NestedLayout.plan(sample, {}, new Repairs());
    const kinds = nested.columns.map(({ kind, maxRepetition }) => ({ ...PARQUET_TYPE[kind], repeated: maxRepetition > 0 }));
    const cells = new RowGroupCells(kinds, 10_000);
    for (const record of records) nested.shred(record, cells, new Repairs());
    const flat = RowLayout.plan(sample, {}, true);
    for (const record of records) flat.toRow(record);
    for (const taken of [nested.fastPath.taken, flat.fastPath.taken]) {
      expect(taken).toBeGreaterThan(2_500);
      expect(taken).toBeLessThan(3_000);
    }
  });

  it('leaves every record to the walk where code cannot be made from text, and writes the same file', async () => {
    const records = feed(6, 1_500, 20);
    const input = join(dir, 'feed.ndjson');
    writeFileSync(input, records.map((record) => stringifyExact(record)).join('\n') + '\n');
    const sinks = new URL('../../sinks/index.ts', import.meta.url).pathname;
    for (const layout of ['nested', 'flat'] as const) {
      const refused = join(dir, `refused-${layout}.parquet`);
      const script = `import { toParquet, fromNdjson } from ${JSON.stringify(sinks)};
        await toParquet(fromNdjson(${JSON.stringify(input)}), ${JSON.stringify(refused)}, { layout: ${JSON.stringify(layout)}, sampleSize: 50, encoder: 'thread' });
        try { new Function('return 1'); console.log('made'); } catch (error) { console.log(error.name); }`;
      const said = execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(said.trim()).toBe('EvalError');
      fastPaths.makeAfter = 1;
      const path = join(dir, `made-${layout}.parquet`);
      const { fromNdjson } = await import('../../sinks/index.ts');
      await toParquet(fromNdjson(input), path, { layout, sampleSize: 50, encoder: 'thread' });
      expect(readFileSync(refused).equals(readFileSync(path))).toBe(true);
    }
  });
});
