/**
 * docs/guide/big-integers.md: the short-video platform sends `music.id` as a 19-digit JSON number with
 * `id_str` beside it. Walked from the sandbox over loopback, exported through the engine's spool, it
 * keeps every digit in NDJSON, in CSV read by python3's csv module, in Parquet read by DuckDB (a
 * BIGINT) and in a dataset; in a dataset that recorded the column as double they go to `_extra`
 * with every digit, never rounded.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { exportTo, toDataset } from '../../src/export/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { pythonCsvRows } from '../sinks/helpers/read-back.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);

let sandbox: Sandbox;
let client: Client;

beforeAll(async () => ({ sandbox, client } = await startSandboxClient()));
afterAll(() => closeSandboxClient({ sandbox, client }));

/** Every `music.id` of a text file beside its `id_str`, as the raw digits the file holds. */
function musicIdsIn(text: string): Array<[string, string]> {
  return [...text.matchAll(/"id":(-?\d+),"id_str":"(\d+)"/g)].map(([, id, idStr]) => [id, idStr]);
}

const LAYOUTS = ['nested', 'flat'] as const;
type Layout = (typeof LAYOUTS)[number];

/** A leaf in SQL: a struct's field in the nested layout (`music.id`), a dotted column in the flat one (`"music.id"`). */
function leaf(layout: Layout, ...keys: string[]): string {
  return layout === 'nested' ? keys.join('.') : `"${keys.join('.')}"`;
}

/** The kind the dataset's schema file records for a leaf. */
function recordedKind(dir: string, layout: Layout, ...keys: string[]): string | undefined {
  type Column = { name: string; kind: string; fields?: Column[] };
  const { columns } = JSON.parse(readFileSync(join(dir, '_dataset', 'shortvideo__videos', 'schema.json'), 'utf8')) as { columns: Column[] };
  if (layout === 'flat') return columns.find((column) => column.name === keys.join('.'))?.kind;
  let found: Column | undefined = { name: '', kind: 'struct', fields: columns };
  for (const key of keys) found = found?.fields?.find((column) => column.name === key);
  return found?.kind;
}

describe('a 19-digit music.id from the sandbox', () => {
  it('is yielded by the client as a bigint with the digits of id_str', async () => {
    let count = 0;
    for await (const video of client.shortvideo.videos({ handle: 'big-yield-n40' })) {
      expect(typeof video.music.id).toBe('bigint');
      expect(String(video.music.id)).toBe(video.music.id_str);
      expect(video.music.id_str).toHaveLength(19);
      count++;
    }
    expect(count).toBe(40);
  });

  it('reaches NDJSON through the spool with the same digits', async () => {
    const out = fresh('videos.ndjson');
    expect(await exportTo(client.shortvideo.videos({ handle: 'big-ndjson-n40' }), { out })).toMatchObject({ complete: true, records: 40 });
    const pairs = musicIdsIn(readFileSync(out, 'utf8'));
    expect(pairs).toHaveLength(40);
    for (const [id, idStr] of pairs) expect(id).toBe(idStr);
  });

  it('reaches CSV with the same digits, as python3 csv reads them', async () => {
    const out = fresh('videos.csv');
    expect(await exportTo(client.shortvideo.videos({ handle: 'big-csv-n40' }), { out })).toMatchObject({ complete: true, records: 40 });
    const rows = pythonCsvRows(out);
    expect(rows).toHaveLength(40);
    for (const row of rows) {
      expect(row['music.id']).toMatch(/^\d{19}$/);
      expect(row['music.id']).toBe(row['music.id_str']);
    }
  });

  it('reaches Parquet as a BIGINT with the exact value, as DuckDB reads it', async () => {
    const out = fresh('videos.parquet');
    expect(await exportTo(client.shortvideo.videos({ handle: 'big-parquet-n40' }), { out })).toMatchObject({ complete: true, records: 40 });
    // A Parquet file keeps the record's shape (docs/guide/first-export.md): music is a STRUCT, music.id its exact BIGINT leaf.
    const rows = await query(`SELECT typeof(music.id) AS type, music.id AS id, music.id_str AS id_str FROM read_parquet(${sqlPath(out)})`);
    expect(rows).toHaveLength(40);
    for (const row of rows) {
      expect(row.type).toBe('BIGINT');
      expect(typeof row.id).toBe('bigint');
      expect(String(row.id)).toBe(row.id_str);
    }
  });

  it.each(LAYOUTS)('reaches a %s dataset as a BIGINT with the exact value, and keeps it when a later run merges into its parts', async (layout) => {
    const dir = fresh('dataset');
    const params = { handle: 'big-dataset-n40' };
    await toDataset(client.shortvideo.videos(params), dir, { layout });
    // The same videos again: every part is read back and written anew around them.
    await toDataset(client.shortvideo.videos(params), dir, { incremental: false });
    const [id, idStr] = [leaf(layout, 'music', 'id'), leaf(layout, 'music', 'id_str')];
    const rows = await query(`SELECT typeof(${id}) AS type, ${id} AS id, ${idStr} AS id_str FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true)`);
    expect(rows).toHaveLength(40);
    for (const row of rows) {
      expect(row.type).toBe('BIGINT');
      expect(String(row.id)).toBe(row.id_str);
    }
    expect(recordedKind(dir, layout, 'music', 'id')).toBe('bigint');
  });
});

describe('a dataset written before integers were exact', () => {
  let server: Server;
  let old: Client;
  /** The raw `music.id` and `score` literals the old service below sends. */
  let literal = '';
  let score = '0';

  beforeAll(async () => {
    // One page of one video, its music.id written as `literal`: the body text a test wants, byte for byte.
    server = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(
        `{"success":true,"data":{"aweme_list":[{"aweme_id":"7300000000000000001","desc":"old","create_time":1700000000,"score":${score},` +
          `"author":{"uid":"1"},"music":{"id":${literal},"id_str":"7471256031625273857","title":"t"}}],"max_cursor":0,"has_more":0}}`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    old = createClient({ apiKey: 'sk_test_big_integers', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retry: { retries: 0 } });
  });
  afterAll(async () => {
    await old.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it.each(LAYOUTS)('keeps every digit of integers past 2^53 that a column recorded as double cannot hold, in _extra, and publishes the run (%s)', async (layout) => {
    const dir = fresh('old-double');
    score = '0';
    // Earlier versions recorded a 19-digit id as double (they parsed it to a rounded number); a
    // fraction puts the column there today.
    literal = '7471.5';
    await toDataset(old.shortvideo.videos({ handle: 'old' }), dir, { layout });
    const id = leaf(layout, 'music', 'id');
    const summary = await toDataset(client.shortvideo.videos({ handle: 'big-kept-n40' }), dir);
    expect(summary.dataset?.drift.conflicting).toEqual([{ column: 'music.id', recorded: 'double', seen: 'bigint', values: 40 }]);
    const rows = await query(`SELECT typeof(${id}) AS type, ${id} AS id, _extra FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, union_by_name = true)`);
    expect(rows).toHaveLength(41);
    expect(new Set(rows.map((row) => row.type))).toEqual(new Set(['DOUBLE']));
    expect(rows.filter((row) => row.id === 7471.5)).toHaveLength(1);
    const kept = rows.filter((row) => row.id === null).map((row) => String(row._extra).match(/"music\.id":(\d+)/)?.[1]);
    expect(kept).toHaveLength(40);
    for (const digits of kept) expect(digits).toMatch(/^\d{19}$/);
    expect(recordedKind(dir, layout, 'music', 'id')).toBe('double');
  });

  it('keeps a bigint given to any other column recorded as double in _extra with every digit, the column as it was', async () => {
    const dir = fresh('old-double-score');
    literal = '1';
    score = '2.5';
    await toDataset(old.shortvideo.videos({ handle: 'old' }), dir);
    score = '1234567890123456789';
    const summary = await toDataset(old.shortvideo.videos({ handle: 'old' }), dir);
    expect(summary.dataset?.drift.conflicting).toEqual([{ column: 'score', recorded: 'double', seen: 'bigint', values: 1 }]);
    const rows = await query(`SELECT typeof(score) AS type, score, _extra FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)})`);
    expect(rows).toEqual([{ type: 'DOUBLE', score: null, _extra: '{"score":1234567890123456789}' }]);
  });

  it.each(LAYOUTS)('widens a column recorded as integer to exact integers, its old values kept (%s)', async (layout) => {
    const dir = fresh('old-integer');
    // The sandbox of earlier versions sent a 15-digit music.id: an integer column.
    literal = '747125603162527';
    score = '0';
    await toDataset(old.shortvideo.videos({ handle: 'old' }), dir, { layout });
    await toDataset(client.shortvideo.videos({ handle: 'big-widened-n40' }), dir);
    const [id, idStr] = [leaf(layout, 'music', 'id'), leaf(layout, 'music', 'id_str')];
    const rows = await query(`SELECT typeof(${id}) AS type, ${id} AS id, ${idStr} AS id_str FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, union_by_name = true)`);
    expect(rows).toHaveLength(41);
    expect(new Set(rows.map((row) => row.type))).toEqual(new Set(['BIGINT']));
    expect(rows.filter((row) => row.id === 747125603162527)).toHaveLength(1);
    for (const row of rows.filter((row) => row.id !== 747125603162527)) expect(String(row.id)).toBe(row.id_str);
    expect(recordedKind(dir, layout, 'music', 'id')).toBe('bigint');
  });
});
