/**
 * The bucket layout (issue 28, items 1, 2, 4, 5 and 6; docs/datasets.md "Part files"): part files bounded
 * by the dataset, not its writers; every key once whichever writer found it, the latest fetch kept;
 * parts that split past their size, and what a reader sees of a split killed -9 half way (every row,
 * some twice, until the next run finishes it); and datasets of per-writer parts migrated on their
 * first open or by `dataset compact`, without losing or doubling a row. Read back by DuckDB.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatasetError } from '../../src/index.ts';
import { compactDataset, datasetInfo, type ExportLocks } from '../../src/export/index.ts';
import { bucketFor, fetchedLater, keyHash } from '../../src/dataset/buckets.ts';
import { readPart, writePart, type DatasetFormat, type PartSchema } from '../../src/dataset/parts.ts';
import type { SchemaColumn } from '../../src/dataset/schema.ts';
import { closeServed, recordsIntoDataset as toDataset } from './helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { PART_PLACED } from '../helpers/kill-at-rename.ts';

afterAll(closeServed);

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `layout-${++counter}`);
const META = '_dataset/forum__subforum';
const EXT: Record<DatasetFormat, string> = { parquet: 'parquet', ndjson: 'ndjson', csv: 'csv' };

function table(dir: string, format: DatasetFormat = 'parquet'): string {
  const glob = sqlPath(`${dir}/forum/subforum/**/*.${EXT[format]}`);
  return format === 'parquet' ? `read_parquet(${glob}, hive_partitioning = true, union_by_name = true, filename = true)` : `read_json_auto(${glob}, hive_partitioning = true, union_by_name = true, filename = true)`;
}

/** Part files as a reader's glob finds them, relative to the operation's folder. */
function partFiles(dir: string): string[] {
  return (readdirSync(join(dir, 'forum/subforum'), { recursive: true }) as string[]).filter((name) => /\.(parquet|ndjson|csv)$/.test(name)).sort();
}

/** Posts of one month (2024-03), `title` telling versions apart; bodies of hex that compresses little. */
function posts(from: number, count: number, title: string): object[] {
  const body = (n: number) => createHash('sha256').update(String(n)).digest('hex').repeat(4);
  return Array.from({ length: count }, (_, i) => ({ id: `p${from + i}`, created_utc: 1_709_251_200 + (from + i) * 600, title: `${title} ${from + i}`, body: body(from + i) }));
}

async function counts(dir: string, format: DatasetFormat = 'parquet'): Promise<{ rows: number; keys: number }> {
  const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM ${table(dir, format)}`);
  return { rows: rows as number, keys: keys as number };
}

async function titles(dir: string, format: DatasetFormat = 'parquet'): Promise<Map<string, string>> {
  const rows = await query(`SELECT id, title FROM ${table(dir, format)}`);
  return new Map(rows.map((row) => [String(row.id), String(row.title)]));
}

describe('the bucket layout', () => {
  it('merges every writer into the same part of a partition: a key twice is one row, the later fetch kept', async () => {
    const dir = freshDir();
    await toDataset(posts(0, 40, 'first'), dir, { params: { subforum: 'a' }, writer: 'walk-a' });
    // Another walk, another writer, the same keys and more: fetched later, so its version stays.
    const second = await toDataset(posts(20, 40, 'second'), dir, { params: { subforum: 'b' }, writer: 'walk-b' });
    expect([second.added, second.updated]).toEqual([20, 20]);
    expect(partFiles(dir)).toEqual(['_date=2024-03/part-b0-of-1.parquet']);
    expect(await counts(dir)).toEqual({ rows: 60, keys: 60 });
    const held = await titles(dir);
    expect([held.get('p19'), held.get('p20'), held.get('p59')]).toEqual(['first 19', 'second 20', 'second 59']);
  });

  it('keeps the version fetched last, not the one published last', async () => {
    const dir = freshDir();
    await toDataset(posts(0, 10, 'old'), dir, { params: { subforum: 'a' } });
    // p3 as a machine that fetched it later (year 2999, by the fetch clock) but published first left it.
    const part = join(dir, 'forum/subforum/_date=2024-03/part-b0-of-1.parquet');
    const rows: Record<string, unknown>[] = [];
    for await (const row of readPart(part, 'parquet', new Set())) rows.push(row.id === 'p3' ? { ...row, title: 'fetched later', _fetched_at: '2999-01-01T00:00:00.000000Z' } : row);
    await writePart(rows, `${part}.tmp`, JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as PartSchema);
    renameSync(`${part}.tmp`, part);

    const later = await toDataset(posts(0, 10, 'published later'), dir, { params: { subforum: 'a' } });
    expect(later.updated).toBe(9);
    const held = await titles(dir);
    expect([held.get('p3'), held.get('p4')]).toEqual(['fetched later', 'published later 4']);
    expect(await counts(dir)).toEqual({ rows: 10, keys: 10 });
  });

  it('breaks a tie of fetch times by the versions themselves, whichever comes first', () => {
    const a = { id: 'p1', title: 'a', _fetched_at: '2025-01-01T00:00:00.000Z' };
    const b = { title: 'b', id: 'p1', _fetched_at: '2025-01-01T00:00:00.000Z' };
    expect(fetchedLater(a, b)).toBe(!fetchedLater(b, a));
    expect(fetchedLater(b, a)).toBe(true);
    expect(fetchedLater({ ...a, _fetched_at: '2025-01-01T00:00:00.001Z' }, b)).toBe(true);
    // A row without a fetch time (written before it was recorded) is older than any with one.
    expect(fetchedLater({ id: 'p1', title: 'z' }, a)).toBe(false);
  });

  it('gives a key whose half of a split was never written a part that overlaps no other', () => {
    // b0 of 1 split into b0 and b1 of 2, then b1 of 2 into b1 and b3 of 4, of which only b1 of 4 holds rows.
    const parts = [
      { bucket: 0, of: 2 },
      { bucket: 1, of: 4 },
    ];
    const owner = (hash: number) => bucketFor(parts, hash, 1);
    expect(owner(6)).toEqual({ bucket: 0, of: 2 });
    expect(owner(5)).toEqual({ bucket: 1, of: 4 });
    // 7 mod 4 = 3: nobody holds it; a part of its own, b3 of 4, which no part overlaps.
    expect(owner(7)).toEqual({ bucket: 3, of: 4 });
    expect(bucketFor([], 7, 4)).toEqual({ bucket: 3, of: 4 });
  });

  it('splits a part written past splitBytes in two, by key hash, and later runs merge into the halves', async () => {
    const dir = freshDir();
    await toDataset(posts(0, 300, 'v1'), dir, { params: { subforum: 'a' }, bucketing: { splitBytes: 8_000 } });
    const files = partFiles(dir);
    expect(files.length).toBeGreaterThan(2);
    // Each row is in the one part whose bucket its key hashes to.
    for (const row of await query(`SELECT id, filename FROM ${table(dir)}`)) {
      const [, bucket, of] = /part-b(\d+)-of-(\d+)\.parquet$/.exec(String(row.filename))!.map(Number);
      expect(keyHash(String(row.id)) % of).toBe(bucket);
    }
    const second = await toDataset(posts(150, 200, 'v2'), dir, { params: { subforum: 'a' } });
    expect([second.added, second.updated]).toEqual([50, 150]);
    expect(await counts(dir)).toEqual({ rows: 350, keys: 350 });
    expect((await titles(dir)).get('p200')).toBe('v2 200');
    const recorded = JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as { layout: unknown };
    expect(recorded.layout).toEqual({ buckets: 1, splitBytes: 8_000 });
  });

  it('killed -9 between the renames of a split, shows a reader every row it had (one the new part holds too, twice), and the next run finishes it', async () => {
    const dir = freshDir();
    const before = await toDataset(posts(0, 10, 'v1'), dir, { params: { subforum: 'a' }, bucketing: { splitBytes: 8_000 } });
    expect(before.added).toBe(10);
    expect(partFiles(dir)).toEqual(['_date=2024-03/part-b0-of-1.parquet']);
    // Another walk merges 300 posts into that part: far past 8,000 bytes, so it splits, and is killed after its first new part is in place.
    const input = join(root, `killed-split-${counter}`);
    writeFileSync(`${input}.records.json`, JSON.stringify(posts(0, 300, 'v2')));
    writeFileSync(`${input}.options.json`, JSON.stringify({ params: { subforum: 'b' }, writer: 'walk-b' }));
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'helpers/records-killed-at.ts'), 'before', PART_PLACED, '2', `${input}.records.json`, dir, `${input}.options.json`], { encoding: 'utf8' });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    const window = partFiles(dir);
    expect(window).toContain('_date=2024-03/part-b0-of-1.parquet');
    expect(window.length).toBe(2);
    const [, bucket, of] = /part-b(\d+)-of-(\d+)\.parquet$/.exec(window.find((file) => !file.endsWith('part-b0-of-1.parquet'))!)!.map(Number);
    const inNewPart = (id: string) => keyHash(id) % of === bucket;

    // What docs/datasets.md documents for that moment: no row missing; an old row whose key the new part holds is seen twice.
    const seen = new Map((await query(`SELECT id, count(*) AS times FROM ${table(dir)} GROUP BY id`)).map((row) => [String(row.id), Number(row.times)]));
    for (let i = 0; i < 10; i++) expect(seen.get(`p${i}`)).toBe(inNewPart(`p${i}`) ? 2 : 1);
    for (const [id, times] of seen) if (Number(id.slice(1)) >= 10) expect([id, times, inNewPart(id)]).toEqual([id, 1, true]);

    // The next run's pass finishes the killed one from its journal, then publishes its own.
    await toDataset(posts(300, 1, 'v3'), dir, { params: { subforum: 'c' }, writer: 'walk-c' });
    expect(await counts(dir)).toEqual({ rows: 301, keys: 301 });
    const after = partFiles(dir);
    expect(after).not.toContain('_date=2024-03/part-b0-of-1.parquet');
    expect(after.length).toBeGreaterThan(2);
    const versions = await titles(dir);
    for (let i = 0; i < 300; i++) expect(versions.get(`p${i}`)).toBe(`v2 ${i}`);
    for (const row of await query(`SELECT id, filename FROM ${table(dir)}`)) {
      const [, bucket, of] = /part-b(\d+)-of-(\d+)\.parquet$/.exec(String(row.filename))!.map(Number);
      expect(keyHash(String(row.id)) % of).toBe(bucket);
    }
    expect(readdirSync(join(dir, META, 'publishing'))).toEqual([]);
  });

  it('refuses a run without the queue on a dataset written through one: its leases are the one lock', async () => {
    const dir = freshDir();
    const held = new Set<string>();
    const locks: ExportLocks = {
      output: (_output, path) => {
        held.add(path);
        return Promise.resolve({ release: () => Promise.resolve(void held.delete(path)) });
      },
      publish: (_path, fn) => fn(),
    };
    await toDataset(posts(0, 5, 'queued'), dir, { params: { subforum: 'a' }, locks });
    const refusal = await toDataset(posts(0, 5, 'local'), dir, { params: { subforum: 'a' } }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DatasetError);
    expect((refusal as Error).message).toMatch(/is locked with Redis leases \(written through a queue, or with --locks\).*export into it with --locks redis:\/\/… \(the same Redis\) or through the queue \(--queue\)/);
    await expect(compactDataset(dir)).rejects.toThrow(/written through a queue/);
    expect((await titles(dir)).get('p1')).toBe('queued 1');
  });
});

/**
 * A dataset as versions before buckets left it: `part-<writer>` files per partition (here two
 * writers holding 20 keys alike, the second written later), marks in the writers' files, no layout.
 */
async function legacyDataset(format: DatasetFormat): Promise<{ dir: string; walk: Record<string, string> }> {
  const dir = freshDir();
  const other = freshDir();
  // Datasets before buckets were flat: they recorded no Parquet layout.
  const flat = format === 'parquet' ? { layout: 'flat' as const } : {};
  await toDataset(posts(0, 40, 'writer one'), dir, { params: { subforum: 'legacy' }, format, ...flat });
  await toDataset(posts(20, 40, 'writer two'), other, { params: { subforum: 'legacy-two' }, format, ...flat });
  const folder = join(dir, 'forum/subforum/_date=2024-03');
  const schemaPath = join(dir, META, 'schema.json');
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as { columns: SchemaColumn[]; layout?: unknown };
  const columns = schema.columns.filter((column) => column.name !== '_fetched_at');
  const writers: [string, string, number][] = [
    [join(folder, `part-b0-of-1.${EXT[format]}`), join(folder, `part-walk-1234.${EXT[format]}`), 1_700_000_000],
    [join(other, `forum/subforum/_date=2024-03/part-b0-of-1.${EXT[format]}`), join(folder, `part-shard-1-of-2.${EXT[format]}`), 1_700_000_100],
  ];
  for (const [from, to, mtime] of writers) {
    const rows: Record<string, unknown>[] = [];
    for await (const { _fetched_at: _, ...row } of readPart(from, format, new Set())) rows.push(row);
    await writePart(rows, `${to}.tmp`, { format, columns });
    rmSync(from);
    renameSync(`${to}.tmp`, to);
    utimesSync(to, mtime, mtime);
  }
  writeFileSync(schemaPath, JSON.stringify({ ...schema, columns, layout: undefined, parquetLayout: undefined, shards: 2 }));
  const walks = join(dir, META, 'walks');
  const [name] = readdirSync(walks);
  const mark = JSON.parse(readFileSync(join(walks, name), 'utf8')) as { params: Record<string, string>; mark: number; markTime: string };
  rmSync(walks, { recursive: true });
  writeFileSync(join(dir, META, 'state-walk-1234.json'), JSON.stringify({ version: 1, operation: 'forum/subforum', walks: { [name.slice(0, -5)]: { params: mark.params, mark: mark.mark, markTime: mark.markTime } } }));
  return { dir, walk: mark.params };
}

describe('a dataset of per-writer parts', () => {
  it.each(['parquet', 'ndjson'] as const)('is migrated to buckets on its first open by this version, each key once, the later-written version kept (%s)', async (format) => {
    const { dir } = await legacyDataset(format);
    expect(await counts(dir, format)).toEqual({ rows: 80, keys: 60 });
    const copy = freshDir();
    cpSync(dir, copy, { recursive: true });

    const run = await toDataset(posts(60, 5, 'new'), dir, { params: { subforum: 'fresh' } });
    expect(run.added).toBe(5);
    expect(partFiles(dir)).toEqual([`_date=2024-03/part-b0-of-1.${EXT[format]}`]);
    expect(await counts(dir, format)).toEqual({ rows: 65, keys: 65 });
    const held = await titles(dir, format);
    expect([held.get('p0'), held.get('p20'), held.get('p59'), held.get('p60')]).toEqual(['writer one 0', 'writer two 20', 'writer two 59', 'new 60']);
    const schema = JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as { format: string; layout: unknown };
    expect(schema).toMatchObject({ format, layout: { buckets: 1 } });
    // The writer's marks became the walk's own state.
    const info = await datasetInfo(dir);
    expect(info.operations[0].marks.map((mark) => mark.params.subforum).sort()).toEqual(['fresh', 'legacy']);

    // `dataset compact` migrates it the same way.
    const compacted = await compactDataset(copy);
    expect(compacted.operations[0]).toMatchObject({ parts: { before: 2, after: 1 }, writers: ['shard-1-of-2', 'walk-1234'] });
    expect(await counts(copy, format)).toEqual({ rows: 60, keys: 60 });
    expect((await titles(copy, format)).get('p25')).toBe('writer two 25');
  });

  it("whose writer's file holds a mark that is not a number is refused on its first open, naming that file, before the migration moves a part", async () => {
    const { dir } = await legacyDataset('parquet');
    const state = join(dir, META, 'state-walk-1234.json');
    const file = JSON.parse(readFileSync(state, 'utf8')) as { walks: Record<string, { mark: unknown }> };
    for (const walk of Object.values(file.walks)) walk.mark = 'soon';
    writeFileSync(state, JSON.stringify(file));
    const parts = partFiles(dir);
    const refusal = await toDataset(posts(60, 5, 'new'), dir, { params: { subforum: 'fresh' } }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'STATE_DAMAGED', path: state });
    expect((refusal as Error).message).toMatch(/\.mark is "soon", not a number; delete it: the next run walks in full every parameter set whose mark only it held/);
    await expect(compactDataset(dir)).rejects.toMatchObject({ code: 'STATE_DAMAGED', path: state });
    expect(partFiles(dir)).toEqual(parts);
    expect(await counts(dir)).toEqual({ rows: 80, keys: 60 });
  });

  it('tells in dataset info that many small parts slow readers, and what to run', async () => {
    const dir = freshDir();
    await toDataset(posts(0, 10, 'x'), dir, { params: { subforum: 'a' } });
    const folder = join(dir, 'forum/subforum/_date=2024-03');
    for (let i = 0; i < 120; i++) cpSync(join(folder, 'part-b0-of-1.parquet'), join(folder, `part-walk-${i}.parquet`));
    const [operation] = (await datasetInfo(dir)).operations;
    expect(operation.smallFiles).toMatch(/^121 part files of .* on average slow every reader .*120 parts of writers before the bucket layout: `socialstream dataset compact /);
  });
});
