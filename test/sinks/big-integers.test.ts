/**
 * `bigint` values in records (docs/guide/big-integers.md), written by each sink and read back by readers
 * that are not ours: DuckDB for Parquet and NDJSON, python3's csv module for CSV.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromNdjson, toCsv, toNdjson, toParquet } from '../../sinks/index.ts';
import { stopEncoderWorker } from '../../sinks/parquet-encoder.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';
import { pythonCsvRows } from './helpers/read-back.ts';

const dir = scratchDir();
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** Ids past 2^53 and within int64, some repeated (a dictionary), with the int64 bounds among them. */
function videos(count: number): Array<{ n: number; id: bigint }> {
  return Array.from({ length: count }, (_, i) => ({
    n: i,
    id: i === 0 ? INT64_MAX : i === 1 ? INT64_MIN : 7_471_256_031_625_273_857n + BigInt(i % 700) * 1_000_003n,
  }));
}

async function exactRows(path: string): Promise<Array<{ n: number; id: string; type: string }>> {
  const rows = await query(`SELECT n, CAST(id AS VARCHAR) AS id, typeof(id) AS type FROM read_parquet(${sqlPath(path)}) ORDER BY n`);
  return rows as Array<{ n: number; id: string; type: string }>;
}

// Both layouts write a `bigint` column (a nested leaf, or a flat column) as exact INT64.
describe.each(['nested', 'flat'] as const)('toParquet with bigints, %s layout', (layout) => {
  it.each(['thread', 'worker'] as const)('writes an exact BIGINT column on the %s encoder', async (encoder) => {
    // A first group of 10,000 rows × 3 columns is large enough for the worker; the last 2,000 are not.
    const records = videos(12_000);
    const path = join(dir, `exact-${encoder}-${layout}.parquet`);
    await toParquet(records, path, { rowGroupSize: 10_000, encoder, layout });
    const rows = await exactRows(path);
    expect(rows.map((row) => row.type)).toEqual(records.map(() => 'BIGINT'));
    expect(rows.map((row) => row.id)).toEqual(records.map((record) => String(record.id)));
    expect(await stopEncoderWorker()).toBe(encoder === 'worker');
  });

  it('keeps safe integers and bigints in one exact column, and its statistics let DuckDB find the bounds', async () => {
    const records: Array<{ n: number; id: bigint | number }> = [...videos(50), { n: 50, id: 12 }, { n: 51, id: -3 }];
    const path = join(dir, `mixed-${layout}.parquet`);
    await toParquet(records, path, { layout });
    expect((await exactRows(path)).map((row) => row.id)).toEqual(records.map((record) => String(record.id)));
    const [{ low, high }] = await query(`SELECT min(id)::VARCHAR AS low, max(id)::VARCHAR AS high FROM read_parquet(${sqlPath(path)})`);
    expect([low, high]).toEqual([String(INT64_MIN), String(INT64_MAX)]);
    const found = await query(`SELECT n FROM read_parquet(${sqlPath(path)}) WHERE id = ${INT64_MAX}`);
    expect(found).toEqual([{ n: 0 }]);
  });

  it('writes a later row group of small integers exactly in a column the sample made exact', async () => {
    const records: Array<{ n: number; id: bigint | number }> = [...videos(100), ...Array.from({ length: 300 }, (_, i) => ({ n: 100 + i, id: i * 7 - 500 }))];
    const path = join(dir, `small-later-${layout}.parquet`);
    await toParquet(records, path, { rowGroupSize: 100, sampleSize: 100, layout });
    expect((await exactRows(path)).map((row) => row.id)).toEqual(records.map((record) => String(record.id)));
  });

  it('writes safe integers at the 32-bit and 2^53 boundaries exactly beside bigints', async () => {
    const edges = [0, -0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1, 2 ** 32, -(2 ** 32), 2 ** 32 + 1, -(2 ** 32) - 1, 1_745_658_440_123, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    const records: Array<{ n: number; id: bigint | number }> = [...videos(20), ...edges.map((id, i) => ({ n: 20 + i, id }))];
    const path = join(dir, `edges-${layout}.parquet`);
    await toParquet(records, path, { layout });
    expect((await exactRows(path)).map((row) => row.id)).toEqual(records.map((record) => String(record.id)));
  });

  it('writes integers beyond int64 as their digits, in JSON text (the documented fallback)', async () => {
    const records = [{ n: 0, id: 2n ** 64n }, { n: 1, id: -(2n ** 70n) }, { n: 2, id: INT64_MAX + 1n }];
    const path = join(dir, `beyond-${layout}.parquet`);
    await toParquet(records, path, { layout });
    const rows = await exactRows(path);
    expect(rows.map((row) => row.type)).toEqual(['VARCHAR', 'VARCHAR', 'VARCHAR']);
    expect(rows.map((row) => row.id)).toEqual(records.map((record) => String(record.id)));
  });

  it('puts a bigint that meets a DOUBLE column into _extra with its digits, never rounded', async () => {
    const records = [{ n: 0, score: 1.5 }, { n: 1, score: 2.5 }, { n: 2, score: 7_471_256_031_625_273_857n }];
    const path = join(dir, `double-column-${layout}.parquet`);
    await toParquet(records, path, { layout });
    const rows = await query(`SELECT n, score, _extra FROM read_parquet(${sqlPath(path)}) ORDER BY n`);
    expect(rows[2]).toEqual({ n: 2, score: null, _extra: '{"score":7471256031625273857}' });
  });
});

describe('NDJSON and CSV with bigints', () => {
  const records = videos(20).map((record) => ({ ...record, beyond: 2n ** 64n + BigInt(record.n), nested: { list: [record.id] } }));

  it('writes NDJSON with the digits, which fromNdjson reads back as the same bigints', async () => {
    const path = join(dir, 'exact.ndjson');
    await toNdjson(records, path);
    expect(readFileSync(path, 'utf8').split('\n')[2]).toBe(`{"n":2,"id":${String(records[2].id)},"beyond":${2n ** 64n + 2n},"nested":{"list":[${String(records[2].id)}]}}`);
    const back: unknown[] = [];
    for await (const record of fromNdjson(path)) back.push(record);
    expect(back).toEqual(records);
  });

  it('writes NDJSON DuckDB reads as exact integers', async () => {
    const path = join(dir, 'duckdb.ndjson');
    await toNdjson(records, path);
    const rows = await query(`SELECT n, CAST(id AS VARCHAR) AS id FROM read_json(${sqlPath(path)}, columns = {n: 'BIGINT', id: 'BIGINT'}) ORDER BY n`);
    expect(rows.map((row) => row.id)).toEqual(records.map((record) => String(record.id)));
  });

  it('writes CSV with the digits, in cells and in JSON text, as python3 csv reads them', async () => {
    const path = join(dir, 'exact.csv');
    await toCsv(records, path);
    const rows = pythonCsvRows(path);
    expect(rows.map((row) => row.id)).toEqual(records.map((record) => String(record.id)));
    expect(rows.map((row) => row.beyond)).toEqual(records.map((record) => String(record.beyond)));
    expect(rows.map((row) => row['nested.list'])).toEqual(records.map((record) => `[${String(record.id)}]`));
  });
});
