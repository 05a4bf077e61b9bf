/**
 * A value with `toJSON` (a `Date`, a `URL`, what a user's `map` operator adds) is written as
 * `JSON.stringify` sees it (docs/types.md "What decides"): a valid `Date` is its ISO instant, so
 * a TIMESTAMP in Parquet and its text in CSV; an invalid one NULL; a `URL` its text. Never the
 * quoted JSON text of what `toJSON` returns.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, describe, expect, it } from 'vitest';
import { toCsv, toParquet } from '../../sinks/index.ts';
import { MAP_THRESHOLD } from '../../sinks/rows.ts';
import { map, pipe } from '../../src/operators/index.ts';
import { datasetParts } from '../export/helpers/dataset-parts.ts';
import { closeServed, recordsIntoDataset } from '../export/helpers/served-records.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';
import { pythonCsvRows } from './helpers/read-back.ts';

const dir = scratchDir();
const AT = '2024-01-02T03:04:05.000Z';
const LATER = '2024-05-06T07:08:09.010Z';
const LAYOUTS = ['nested', 'flat'] as const;

/** DuckDB's type of each column of a file. */
async function columnTypes(path: string): Promise<Record<string, string>> {
  const rows = await query(`DESCRIBE SELECT * FROM ${sqlPath(path)}`);
  return Object.fromEntries(rows.map((row) => [row.column_name as string, row.column_type as string]));
}

/** Polars' type of a column and its values (a Datetime's as ISO instants). */
function polarsColumn(path: string, name: string): { type: string; values: unknown[] } {
  const series = pl.readParquet(path).getColumn(name);
  const values = [...(series.toArray() as unknown[])].map((value) => (value instanceof Date ? value.toISOString() : value));
  return { type: String(series.dtype), values };
}

/** arrow-rs' (parquet-wasm's) table of a file. */
function arrowTable(path: string) {
  return tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
}

describe('values with toJSON in Parquet', () => {
  it.each(LAYOUTS)('writes a Date field as a TIMESTAMP holding its instant (%s layout)', async (layout) => {
    const path = join(dir, `date-${layout}.parquet`);
    await toParquet([{ id: 1, at: new Date(AT) }], path, { layout });
    expect(await columnTypes(path)).toMatchObject({ at: 'TIMESTAMP' });
    expect(await query(`SELECT "at", _extra FROM ${sqlPath(path)}`)).toEqual([{ at: AT, _extra: null }]);
    expect(polarsColumn(path, 'at')).toEqual({ type: 'DataType(Datetime(ms,))', values: [AT] });
  });

  it('writes a Date nested in an object and in a list as TIMESTAMPs (nested layout)', async () => {
    const path = join(dir, 'date-deep-nested.parquet');
    await toParquet([{ id: 1, nested: { at: new Date(AT) }, times: [new Date(AT), new Date(LATER)] }], path, { layout: 'nested' });
    expect(await columnTypes(path)).toMatchObject({ nested: 'STRUCT("at" TIMESTAMP)', times: 'TIMESTAMP[]' });
    const [row] = await query(`SELECT nested.at AS at, strftime(times[2], '%Y-%m-%dT%H:%M:%S.%gZ') AS second, _extra FROM ${sqlPath(path)}`);
    expect(row).toEqual({ at: AT, second: LATER, _extra: null });
    const table = arrowTable(path);
    expect(String(table.schema.fields.find((field) => field.name === 'times')!.type)).toMatch(/List<Timestamp/);
    const times = [...(table.getChild('times')!.get(0) as Iterable<number | bigint>)].map(Number);
    expect(times).toEqual([Date.parse(AT), Date.parse(LATER)]);
  });

  it('writes the Dates of an object keyed by data as a MAP of TIMESTAMPs (nested layout)', async () => {
    const path = join(dir, 'date-map.parquet');
    const daily = Object.fromEntries(Array.from({ length: MAP_THRESHOLD + 1 }, (_, i) => [`d${i}`, new Date(Date.parse(AT) + i * 86_400_000)]));
    await toParquet([{ id: 1, daily }], path, { layout: 'nested' });
    expect(await columnTypes(path)).toMatchObject({ daily: 'MAP(VARCHAR, TIMESTAMP)' });
    expect(await query(`SELECT daily['d0'] AS first, _extra FROM ${sqlPath(path)}`)).toEqual([{ first: AT, _extra: null }]);
    const daily0 = arrowTable(path).getChild('daily')!.get(0) as { toJSON(): Record<string, unknown> };
    expect(Number(daily0.toJSON().d0)).toBe(Date.parse(AT));
  });

  it('writes a Date nested in an object as a TIMESTAMP column of its dotted path (flat layout)', async () => {
    const path = join(dir, 'date-deep-flat.parquet');
    await toParquet([{ id: 1, nested: { at: new Date(AT) } }], path, { layout: 'flat' });
    expect(await columnTypes(path)).toMatchObject({ 'nested.at': 'TIMESTAMP' });
    expect(await query(`SELECT "nested.at" AS at, _extra FROM ${sqlPath(path)}`)).toEqual([{ at: AT, _extra: null }]);
    expect(polarsColumn(path, 'nested.at')).toEqual({ type: 'DataType(Datetime(ms,))', values: [AT] });
  });

  it.each(LAYOUTS)('writes an invalid Date as NULL (%s layout)', async (layout) => {
    const path = join(dir, `bad-date-${layout}.parquet`);
    await toParquet([{ id: 1, at: new Date(AT), bad: new Date(NaN) }, { id: 2, at: new Date(NaN), bad: null }], path, { layout });
    expect(await query(`SELECT id, "at", _extra FROM ${sqlPath(path)} ORDER BY id`)).toEqual([
      { id: 1, at: AT, _extra: null },
      { id: 2, at: null, _extra: null },
    ]);
    expect(polarsColumn(path, 'at')).toEqual({ type: 'DataType(Datetime(ms,))', values: [AT, null] });
  });

  it.each(LAYOUTS)('writes a URL as its text in a string column (%s layout)', async (layout) => {
    const path = join(dir, `url-${layout}.parquet`);
    await toParquet([{ id: 1, url: new URL('https://x.example/a') }], path, { layout });
    expect(await columnTypes(path)).toMatchObject({ url: 'VARCHAR' });
    expect(await query(`SELECT url, _extra FROM ${sqlPath(path)}`)).toEqual([{ url: 'https://x.example/a', _extra: null }]);
    expect(polarsColumn(path, 'url')).toEqual({ type: 'DataType(String)', values: ['https://x.example/a'] });
  });

  it.each(LAYOUTS)('types a Date first seen after the sample by its instant (%s layout)', async (layout) => {
    const path = join(dir, `late-date-${layout}.parquet`);
    const records = [{ id: 1, at: AT }, { id: 2, at: AT }, { id: 3, at: new Date(LATER), added: new Date(LATER) }];
    await toParquet(records, path, { layout, sampleSize: 2 });
    expect(await columnTypes(path)).toMatchObject({ at: 'TIMESTAMP', added: 'TIMESTAMP' });
    expect(await query(`SELECT "at", added, _extra FROM ${sqlPath(path)} ORDER BY id`)).toEqual([
      { at: AT, added: null, _extra: null },
      { at: AT, added: null, _extra: null },
      { at: LATER, added: LATER, _extra: null },
    ]);
    const arrow = arrowTable(path);
    expect([...arrow.getChild('added')!].map((value) => (value === null ? null : Number(value)))).toEqual([null, null, Date.parse(LATER)]);
  });
});

describe('values with toJSON in CSV', () => {
  it("writes a Date as its ISO text without quotes, an invalid one empty and a URL as its text, as python's csv reads it", async () => {
    const path = join(dir, 'dates.csv');
    await toCsv([{ id: 1, at: new Date(AT), bad: new Date(NaN), nested: { at: new Date(AT) }, url: new URL('https://x.example/a') }], path);
    expect(pythonCsvRows(path)).toEqual([{ id: '1', at: AT, bad: null, 'nested.at': AT, url: 'https://x.example/a', _extra: null }]);
  });
});

describe('values with toJSON in a dataset', () => {
  afterAll(closeServed);

  // A dataset keeps ISO instants as text (docs/datasets.md): the Date is that text, unquoted.
  it("writes the Date a transform's map adds as its ISO text in the dataset's part", async () => {
    const target = join(dir, 'dataset');
    const stamped = map((post: { id: string }) => ({ ...post, seen: new Date(AT) }));
    await recordsIntoDataset([{ id: 'p1', created_utc: 1_709_251_200 }], target, {
      params: { subforum: 'dated' },
      transform: (records) => pipe(records as AsyncIterable<{ id: string }>, stamped),
    });
    const [part] = datasetParts(target);
    expect(await columnTypes(part)).toMatchObject({ seen: 'VARCHAR' });
    expect(await query(`SELECT id, seen, _extra FROM ${sqlPath(part)}`)).toEqual([{ id: 'p1', seen: AT, _extra: null }]);
    expect(polarsColumn(part, 'seen')).toEqual({ type: 'DataType(String)', values: [AT] });
  });
});
