/**
 * A Parquet file types from every record it holds (docs/types.md, "Files"): a value after the sample
 * that only a wider type holds widens its column when the file closes, in both layouts, through
 * `toParquet` and through the export engine's spool alike; a value no widening holds still goes to
 * `_extra` with its path. Each file is read back by DuckDB, Polars and arrow-rs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, describe, expect, it } from 'vitest';
import { toParquet, type ParquetLayout } from '../../sinks/index.ts';
import { queryJS, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { duckType, readThree } from './helpers/read-three.ts';
import { closeServed, recordsIntoFile } from './helpers/served-records.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}.parquet`);

afterAll(closeServed);

/** `records` as one Parquet file whose sample is only the first record. */
async function written(records: ReadonlyArray<Record<string, unknown>>, layout: ParquetLayout, options: { rowGroupSize?: number } = {}): Promise<string> {
  const path = fresh(layout);
  await toParquet(records, path, { sampleSize: 1, layout, ...options });
  return path;
}

/** Each reader's values of `column`, by id. */
async function valuesOf(path: string, column: string): Promise<unknown[][]> {
  return (await readThree(path, [column])).map((rows) => rows.map((row) => row[column]));
}

describe.each(['nested', 'flat'] as const)('a %s Parquet file', (layout) => {
  it('makes a column its sample typed BIGINT a DOUBLE when 0.81 comes after it, so avg() counts every value', async () => {
    const path = await written([{ id: 'a', upvote_ratio: 1 }, { id: 'b', upvote_ratio: 0.81 }], layout);
    expect(await duckType(path, 'upvote_ratio')).toBe('DOUBLE');
    for (const values of await valuesOf(path, 'upvote_ratio')) expect(values).toEqual([1, 0.81]);
    expect(await queryJS(`SELECT avg(upvote_ratio) AS average, count(_extra) AS spilled FROM ${sqlPath(path)}`)).toEqual([{ average: 0.905, spilled: 0n }]);
  });

  it('makes a column of number ids a VARCHAR of the digits when string ids come after the sample', async () => {
    const path = await written([{ id: 'a', ref: 17 }, { id: 'b', ref: 'r18' }], layout);
    expect(await duckType(path, 'ref')).toBe('VARCHAR');
    for (const values of await valuesOf(path, 'ref')) expect(values).toEqual(['17', 'r18']);
    expect(await queryJS(`SELECT id FROM ${sqlPath(path)} WHERE ref = '17'`)).toEqual([{ id: 'a' }]);
  });

  it('types a field its sample held only as null by the object that comes later, so author.avatar.url binds in DuckDB', async () => {
    const path = await written([{ id: 'a', author: { name: 'x', avatar: null } }, { id: 'b', author: { name: 'y', avatar: { url: 'https://x/b.png' } } }], layout);
    const url = layout === 'nested' ? 'author.avatar.url' : '"author.avatar.url"';
    expect(await queryJS(`SELECT ${url} AS url, _extra FROM ${sqlPath(path)} ORDER BY id`)).toEqual([
      { url: null, _extra: null },
      { url: 'https://x/b.png', _extra: null },
    ]);
    if (layout === 'nested') {
      expect(await duckType(path, 'author')).toBe('STRUCT("name" VARCHAR, avatar STRUCT(url VARCHAR))');
      for (const values of await valuesOf(path, 'author')) expect(values).toEqual([{ name: 'x', avatar: null }, { name: 'y', avatar: { url: 'https://x/b.png' } }]);
    } else {
      // The column the sample typed by absence gives way to the object's leaves.
      expect(await duckType(path, 'author.avatar')).toBeUndefined();
      for (const values of await valuesOf(path, 'author.avatar.url')) expect(values).toEqual([null, 'https://x/b.png']);
    }
  });

  it('keeps every digit of a big integer: an exact BIGINT when integers widen with it, _extra when a fraction made the column DOUBLE', async () => {
    const big = 2n ** 60n + 1n;
    const path = await written(
      [
        { id: 'a', n: 1, x: 1 },
        { id: 'b', n: big, x: 0.5 },
        { id: 'c', n: 2, x: big },
      ],
      layout,
    );
    expect([await duckType(path, 'n'), await duckType(path, 'x')]).toEqual(['BIGINT', 'DOUBLE']);
    const rows = await queryJS(`SELECT n, x, _extra FROM ${sqlPath(path)} ORDER BY id`);
    expect(rows.map(({ n, x }) => ({ n, x }))).toEqual([
      { n: 1n, x: 1 },
      { n: big, x: 0.5 },
      { n: 2n, x: null },
    ]);
    expect(rows.map((row) => row._extra)).toEqual([null, null, `{"x":${big}}`]);
  });

  it('keeps a value no widening holds in _extra with its path, and the column its kind', async () => {
    const path = await written([{ id: 'a', ref: 'p0' }, { id: 'b', ref: { nested: true } }], layout);
    expect(await duckType(path, 'ref')).toBe('VARCHAR');
    const rows = await queryJS(`SELECT ref, _extra FROM ${sqlPath(path)} ORDER BY id`);
    expect(rows[0]).toEqual({ ref: 'p0', _extra: null });
    // The flat layout gives the object's leaves their own columns, as a sample holding both would.
    if (layout === 'nested') expect(rows[1]).toEqual({ ref: null, _extra: '{"ref":{"nested":true}}' });
    else expect(await queryJS(`SELECT "ref.nested" AS nested FROM ${sqlPath(path)} ORDER BY id`)).toEqual([{ nested: null }, { nested: true }]);
  });

  it('keeps the rows in order over several row groups when it re-encodes', async () => {
    const records = Array.from({ length: 25 }, (_, i) => ({ id: `r${String(i).padStart(2, '0')}`, seq: i, score: i === 20 ? 0.5 : i }));
    const path = await written(records, layout, { rowGroupSize: 10 });
    expect(await duckType(path, 'score')).toBe('DOUBLE');
    const rows = await queryJS(`SELECT seq::INTEGER AS seq, score FROM ${sqlPath(path)}`);
    expect(rows).toEqual(records.map(({ seq, score }) => ({ seq, score })));
  });
});

describe('a nested Parquet file', () => {
  it('types a list its sample held only as [] by the strings that come later', async () => {
    const path = await written([{ id: 'a', media: { kind: 'v', tags: [] } }, { id: 'b', media: { kind: 'v', tags: ['x', 'y'] } }], 'nested');
    expect(await duckType(path, 'media')).toBe('STRUCT(kind VARCHAR, tags VARCHAR[])');
    // A `[]` in a field no value had typed yet reads NULL (docs/types.md).
    for (const values of await valuesOf(path, 'media')) expect(values).toEqual([{ kind: 'v', tags: null }, { kind: 'v', tags: ['x', 'y'] }]);
    expect(await queryJS(`SELECT count(_extra) AS spilled FROM ${sqlPath(path)}`)).toEqual([{ spilled: 0n }]);
  });

  it('makes a STRUCT that passes 200 keys after the sample a MAP', async () => {
    const days = (from: number, count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`d${from + i}`, from + i]));
    const path = await written([{ id: 'a', daily: days(0, 150) }, { id: 'b', daily: days(150, 110) }], 'nested');
    expect(await duckType(path, 'daily')).toBe('MAP(VARCHAR, BIGINT)');
    expect(await queryJS(`SELECT cardinality(daily) AS keys, daily['d200'] AS d200, _extra FROM ${sqlPath(path)} ORDER BY id`)).toEqual([
      { keys: 150n, d200: null, _extra: null },
      { keys: 110n, d200: 200n, _extra: null },
    ]);
    expect([...pl.readParquet(path).getColumn('daily').list.lengths()]).toEqual([150, 110]);
    const arrow = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
    expect(String(arrow.schema.fields.find((field) => field.name === 'daily')?.type)).toMatch(/^Map/);
    expect([...arrow.getChild('daily')!].map((entries) => (entries as { size: number }).size)).toEqual([150, 110]);
  });
});

describe('a flat Parquet file', () => {
  it('types a column its sample saw only as null by the integers that come later', async () => {
    const path = await written([{ id: 'a', score: null }, { id: 'b', score: 5 }, { id: 'c', score: 7 }], 'flat');
    expect(await duckType(path, 'score')).toBe('BIGINT');
    for (const values of await valuesOf(path, 'score')) expect(values).toEqual([null, 5, 7]);
  });

  it('makes an object that passes 200 keys after the sample one column of JSON text, not a column per key', async () => {
    const days = (from: number, count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`d${from + i}`, from + i]));
    const path = await written([{ id: 'a', daily: days(0, 150) }, { id: 'b', daily: days(150, 110) }], 'flat');
    expect([await duckType(path, 'daily'), await duckType(path, 'daily.d0')]).toEqual(['VARCHAR', undefined]);
    for (const values of await valuesOf(path, 'daily')) expect(values.map((text) => Object.keys(JSON.parse(String(text)) as object).length)).toEqual([150, 110]);
  });
});

describe('a Parquet export', () => {
  it('types a column from every record of the spool, not only the sample', async () => {
    const records = Array.from({ length: 1_001 }, (_, i) => ({ id: `p${String(i).padStart(4, '0')}`, upvote_ratio: i === 1_000 ? 0.81 : 1 }));
    const out = fresh('export');
    await recordsIntoFile(records, out);
    expect(await duckType(out, 'upvote_ratio')).toBe('DOUBLE');
    expect(await queryJS(`SELECT count(*) AS rows, min(upvote_ratio) AS least, count(_extra) AS spilled FROM ${sqlPath(out)}`)).toEqual([
      { rows: 1_001n, least: 0.81, spilled: 0n },
    ]);
  });
});
