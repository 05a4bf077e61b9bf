/**
 * `datasetInfo` and `compactDataset` on datasets the engine wrote against the sandbox, read back by
 * DuckDB: info says what the files hold, compaction leaves the same rows in fewer files, and a
 * compaction killed after its journal is finished by whoever opens the dataset next.
 */
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { DatasetError } from '../../src/errors.ts';
import { compactDataset, datasetInfo, LockedError, toDataset } from '../../src/export/index.ts';
import { stageCompaction } from '../../src/dataset/compact.ts';
import type { CompactionJournal } from '../../src/dataset/compaction-journal.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);
const META = '_dataset/forum__subforum';

/** Six walks: the two shards each get some (walks are shared out by the hash of their params). */
const SUBFORUMS = ['tools-a-n60', 'tools-b-n45', 'tools-c-n30', 'tools-d-n50', 'tools-e-n35', 'tools-f-n40'];

function table(dir: string): string {
  return `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
}

/** Part files as a reader's glob finds them. */
function partFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.parquet') && !name.startsWith('_dataset'));
}

/**
 * Rows of `a` that `b` lacks plus rows of `b` that `a` lacks, the partition column left out (a
 * compaction renames it), and with `refetched` the fetch time too (a later run fetched some again).
 */
async function difference(a: string, b: string, refetched = false): Promise<number> {
  const columns = refetched ? '* EXCLUDE (_date, _fetched_at)' : '* EXCLUDE (_date)';
  const [{ n }] = await query(
    `SELECT (SELECT count(*) FROM (SELECT ${columns} FROM ${table(a)} EXCEPT ALL SELECT ${columns} FROM ${table(b)})) + ` +
      `(SELECT count(*) FROM (SELECT ${columns} FROM ${table(b)} EXCEPT ALL SELECT ${columns} FROM ${table(a)})) AS n`,
  );
  return n as number;
}

async function counts(dir: string): Promise<{ rows: number; keys: number }> {
  const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM ${table(dir)}`);
  return { rows: rows as number, keys: keys as number };
}

async function columnTypes(dir: string): Promise<string[]> {
  const rows = await query(`DESCRIBE SELECT * EXCLUDE (_date) FROM ${table(dir)}`);
  return rows.map((row) => `${String(row.column_name)} ${String(row.column_type)}`);
}

let sandbox: Sandbox;
let client: Client;
/** Both shards of the six walks, partitioned by day: a part file per post-day per writer. */
let template: string;

const walks = (on: Client) => SUBFORUMS.map((subforum) => on.forum.subforum({ subforum, sort: 'new', trim: true }));

/** Both shards' runs; the first run chooses the partitioning, later ones keep what the dataset records. */
async function exportShards(on: Client, dir: string, partition?: 'day'): Promise<void> {
  for (const index of [1, 2]) await toDataset(walks(on), dir, { ...(partition === undefined ? {} : { partition }), shard: { index, count: 2 } });
}

function copy(name: string): string {
  const dir = fresh(name);
  cpSync(template, dir, { recursive: true });
  return dir;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  template = fresh('template');
  await exportShards(client, template, 'day');
}, 120_000);
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

describe('datasetInfo', () => {
  it('reports the rows, partitions, part files, writers, marks and schema the files hold', async () => {
    const info = await datasetInfo(template);
    const [operation] = info.operations;
    expect(info.operations).toHaveLength(1);
    expect(operation).toMatchObject({ operation: 'forum/subforum', format: 'parquet', partitioning: { by: 'day', column: '_date' }, compacting: false });

    const total = SUBFORUMS.reduce((sum, name) => sum + Number(/-n(\d+)$/.exec(name)![1]), 0);
    expect(await counts(template)).toEqual({ rows: total, keys: total });
    expect([info.rows, operation.rows]).toEqual([total, total]);
    expect([info.parts, operation.parts]).toEqual([partFiles(template).length, partFiles(template).length]);

    const perPartition = await query(`SELECT CAST(_date AS VARCHAR) AS name, count(*) AS rows FROM ${table(template)} GROUP BY 1 ORDER BY 1`);
    expect(operation.partitions.map(({ name, rows }) => ({ name, rows }))).toEqual(perPartition);

    // Both shards wrote into the same parts: one a partition (one bucket), no writer's own.
    expect(partFiles(template).every((file) => file.endsWith('/part-b0-of-1.parquet'))).toBe(true);
    expect(operation.parts).toBe(operation.partitions.length);
    expect(operation.writers.map((writer) => writer.name)).toEqual(['shard-1-of-2', 'shard-2-of-2']);
    expect(operation.writers.every((writer) => writer.parts === 0)).toBe(true);

    const marks = operation.marks;
    expect(marks.map((mark) => mark.params.subforum).sort()).toEqual([...SUBFORUMS].sort());
    const [{ newest }] = await query(`SELECT max(created_utc) AS newest FROM ${table(template)}`);
    expect(Math.max(...marks.map((mark) => mark.mark))).toBe((newest as number) * 1000);

    // `_extra` is the overflow column every part has, for values no column holds; it is no schema column.
    const described = await query(`DESCRIBE SELECT * EXCLUDE (_date, _extra) FROM ${table(template)}`);
    expect(operation.schema.map((column) => column.name)).toEqual(described.map((row) => row.column_name));
    expect(operation.writers.every((writer) => writer.staged === undefined && writer.running === undefined)).toBe(true);
  });

  it('shows an unfinished run as staged, with its walks, pages and credits', async () => {
    const dir = fresh('unfinished');
    const summary = await toDataset(client.forum.subforum({ subforum: 'tools-partial-n100', sort: 'new', trim: true }), dir, { maxPages: 1 });
    expect(summary.complete).toBe(false);
    const [operation] = (await datasetInfo(dir)).operations;
    expect(operation.rows).toBe(25);
    expect(operation.writers.map((writer) => writer.name)).toEqual(['all']);
    expect(operation.writers[0].staged).toMatchObject({ walks: { done: 0, total: 1 }, pages: 1, credits: 1, publishing: false });
  });

  it('renders itself in Jupyter, every value from the platform escaped', async () => {
    const dir = fresh('display');
    await toDataset(client.forum.subforum({ subforum: '<img src=x onerror=alert(1)>-n5', sort: 'new', trim: true }), dir);
    const info = await datasetInfo(dir);
    const bundle = (info as unknown as Record<symbol, () => Record<string, string>>)[Symbol.for('Jupyter.display')]();
    expect(bundle['text/plain']).toContain('forum/subforum: 5 rows');
    expect(bundle['text/plain']).toContain('<img src=x onerror=alert(1)>-n5');
    expect(bundle['text/html']).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(bundle['text/html']).not.toContain('<img');
    // The display is no field of the data: JSON has the same keys with or without it.
    expect(Object.keys(JSON.parse(JSON.stringify(info)) as object).sort()).toEqual(['bytes', 'dir', 'operations', 'parts', 'rows']);
  });

  it('refuses a directory that holds no dataset', async () => {
    const dir = fresh('empty');
    mkdirSync(dir);
    await expect(datasetInfo(dir)).rejects.toThrow(/is not a dataset/);
  });
});

describe('compactDataset', () => {
  it('merges a dataset by day into one part a month per writer, leaving the same rows and types', async () => {
    const dir = copy('by-month');
    const summary = await compactDataset(dir, { partition: 'month' });
    expect(summary.operations[0]).toMatchObject({ partitioning: { before: 'day', after: 'month' }, rows: 260, recovered: false });
    expect(await difference(template, dir)).toBe(0);
    expect(await counts(dir)).toEqual(await counts(template));
    expect(await columnTypes(dir)).toEqual(await columnTypes(template));
    expect(partFiles(dir).length).toBe(summary.operations[0].parts.after);
    expect(partFiles(dir).length).toBeLessThan(partFiles(template).length / 2);
    const [{ misplaced }] = await query(`SELECT count(*) AS misplaced FROM ${table(dir)} WHERE CAST(_date AS VARCHAR) <> strftime(to_timestamp(created_utc), '%Y-%m')`);
    expect(misplaced).toBe(0);
    expect((await datasetInfo(dir)).operations[0].partitioning.by).toBe('month');
    expect(existsSync(join(dir, META, 'compact.json')) || existsSync(join(dir, META, 'compact'))).toBe(false);
  });

  it("merges every writer's rows into the partition's one bucket part", async () => {
    const dir = copy('writers');
    await compactDataset(dir, { partition: 'year' });
    const perFolder = new Map<string, string[]>();
    for (const file of partFiles(dir)) perFolder.set(dirname(file), [...(perFolder.get(dirname(file)) ?? []), file.slice(dirname(file).length + 1)]);
    for (const names of perFolder.values()) expect(names).toEqual(['part-b0-of-1.parquet']);
    expect(await difference(template, dir)).toBe(0);
  });

  it('has nothing to do when the partitioning stays, and refuses to split partitions', async () => {
    const dir = copy('unchanged');
    const summary = await compactDataset(dir);
    expect(summary.operations[0]).toMatchObject({ rows: 0, parts: { before: partFiles(template).length, after: partFiles(template).length } });
    await compactDataset(dir, { partition: 'month' });
    await expect(compactDataset(dir, { partition: 'day' })).rejects.toBeInstanceOf(DatasetError);
    expect(await difference(template, dir)).toBe(0);
  });

  it('is kept by later runs: they merge into the month parts, buying only new pages, with no duplicates', async () => {
    // A sandbox of its own: it grows, and the same seed serves the same records the template holds.
    const growing = await startSandbox({ port: 0 });
    const own = createClient({ apiKey: growing.apiKey, baseUrl: growing.url });
    try {
      const dir = copy('later-runs');
      await compactDataset(dir, { partition: 'month' });
      growing.advance({ records: 30 });
      const before = growing.requests.charged[growing.apiKey] ?? 0;
      await exportShards(own, dir);
      // 30 new posts a walk in a page of 25: two new pages and the one reaching the mark at most, per walk.
      expect((growing.requests.charged[growing.apiKey] ?? 0) - before).toBeLessThanOrEqual(SUBFORUMS.length * 3);
      expect(await counts(dir)).toEqual({ rows: 260 + 6 * 30, keys: 260 + 6 * 30 });
      expect(partFiles(dir).every((file) => /_date=\d{4}-\d{2}\//.test(file))).toBe(true);
      const [{ misplaced }] = await query(`SELECT count(*) AS misplaced FROM ${table(dir)} WHERE CAST(_date AS VARCHAR) <> strftime(to_timestamp(created_utc), '%Y-%m')`);
      expect(misplaced).toBe(0);
    } finally {
      await own.close();
      await growing.close();
    }
  });

  it('killed after its journal, mid-rename, is finished by the next export, and every record reads once', async () => {
    const dir = copy('killed-export');
    await stageCompaction(dir, { partition: 'month' });
    const journal = JSON.parse(readFileSync(join(dir, META, 'compact.json'), 'utf8')) as CompactionJournal;
    expect(journal.renames.length).toBeGreaterThan(2);
    // The kill came after the first rename: that month's rows are in its new part and in its old ones.
    const [from, to] = journal.renames[0];
    mkdirSync(dirname(join(dir, to)), { recursive: true });
    renameSync(join(dir, from), join(dir, to));
    expect((await counts(dir)).rows).toBeGreaterThan(260);

    await toDataset(walks(client), dir, { shard: { index: 1, count: 2 } });
    expect(await counts(dir)).toEqual({ rows: 260, keys: 260 });
    expect(await difference(template, dir, true)).toBe(0);
    expect(partFiles(dir).every((file) => /_date=\d{4}-\d{2}\//.test(file))).toBe(true);
    expect(existsSync(join(dir, META, 'compact.json'))).toBe(false);
  });

  it('killed after its journal is finished by the next compaction', async () => {
    const dir = copy('killed-compact');
    await stageCompaction(dir, { partition: 'month' });
    expect((await datasetInfo(dir)).operations[0].compacting).toBe(true);
    const summary = await compactDataset(dir);
    expect(summary.operations[0]).toMatchObject({ recovered: true, partitioning: { before: 'month', after: 'month' } });
    expect(await counts(dir)).toEqual({ rows: 260, keys: 260 });
    expect(await difference(template, dir)).toBe(0);
    expect((await datasetInfo(dir)).operations[0].compacting).toBe(false);
  });

  it('is refused with LOCKED while an export writes the dataset, which goes on unharmed', async () => {
    const slow = await startSandbox({ port: 0, latencyMs: 150 });
    const own = createClient({ apiKey: slow.apiKey, baseUrl: slow.url });
    try {
      const dir = copy('locked');
      slow.advance({ records: 100 });
      const running = toDataset(walks(own), dir, { shard: { index: 1, count: 2 } });
      const lock = join(dir, META, 'writer-shard-1-of-2.lock');
      while (!existsSync(lock)) await new Promise((resolve) => setTimeout(resolve, 5));
      const refusal = await compactDataset(dir, { partition: 'month' }).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(LockedError);
      expect((refusal as LockedError).code).toBe('LOCKED');
      expect((await running).complete).toBe(true);
      // Nothing of the refused compaction stayed: still by day, and the next compaction runs.
      expect((await datasetInfo(dir)).operations[0].partitioning.by).toBe('day');
      expect((await compactDataset(dir, { partition: 'month' })).operations[0].rows).toBeGreaterThan(260);
      const { rows, keys } = await counts(dir);
      expect(rows).toBe(keys);
    } finally {
      await own.close();
      await slow.close();
    }
  });
});
