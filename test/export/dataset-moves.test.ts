/**
 * A key is once in the dataset wherever its record lands (issue 38, item 1): a record whose partition
 * changes between versions (its time moves, appears, turns to garbage; its key appears where a
 * stand-in key was used) leaves no older version behind, the later fetch kept; records without a
 * usable time go to Hive's default partition, which readers take for a NULL `_date` of the type the
 * other partitions give it.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactDataset, type ExportOptions } from '../../src/export/index.ts';
import { writeKeyIndex } from '../../src/dataset/key-index.ts';
import { LocalStorage } from '../../src/dataset/storage/local.ts';
import { closeServed, recordsIntoDataset as toDataset } from './helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

afterAll(closeServed);

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `moves-${++counter}`);
const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
const META = '_dataset/forum__subforum';
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

/** Makes the dataset as a version before key indexes left it: none, and none recorded. */
function unrecordKeyIndexes(dir: string): void {
  rmSync(join(dir, META, 'keys'), { recursive: true, force: true });
  const schema = JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as Record<string, unknown>;
  delete schema.keys;
  writeFileSync(join(dir, META, 'schema.json'), JSON.stringify(schema));
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
    ['none at all', undefined],
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

  it('waits, when a pass at work places the same key in another partition, for that partition, so the two passes never keep it twice', async () => {
    const dir = freshDir();
    await toDataset(STAYING, dir, SUBFORUM);
    // What a pass at work (another writer's, formed first) leaves while it publishes: its claim, where it
    // places its keys (the post in October), and its locks, held by a live process (this one).
    const pass = join(dir, META, 'publishing', 'at-work');
    mkdirSync(pass, { recursive: true });
    writeFileSync(join(pass, 'claim.json'), JSON.stringify({ commits: [], partitions: ['2025-10'] }));
    const storage = new LocalStorage(dir);
    await writeKeyIndex(storage, `${META}/publishing/at-work/keys/2025-10/pass.keys`, ['raced'], join(storage.scratch, 'test'));
    const owner = JSON.stringify({ pid: process.pid, host: hostname() });
    const locks = ['pass-at-work', 'partition-2025-10'].map((name) => join(dir, META, 'locks', name));
    for (const lock of locks) {
      mkdirSync(lock, { recursive: true });
      writeFileSync(join(lock, 'owner.json'), owner);
    }
    let returned = false;
    const later = toDataset([{ id: 'raced', created_utc: NOV_2, title: 'later' }], dir, SUBFORUM).finally(() => (returned = true));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Its own partition (November) is free, but it publishes only once it can see the other pass's October.
    expect(returned).toBe(false);
    rmSync(pass, { recursive: true, force: true });
    for (const lock of locks) rmSync(lock, { recursive: true, force: true });
    await later;
    expect(await rowsByKey(dir)).toEqual([
      { key: 'nov', rows: 1, title: 'stays in November' },
      { key: 'oct', rows: 1, title: 'stays in October' },
      { key: 'raced', rows: 1, title: 'later' },
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

describe('a dataset that already holds a key twice', () => {
  // A stand-in beside its own key is left only by a version before publishes replaced it (its schema records no key indexes).
  it.each([
    ['in two partitions', { id: 'twice', created_utc: OCT_30 }, 'id', false],
    ['under its stand-in key and its own, by an older version', { id: null, permalink: '/f/moves/comments/twice', created_utc: OCT_30 }, 'coalesce(id, _key)', true],
  ] as const)('is compacted to each key once, the later fetch kept (%s)', async (_, first, key, older) => {
    const dir = freshDir();
    const later = freshDir();
    await toDataset([STAYING[0], { ...first, title: 'first' }], dir, SUBFORUM);
    await toDataset([{ id: 'twice', permalink: '/f/moves/comments/twice', created_utc: NOV_2, title: 'later' }], later, SUBFORUM);
    // As a version that kept moved records twice left it: the later version's partition (and its key index) beside the first's.
    cpSync(join(later, 'forum/subforum/_date=2025-11'), join(dir, 'forum/subforum/_date=2025-11'), { recursive: true });
    // Its key index too, where the dataset keeps them (not there before key indexes: then the compaction finds the key twice itself).
    if (existsSync(join(later, META, 'keys'))) cpSync(join(later, META, 'keys/2025-11'), join(dir, META, 'keys/2025-11'), { recursive: true });
    if (older) unrecordKeyIndexes(dir);
    expect(await query(`SELECT count(*) AS rows FROM ${table(dir)}`)).toEqual([{ rows: 3 }]);
    await compactDataset(dir);
    expect(await rowsByKey(dir, key)).toEqual([
      { key: 'oct', rows: 1, title: 'stays in October' },
      { key: 'twice', rows: 1, title: 'later' },
    ]);
  });
});

describe('a dataset with undated records in _date=undated', () => {
  it('is migrated on its next open: the records go to the Hive default partition, each key once, and a record that then gets a time moves', async () => {
    const dir = freshDir();
    await toDataset([...STAYING, { id: 'undated', title: 'first' }, { id: 'stays undated', title: 'undated' }], dir, SUBFORUM);
    // As a version before Hive's default partition wrote it: the folder named undated, no key indexes, none recorded.
    const operation = join(dir, 'forum/subforum');
    renameSync(join(operation, '_date=__HIVE_DEFAULT_PARTITION__'), join(operation, '_date=undated'));
    unrecordKeyIndexes(dir);

    await toDataset([{ id: 'undated', created_utc: NOV_2, title: 'later' }], dir, SUBFORUM);
    expect(readdirSync(operation).sort()).toEqual(['_date=2025-10', '_date=2025-11', '_date=__HIVE_DEFAULT_PARTITION__']);
    expect(await query(`SELECT id, count(*) AS rows, max(title) AS title, max(_date) AS _date FROM ${table(dir)} GROUP BY id ORDER BY id`)).toEqual([
      { id: 'nov', rows: 1, title: 'stays in November', _date: '2025-11' },
      { id: 'oct', rows: 1, title: 'stays in October', _date: '2025-10' },
      { id: 'stays undated', rows: 1, title: 'undated', _date: null },
      { id: 'undated', rows: 1, title: 'later', _date: '2025-11' },
    ]);
  });
});
