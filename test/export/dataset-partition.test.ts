/**
 * Partitions (issue 20, item 5): `partition: 'day' | 'month' | 'year' | 'none'` under the Hive key
 * `_date`, month by default; a record's own `date` field stays visible; out-of-range years go to the Hive default partition (`_date` NULL);
 * a dataset keeps its partitioning, and one written before it was recorded keeps `date=` by day.
 */
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatasetError } from '../../src/index.ts';
import type { ExportOptions } from '../../src/export/index.ts';
import { closeServed, recordsIntoDataset as toDataset } from './helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

type PartitionBy = NonNullable<ExportOptions['partition']>;
afterAll(closeServed);

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `part-${++counter}`);
const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
const SUBFORUM = { operation: 'forum/subforum', params: { subforum: 'partitions' } } as const;

/** 300 posts, one every 3.65 days from 2021 on: three years, a file a post if partitioned by day. */
const posts = Array.from({ length: 300 }, (_, i) => ({ id: `p${i}`, created_utc: 1_609_459_200 + i * 315_360, title: `post ${i}` }));

/** The partition folders of the operation, as written on disk. */
function folders(dir: string, operation = 'forum/subforum'): string[] {
  return readdirSync(join(dir, ...operation.split('/'))).sort();
}

describe('dataset partitions', () => {
  it('writes one part file a month by default, under _date=YYYY-MM', async () => {
    const dir = freshDir();
    await toDataset(posts, dir, SUBFORUM);
    const months = new Set(posts.map((post) => new Date(post.created_utc * 1000).toISOString().slice(0, 7)));
    expect(folders(dir)).toEqual([...months].sort().map((month) => `_date=${month}`));
    expect(months.size).toBeLessThan(40);
    const [{ rows, wrong }] = await query(
      `SELECT count(*) AS rows, count(*) FILTER (WHERE CAST(_date AS VARCHAR) <> strftime(to_timestamp(created_utc), '%Y-%m')) AS wrong FROM ${table(dir)}`,
    );
    expect([rows, wrong]).toEqual([300, 0]);
  });

  it.each([
    ['day', '%Y-%m-%d'],
    ['year', '%Y'],
  ] as const)('partitions by %s when asked, each record under its own time', async (by, format) => {
    const dir = freshDir();
    await toDataset(posts, dir, { ...SUBFORUM, partition: by });
    const [{ rows, wrong, partitions }] = await query(
      `SELECT count(*) AS rows, count(DISTINCT _date) AS partitions, count(*) FILTER (WHERE CAST(_date AS VARCHAR) <> strftime(to_timestamp(created_utc), '${format}')) AS wrong FROM ${table(dir)}`,
    );
    expect([rows, wrong]).toEqual([300, 0]);
    expect(partitions).toBe(folders(dir).length);
    expect(partitions).toBe(by === 'day' ? 300 : 3);
  });

  it("puts every record in one partition, _date=all, with partition 'none'", async () => {
    const dir = freshDir();
    await toDataset(posts, dir, { ...SUBFORUM, partition: 'none' });
    expect(folders(dir)).toEqual(['_date=all']);
    expect(await query(`SELECT count(*) AS rows FROM ${table(dir)}`)).toEqual([{ rows: 300 }]);
  });

  it("keeps a record's own date field visible beside the partition column", async () => {
    const dir = freshDir();
    await toDataset([{ id: 'a', created_utc: 1_700_000_000, date: 'the record says so' }], dir, SUBFORUM);
    expect(await query(`SELECT date, _date FROM ${table(dir)}`)).toEqual([{ date: 'the record says so', _date: '2023-11' }]);
  });

  it("keeps a record's own field named _date in _extra, the partition column beside it", async () => {
    const dir = freshDir();
    await toDataset([{ id: 'a', created_utc: 1_700_000_000, _date: 'mine' }], dir, SUBFORUM);
    expect(await query(`SELECT json_extract_string(_extra, '$._date') AS mine, _date FROM ${table(dir)}`)).toEqual([{ mine: 'mine', _date: '2023-11' }]);
  });

  it('files times past the year 9999 or before the year 0 in the Hive default partition, read as NULL', async () => {
    const dir = freshDir();
    const records = [
      { id: 'far', created_utc: 1_750_000_000_000 }, // year 57425: was date=+057425-…
      { id: 'before', created_utc: -62_200_000_000 }, // year -1
      { id: 'last', created_utc: 253_402_300_799 }, // 9999-12-31T23:59:59Z
      { id: 'first', created_utc: -62_167_219_200 }, // 0000-01-01T00:00:00Z
    ];
    await toDataset(records, dir, SUBFORUM);
    expect(folders(dir)).toEqual(['_date=0000-01', '_date=9999-12', '_date=__HIVE_DEFAULT_PARTITION__']);
    expect(await query(`SELECT id, CAST(_date AS VARCHAR) AS _date FROM ${table(dir)} ORDER BY id`)).toEqual([
      { id: 'before', _date: null },
      { id: 'far', _date: null },
      { id: 'first', _date: '0000-01' },
      { id: 'last', _date: '9999-12' },
    ]);
  });

  it('keeps the partitioning of its first run, and refuses a run that asks for another', async () => {
    const dir = freshDir();
    await toDataset(posts.slice(0, 10), dir, { ...SUBFORUM, partition: 'year' });
    await toDataset(posts.slice(10, 20), dir, SUBFORUM);
    expect(folders(dir)).toEqual(['_date=2021']);
    const error = await toDataset(posts.slice(20, 30), dir, { ...SUBFORUM, partition: 'day' }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(DatasetError);
    expect((error as Error).message).toMatch(/partitioned by year; a run cannot partition it by day/);
  });

  it('rejects an unknown partition with a TypeError', async () => {
    await expect(toDataset(posts, freshDir(), { ...SUBFORUM, partition: 'week' as PartitionBy })).rejects.toThrow(/partition must be one of day, month, year, none/);
  });

  it('keeps date= by day in a dataset written before partitioning was recorded, for its operations and new ones', async () => {
    const dir = freshDir();
    await toDataset(posts.slice(0, 5), dir, { ...SUBFORUM, partition: 'day' });
    // Make it look like a 0.1 dataset: date= folders, a schema file without partitioning.
    for (const folder of folders(dir)) renameSync(join(dir, 'forum', 'subforum', folder), join(dir, 'forum', 'subforum', folder.replace('_date=', 'date=')));
    const schemaPath = join(dir, '_dataset', 'forum__subforum', 'schema.json');
    const { partitioning: _dropped, ...legacy } = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(schemaPath, JSON.stringify(legacy));

    await toDataset(posts.slice(3, 8), dir, SUBFORUM);
    await toDataset([{ id: 'c1', publishedTime: '2024-05-06T07:08:09Z', text: 'hi' }], dir, { operation: 'videosite/video/comments', params: { url: 'u' } });
    expect(folders(dir).every((folder) => folder.startsWith('date='))).toBe(true);
    expect(folders(dir)).toHaveLength(8);
    expect(folders(dir, 'videosite/video/comments')).toEqual(['date=2024-05']);
    const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM ${table(dir)}`);
    expect([rows, keys]).toEqual([9, 9]);
  });
});
