/**
 * Parquet that engines can prune: column chunk statistics and dictionary pages, read by DuckDB's
 * `parquet_metadata()` and `parquet_schema()`, and every value still read back exactly.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import { toParquet } from '../../sinks/index.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';

const dir = scratchDir();

/** One row per column chunk of `path`, in file order. */
async function chunks(path: string): Promise<Array<Record<string, unknown>>> {
  return query(`
    SELECT row_group_id, path_in_schema AS name, stats_min_value AS min, stats_max_value AS max, stats_min AS legacy_min,
      stats_max AS legacy_max, stats_null_count AS nulls, encodings, dictionary_page_offset
    FROM parquet_metadata(${sqlPath(path)}) ORDER BY row_group_id, column_id`);
}

async function chunksOf(path: string, name: string): Promise<Array<Record<string, unknown>>> {
  return (await chunks(path)).filter((chunk) => chunk.name === name);
}

const TWO_51 = 2 ** 51;

/** 3,000 records, 1,000 per row group: every column kind, some NULLs, repetitive and distinct values. */
function typedRecord(i: number): Record<string, unknown> {
  return {
    seq: i,
    spread: i % 2 === 0 ? i * 1_000_003 - TWO_51 : TWO_51 - (i - 1) * 7,
    ratio: i % 10 === 0 ? null : (i % 50) / 4 - 3,
    flag: i % 3 === 0,
    when: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    city: ['Oslo', 'Lima', 'Pune', null][i % 4],
    id: `post-${i.toString(36)}-${(i * 7919).toString(16)}`,
    tags: [i % 2 === 0 ? 'even' : 'odd'],
  };
}

describe('toParquet statistics', () => {
  const records = Array.from({ length: 3_000 }, (_, i) => typedRecord(i));
  const path = join(dir, 'typed.parquet');
  const written = toParquet(records, path, { rowGroupSize: 1_000, layout: 'flat' });

  it('gives every column chunk min, max and null count, as DuckDB reads them', async () => {
    await written;
    const first = (await chunks(path)).filter((chunk) => chunk.row_group_id === 0);
    const stats = Object.fromEntries(first.map(({ name, min, max, nulls }) => [name, { min, max, nulls }]));
    expect(stats).toMatchObject({
      seq: { min: '0', max: '999', nulls: 0 },
      ratio: { min: '-2.75', max: '9.25', nulls: 100 },
      flag: { min: 'false', max: 'true', nulls: 0 },
      when: { min: '2024-01-01 00:00:00', max: '2024-01-01 16:39:00', nulls: 0 },
      city: { min: 'Lima', max: 'Pune', nulls: 250 },
      id: { min: 'post-0-0', max: 'post-z-43aad', nulls: 0 },
      tags: { min: '["even"]', max: '["odd"]', nulls: 0 },
    });
  });

  it('bounds each row group by its own values', async () => {
    await written;
    expect((await chunksOf(path, 'seq')).map(({ min, max }) => [min, max])).toEqual([
      ['0', '999'],
      ['1000', '1999'],
      ['2000', '2999'],
    ]);
  });

  it('writes integer bounds exactly near ±2^51, where they are DELTA_BINARY_PACKED', async () => {
    await written;
    const [first] = await chunksOf(path, 'spread');
    expect(first).toMatchObject({ min: String(-TWO_51), max: String(TWO_51), encodings: 'RLE, DELTA_BINARY_PACKED' });
  });

  it('writes distinct integers beyond ±2^51 PLAIN, every one exact', async () => {
    const huge = Array.from({ length: 2_000 }, (_, i) => ({ n: i % 2 === 0 ? Number.MAX_SAFE_INTEGER - i : Number.MIN_SAFE_INTEGER + i }));
    const hugePath = join(dir, 'huge.parquet');
    await toParquet(huge, hugePath);
    expect((await chunksOf(hugePath, 'n'))[0]).toMatchObject({
      encodings: 'RLE, PLAIN',
      min: String(Number.MIN_SAFE_INTEGER + 1),
      max: String(Number.MAX_SAFE_INTEGER),
    });
    expect(await query(`SELECT n FROM ${sqlPath(hugePath)}`)).toEqual(huge);
  });

  it('writes the deprecated min and max too, where their signed order is right', async () => {
    await written;
    const [seq] = await chunksOf(path, 'seq');
    const [city] = await chunksOf(path, 'city');
    expect([seq.legacy_min, seq.legacy_max]).toEqual(['0', '999']);
    expect([city.legacy_min, city.legacy_max]).toEqual(['Lima', 'Pune']);
  });

  it('lets a filter skip row groups and still find every matching row', async () => {
    await written;
    const [row] = await query(`
      SELECT count(*) FILTER (WHERE seq BETWEEN 1500 AND 1600) AS seq, count(*) FILTER (WHERE "when" >= '2024-01-02 23:00:00') AS late,
        count(*) FILTER (WHERE city = 'Oslo') AS oslo, count(*) FILTER (WHERE spread < -2251799800000000) AS low
      FROM ${sqlPath(path)}`);
    const expected = {
      seq: 101,
      late: records.filter((record) => (record.when as string) >= '2024-01-02T23:00:00.000Z').length,
      oslo: 750,
      low: records.filter((record) => (record.spread as number) < -2251799800000000).length,
    };
    expect(row).toEqual(expected);
  });

  it('reads back every value exactly', async () => {
    await written;
    const rows = await query(`SELECT seq, spread, ratio, flag, city, id, tags FROM ${sqlPath(path)}`);
    const expected = records.map(({ tags, when: _when, ...rest }) => ({ ...rest, tags: JSON.stringify(tags) }));
    expect(rows).toEqual(expected);
  });

  it('declares the type-defined column order that makes min_value and max_value meaningful', async () => {
    await written;
    const schema = await query(`SELECT name, type, converted_type FROM parquet_schema(${sqlPath(path)}) WHERE type IS NOT NULL`);
    expect(schema.map((element) => [element.name, element.type, element.converted_type])).toEqual([
      ['seq', 'INT64', null],
      ['spread', 'INT64', null],
      ['ratio', 'DOUBLE', null],
      ['flag', 'BOOLEAN', null],
      ['when', 'INT64', 'TIMESTAMP_MILLIS'],
      ['city', 'BYTE_ARRAY', 'UTF8'],
      ['id', 'BYTE_ARRAY', 'UTF8'],
      ['tags', 'BYTE_ARRAY', 'UTF8'],
      ['_extra', 'BYTE_ARRAY', 'UTF8'],
    ]);
    // The footer itself, decoded with parquetjs-lite's thrift structures: one TYPE_ORDER per leaf column.
    const file = readFileSync(path);
    const length = file.readUInt32LE(file.length - 8);
    const footer = new parquetTypes.FileMetaData() as { column_orders?: Array<{ TYPE_ORDER?: unknown }> };
    const thrift = createRequire(import.meta.url)('parquetjs-lite/lib/util.js') as { decodeThrift(into: unknown, bytes: Buffer): void };
    thrift.decodeThrift(footer, file.subarray(file.length - 8 - length, file.length - 8));
    expect(footer.column_orders).toHaveLength(schema.length);
    expect(footer.column_orders!.every((order) => order.TYPE_ORDER != null)).toBe(true);
  });
});

describe('toParquet string statistics', () => {
  it('orders strings by their UTF-8 bytes, so an emoji is above U+FFFD', async () => {
    const path = join(dir, 'utf8.parquet');
    const texts = ['b', '\uFFFD', 'é', '😀', 'a'];
    await toParquet(
      texts.map((text) => ({ text })),
      path,
    );
    const [text] = await chunksOf(path, 'text');
    expect([text.min, text.max]).toEqual(['a', '😀']);
    expect((await query(`SELECT count(*) AS n FROM ${sqlPath(path)} WHERE text > '\uFFFD'`))[0].n).toBe(1);
  });

  it('leaves out the deprecated min and max when a value is not ASCII', async () => {
    const path = join(dir, 'non-ascii.parquet');
    await toParquet([{ text: 'aa' }, { text: 'aé' }, { text: 'b' }], path);
    const [text] = await chunksOf(path, 'text');
    expect(text).toMatchObject({ min: 'aa', max: 'b', legacy_min: null, legacy_max: null });
  });

  it('leaves out bounds longer than 4 KiB but keeps the null count', async () => {
    const path = join(dir, 'long.parquet');
    await toParquet([{ text: 'x'.repeat(5000) }, { text: null }], path);
    const [text] = await chunksOf(path, 'text');
    expect(text).toMatchObject({ min: null, max: null, nulls: 1 });
  });

  it('has only a null count for a column that is always NULL', async () => {
    const path = join(dir, 'all-null.parquet');
    // The flat layout gives every field of its sample a column; the nested one types nothing by absence (docs/types.md).
    await toParquet([{ a: 1, gone: null }, { a: 2, gone: null }], path, { layout: 'flat' });
    const [gone] = await chunksOf(path, 'gone');
    expect(gone).toMatchObject({ min: null, max: null, nulls: 2, dictionary_page_offset: null });
  });
});

describe('toParquet dictionaries', () => {
  it('dictionary-encodes repetitive strings: a dictionary page and PLAIN_DICTIONARY data pages', async () => {
    const path = join(dir, 'dictionary.parquet');
    const records = Array.from({ length: 5_000 }, (_, i) => ({ subforum: ['typescript', 'rust', 'golang'][i % 3], score: i % 7 }));
    await toParquet(records, path);
    const [subforum] = await chunksOf(path, 'subforum');
    expect(subforum.encodings).toBe('RLE, PLAIN_DICTIONARY');
    expect(subforum.dictionary_page_offset).not.toBeNull();
    expect((await chunksOf(path, 'score'))[0].encodings).toBe('RLE, PLAIN_DICTIONARY');
    expect(await query(`SELECT subforum, score FROM ${sqlPath(path)}`)).toEqual(records);
  });

  it('writes distinct strings PLAIN, with no dictionary page', async () => {
    const path = join(dir, 'distinct.parquet');
    const records = Array.from({ length: 5_000 }, (_, i) => ({ id: `t3_${i.toString(36)}` }));
    await toParquet(records, path);
    const [id] = await chunksOf(path, 'id');
    expect(id).toMatchObject({ encodings: 'RLE, PLAIN', dictionary_page_offset: null });
    expect(await query(`SELECT id FROM ${sqlPath(path)}`)).toEqual(records);
  });

  it('turns a column PLAIN when its dictionary outgrows 1 MiB, for this row group and the next', async () => {
    const path = join(dir, 'outgrown.parquet');
    // 600-byte values, each four times in a row: the dictionary pays, until it passes 1 MiB.
    const records = Array.from({ length: 12_000 }, (_, i) => ({ body: `${Math.floor(i / 4)} `.padEnd(600, 'x'), n: i % 3 }));
    await toParquet(records, path, { rowGroupSize: 10_000 });
    expect((await chunksOf(path, 'body')).map((chunk) => [chunk.encodings, chunk.dictionary_page_offset])).toEqual([
      ['RLE, PLAIN', null],
      ['RLE, PLAIN', null],
    ]);
    expect((await chunksOf(path, 'n')).map((chunk) => chunk.encodings)).toEqual(['RLE, PLAIN_DICTIONARY', 'RLE, PLAIN_DICTIONARY']);
    const [row] = await query(
      `SELECT count(*) AS n, count(DISTINCT body) AS distinct_bodies, min(length(body)) AS shortest FROM ${sqlPath(path)}`,
    );
    expect(row).toEqual({ n: 12_000, distinct_bodies: 3_000, shortest: 600 });
    const sample = await query(`SELECT body FROM ${sqlPath(path)} LIMIT 1 OFFSET 9999`);
    expect(sample[0].body).toBe(records[9_999].body);
  });

  it('writes dictionaries of consecutive row groups intact when uncompressed', async () => {
    const path = join(dir, 'uncompressed.parquet');
    const records = Array.from({ length: 4_000 }, (_, i) => ({ word: `${Math.floor(i / 1_000)}-${i % 5}` }));
    await toParquet(records, path, { rowGroupSize: 1_000, compression: 'none' });
    expect((await chunksOf(path, 'word')).map((chunk) => chunk.encodings)).toEqual(Array(4).fill('RLE, PLAIN_DICTIONARY'));
    expect(await query(`SELECT word FROM ${sqlPath(path)}`)).toEqual(records);
  });

  it('reads back runs of every length, of values and of NULLs, exactly', async () => {
    const path = join(dir, 'runs.parquet');
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const records: Array<Record<string, unknown>> = [];
    while (records.length < 20_000) {
      const run = 1 + random(20);
      const word = random(5) === 0 ? null : `w${random(300)}`;
      const flag = random(3) === 0 ? null : random(2) === 0;
      for (let i = 0; i < run; i++) records.push({ word, flag, n: word === null ? null : records.length % 9 });
    }
    await toParquet(records, path, { rowGroupSize: 7_777 });
    expect((await chunksOf(path, 'word'))[0].encodings).toBe('RLE, PLAIN_DICTIONARY');
    expect(await query(`SELECT word, flag, n FROM ${sqlPath(path)}`)).toEqual(records);
  });

  it('keeps -0 apart from 0 in a dictionary-encoded DOUBLE column', async () => {
    const path = join(dir, 'zeros.parquet');
    const values = Array.from({ length: 2_000 }, (_, i) => [0.5, 0, -0, 1.5][i % 4]);
    await toParquet(
      values.map((v) => ({ v })),
      path,
    );
    expect((await chunksOf(path, 'v'))[0]).toMatchObject({ encodings: 'RLE, PLAIN_DICTIONARY', min: '-0.0', max: '1.5' });
    const back = (await query(`SELECT v FROM ${sqlPath(path)}`)).map((row) => row.v as number);
    expect(back.map((v) => Object.is(v, -0))).toEqual(values.map((v) => Object.is(v, -0)));
    expect(back).toEqual(values);
  });
});
