/**
 * A key is once in the dataset wherever its record lands (issue 38, item 1): a record whose partition
 * changes between versions (its time moves, appears, turns to garbage; its key appears where a
 * stand-in key was used) leaves no older version behind, the later fetch kept; records without a
 * usable time go to Hive's default partition, which readers take for a NULL `_date` of the type the
 * other partitions give it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExportOptions } from '../../src/export/index.ts';
import { closeServed, recordsIntoDataset as toDataset } from './helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

afterAll(closeServed);

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `moves-${++counter}`);
const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
const SUBFORUM = { operation: 'forum/subforum', params: { subforum: 'moves' } } as const;

const OCT_30 = Date.UTC(2025, 9, 30) / 1000;
const NOV_2 = Date.UTC(2025, 10, 2) / 1000;
/** Posts that stay where they are, beside the one that moves: none of them may go missing. */
const STAYING = [
  { id: 'oct', created_utc: OCT_30 + 60, title: 'stays in October' },
  { id: 'nov', created_utc: NOV_2 + 60, title: 'stays in November' },
];

/** The dataset's rows by key (`id`, or with stand-ins `coalesce(id, _key)`): how many rows each, and the title kept. */
async function rowsByKey(dir: string, key = 'id'): Promise<Record<string, unknown>[]> {
  return query(`SELECT ${key} AS key, count(*) AS rows, max(title) AS title FROM ${table(dir)} GROUP BY ALL ORDER BY key`);
}

/** Publishes the post as first sent, then as sent later (the later fetch), beside the posts that stay. */
async function twoVersions(dir: string, first: object, later: object, options: Omit<ExportOptions, 'out' | 'dataset'> = {}): Promise<void> {
  await toDataset([...STAYING, { title: 'first', ...first }], dir, { ...SUBFORUM, ...options });
  await toDataset([...STAYING, { title: 'later', ...later }], dir, { ...SUBFORUM, ...options });
}

describe('a record that moves between partitions', () => {
  it('is kept once, the later fetch, when a post is rescheduled from 30 Oct to 2 Nov', async () => {
    const dir = freshDir();
    await twoVersions(dir, { id: 'moved', created_utc: OCT_30 }, { id: 'moved', created_utc: NOV_2 });
    expect(await rowsByKey(dir)).toEqual([
      { key: 'moved', rows: 1, title: 'later' },
      { key: 'nov', rows: 1, title: 'stays in November' },
      { key: 'oct', rows: 1, title: 'stays in October' },
    ]);
    expect(await query(`SELECT _date FROM ${table(dir)} WHERE id = 'moved'`)).toEqual([{ _date: '2025-11' }]);
  });

  it('is kept once when a post without a time gets one (the undated copy goes)', async () => {
    const dir = freshDir();
    await twoVersions(dir, { id: 'moved' }, { id: 'moved', created_utc: NOV_2 });
    expect(await rowsByKey(dir)).toEqual([
      { key: 'moved', rows: 1, title: 'later' },
      { key: 'nov', rows: 1, title: 'stays in November' },
      { key: 'oct', rows: 1, title: 'stays in October' },
    ]);
    expect(readdirSync(join(dir, 'forum/subforum')).sort()).toEqual(['_date=2025-10', '_date=2025-11']);
  });

  it.each([
    ['-1', -1],
    ['the year 9999', Date.UTC(9999, 5, 1) / 1000],
    ['past the year 9999', 1e15],
  ])('is kept once when its time turns to %s', async (_, time) => {
    const dir = freshDir();
    await twoVersions(dir, { id: 'moved', created_utc: OCT_30 + 120 }, { id: 'moved', created_utc: time });
    expect(await rowsByKey(dir)).toEqual([
      { key: 'moved', rows: 1, title: 'later' },
      { key: 'nov', rows: 1, title: 'stays in November' },
      { key: 'oct', rows: 1, title: 'stays in October' },
    ]);
  });

  it('replaces the version kept under its stand-in key when a post sent with id null is sent with its id', async () => {
    const dir = freshDir();
    const post = { permalink: '/f/moves/comments/abc', created_utc: OCT_30 + 300 };
    await twoVersions(dir, { ...post, id: null }, { ...post, id: 'abc' });
    expect(await rowsByKey(dir, 'coalesce(id, _key)')).toEqual([
      { key: 'abc', rows: 1, title: 'later' },
      { key: 'nov', rows: 1, title: 'stays in November' },
      { key: 'oct', rows: 1, title: 'stays in October' },
    ]);
  });

  it('replaces the stand-in version in another partition when the post gets its id and a new time at once', async () => {
    const dir = freshDir();
    await twoVersions(dir, { permalink: '/f/moves/comments/def', id: null }, { permalink: '/f/moves/comments/def', id: 'def', created_utc: NOV_2 + 5 });
    expect(await rowsByKey(dir, 'coalesce(id, _key)')).toEqual([
      { key: 'def', rows: 1, title: 'later' },
      { key: 'nov', rows: 1, title: 'stays in November' },
      { key: 'oct', rows: 1, title: 'stays in October' },
    ]);
  });
});

describe('undated records', () => {
  it.each([
    ['day', 'DATE'],
    ['year', 'BIGINT'],
    ['month', 'VARCHAR'],
  ] as const)('by %s, leave _date typed %s and read as NULL, so year(), = 2025 and >= 2025-01 still work', async (by, type) => {
    const dir = freshDir();
    const records = [
      { id: 'dated', created_utc: Date.UTC(2025, 2, 4) / 1000 },
      { id: 'older', created_utc: Date.UTC(2024, 0, 1) / 1000 },
      { id: 'none' },
      { id: 'garbage', created_utc: 1e15 },
    ];
    await toDataset(records, dir, { ...SUBFORUM, partition: by });
    expect(readdirSync(join(dir, 'forum/subforum'))).toContain('_date=__HIVE_DEFAULT_PARTITION__');
    expect(await query(`SELECT DISTINCT typeof(_date) AS type FROM ${table(dir)}`)).toEqual([{ type: type }]);
    expect(await query(`SELECT id FROM ${table(dir)} WHERE _date IS NULL ORDER BY id`)).toEqual([{ id: 'garbage' }, { id: 'none' }]);
    const in2025 = by === 'day' ? `year(_date) = 2025` : by === 'year' ? `_date = 2025` : `_date >= '2025-01'`;
    expect(await query(`SELECT id FROM ${table(dir)} WHERE ${in2025}`)).toEqual([{ id: 'dated' }]);
  });
});
