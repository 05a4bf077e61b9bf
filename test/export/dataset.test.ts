/**
 * `toDataset` against a growing sandbox, read back by DuckDB as one table. Each run's purchases are
 * counted on the sandbox's side (its charged counter), never on the client's word.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, HeldStateError, SchemaDriftError, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { toDataset } from '../../src/export/index.ts';
import { closeServed, recordsIntoDataset } from './helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

afterAll(closeServed);

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `ds-${++counter}`);

function table(dir: string, ext = 'parquet'): string {
  const reader = ext === 'parquet' ? 'read_parquet' : ext === 'csv' ? 'read_csv' : 'read_json';
  const extra = ext === 'csv' ? ', all_varchar = true' : '';
  return `${reader}(${sqlPath(`${dir}/**/*.${ext}`)}, hive_partitioning = true, union_by_name = true${extra})`;
}

/** Column → the types it has in the part files, so a type that differs between parts shows. */
async function typesPerPart(dir: string): Promise<Map<string, Set<string>>> {
  const rows = await query(
    `SELECT name, type, converted_type FROM parquet_schema(${sqlPath(`${dir}/**/*.parquet`)}) WHERE num_children IS NULL`,
  );
  const types = new Map<string, Set<string>>();
  for (const row of rows) {
    const name = String(row.name);
    if (!types.has(name)) types.set(name, new Set());
    types.get(name)!.add(`${String(row.type)}/${String(row.converted_type)}`);
  }
  return types;
}

describe('toDataset against a growing sandbox resource', () => {
  let sandbox: Sandbox;
  let client: Client;
  // A sandbox per test: `advance` grows every resource, so one test's growth must not reach another.
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0 });
    client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  });
  afterEach(async () => {
    await sandbox?.close();
  });
  const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

  it('buys only the new pages plus at most one on later runs, and holds every record once with its latest values', async () => {
    const dir = freshDir();
    const params = { subforum: 'three-runs-n240', sort: 'new', trim: true } as const;
    const bought: number[] = [];
    for (const added of [0, 30, 60]) {
      sandbox.advance({ records: added });
      const before = charged();
      const summary = await toDataset(client.forum.subforum(params), dir);
      bought.push(charged() - before);
      expect(summary.complete).toBe(true);
    }
    // 25 posts a page: 240 posts are 10 pages; 30 new posts fill 2 pages (+1 reaching the mark at most); 60 fill 3.
    expect(bought[0]).toBe(10);
    expect(bought[1]).toBeLessThanOrEqual(2 + 1);
    expect(bought[2]).toBeLessThanOrEqual(3 + 1);

    const truth = new Map<string, number>();
    for await (const post of client.forum.subforum(params)) truth.set(post.id, post.score);
    const rows = await query(`SELECT id, score FROM ${table(dir)}`);
    expect(rows).toHaveLength(truth.size);
    expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
    // Records of the pages a run bought carry that run's values; the rest keep what they had when last bought.
    const newest = await query(`SELECT id, score FROM ${table(dir)} ORDER BY created_utc DESC LIMIT 60`);
    for (const row of newest) expect(row.score).toBe(truth.get(String(row.id)));
  });

  it('partitions by each record own time, and every part types a column alike', async () => {
    const dir = freshDir();
    const params = { subforum: 'partitions-n40', sort: 'new' } as const;
    await toDataset(client.forum.subforum(params), dir);
    sandbox.advance({ records: 10 });
    await toDataset(client.forum.subforum(params), dir);
    const [{ wrong }] = await query(`SELECT count(*) AS wrong FROM ${table(dir)} WHERE CAST(_date AS VARCHAR) <> strftime(to_timestamp(created_utc), '%Y-%m')`);
    expect(wrong).toBe(0);
    const types = await typesPerPart(dir);
    expect(types.size).toBeGreaterThan(20);
    for (const [column, kinds] of types) expect([column, [...kinds]]).toEqual([column, [...kinds].slice(0, 1)]);
  });

  it('walks a walk that is not newest first fully again, and merges it without duplicates', async () => {
    const dir = freshDir();
    const params = { subforum: 'hot-n75', trim: true } as const;
    await toDataset(client.forum.subforum(params), dir);
    sandbox.advance({ records: 5 });
    const before = charged();
    const summary = await toDataset(client.forum.subforum(params), dir);
    expect(charged() - before).toBe(4);
    expect(summary.dataset?.stoppedAtMark).toBe(0);
    const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM ${table(dir)}`);
    expect([rows, keys]).toEqual([80, 80]);
  });

  it.each(['ndjson', 'csv'] as const)('writes %s part files that merge by key', async (format) => {
    const dir = freshDir();
    const params = { subforum: `fmt-${format}-n40`, sort: 'new', trim: true } as const;
    await toDataset(client.forum.subforum(params), dir, { format });
    sandbox.advance({ records: 3 });
    await toDataset(client.forum.subforum(params), dir, { format });
    const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM ${table(dir, format)}`);
    expect([rows, keys]).toEqual([43, 43]);
  });

  it('refuses to add parts of another format to a dataset', async () => {
    const dir = freshDir();
    await toDataset(client.forum.subforum({ subforum: 'mixed-n5' }), dir);
    await expect(toDataset(client.forum.subforum({ subforum: 'mixed-n5' }), dir, { format: 'csv' })).rejects.toThrow(/as parquet part files/);
  });

  it('stops a frozen run at the first drifting page, before buying another, and publishes nothing', async () => {
    const dir = freshDir();
    await toDataset(client.forum.subforum({ subforum: 'frozen-n200', trim: true }), dir);
    const before = charged();
    const run = toDataset(client.forum.subforum({ subforum: 'frozen-n200' }), dir, { schema: 'freeze' });
    const error = await run.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SchemaDriftError);
    expect((error as SchemaDriftError).drift.added.map((added) => added.column)).toContain('upvote_ratio');
    expect(charged() - before).toBe(1);
    const [{ rows }] = await query(`SELECT count(*) AS rows FROM ${table(dir)}`);
    expect(rows).toBe(200);
    const report = JSON.parse(readFileSync(join(dir, '_dataset/forum__subforum/drift-all.json'), 'utf8')) as { frozen: boolean };
    expect(report.frozen).toBe(true);
    expect(existsSync(join(dir, '_dataset/forum__subforum/staging-all'))).toBe(false);
  });
});

describe('toDataset when the balance runs out', () => {
  it('publishes the pages received, keeps the mark where it was, and a resume continues the walk', async () => {
    const apiKey = 'sk_live_sandbox_three';
    const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey, credits: 3 }] });
    try {
      const client = createClient({ apiKey, baseUrl: sandbox.url, retry: { retries: 0 } });
      const dir = freshDir();
      const params = { subforum: 'dry-n200', sort: 'new', trim: true } as const;
      const first = await toDataset(client.forum.subforum(params), dir);
      expect(first).toMatchObject({ complete: false, stoppedBy: 'balance', balance: { available: 0 } });
      const [{ rows }] = await query(`SELECT count(*) AS rows FROM ${table(dir)}`);
      expect(rows).toBe(75);
      // The walk did not complete, so no mark moved; without resume the staged walk is not silently dropped.
      sandbox.purchase(apiKey, 100);
      await expect(toDataset(client.forum.subforum(params), dir)).rejects.toBeInstanceOf(HeldStateError);
      const summary = await toDataset(client.forum.subforum(params), dir, { resume: true });
      expect(summary).toMatchObject({ complete: true, pages: 5, resumed: true });
      expect(sandbox.requests.charged[apiKey]).toBe(8);
      const [{ total }] = await query(`SELECT count(DISTINCT id) AS total FROM ${table(dir)}`);
      expect(total).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});

describe('toDataset CSV parts', () => {
  it("keeps a record's own field named _extra inside the overflow column, under its own path, as a Parquet dataset does", async () => {
    const dir = freshDir();
    const options = { operation: 'forum/subforum', params: { subforum: 'csv-extra' }, format: 'csv' } as const;
    await recordsIntoDataset([{ id: 'a', created_utc: 1_700_000_000 }], dir, options);
    await recordsIntoDataset([{ id: 'b', created_utc: 1_700_000_100, _extra: 'theirs' }], dir, options);
    expect(await query(`SELECT id, _extra FROM ${table(dir, 'csv')} ORDER BY id`)).toEqual([
      { id: 'a', _extra: null },
      { id: 'b', _extra: '{"_extra":"theirs"}' },
    ]);
  });
});

describe('toDataset record times', () => {
  it('files a record whose time no date can hold in the Hive default partition (_date NULL), beside one that reads', async () => {
    const dir = freshDir();
    const records = [
      { id: 'far', created_utc: 1e15 },
      { id: 'near', created_utc: 1_700_000_000 },
    ];
    const summary = await recordsIntoDataset(records, dir, { operation: 'forum/subforum', params: { subforum: 'times' } });
    expect(summary.added).toBe(2);
    const rows = await query(`SELECT id, _date FROM ${table(dir)} ORDER BY id`);
    expect(rows).toEqual([
      { id: 'far', _date: null },
      { id: 'near', _date: '2023-11' },
    ]);
  });
});

describe('toDataset schema drift', () => {
  const post = (id: string, fields: Record<string, unknown>) => ({ id, created_utc: 1_763_700_000, title: `post ${id}`, ...fields });

  it('reports a field added and a type widened between runs, in the summary and in a file', async () => {
    const dir = freshDir();
    const options = { operation: 'forum/subforum', params: { subforum: 'drift' } } as const;
    await recordsIntoDataset([post('a', { score: 1 }), post('b', { score: 2 })], dir, options);
    const summary = await recordsIntoDataset([post('c', { score: 'high', flair: 'news' })], dir, options);
    expect(summary.drift).toEqual({
      added: [{ column: 'flair', kind: 'string' }],
      missing: [],
      conflicting: [],
      widened: [{ column: 'score', from: 'integer', to: 'string' }],
    });
    const file = JSON.parse(readFileSync(join(dir, '_dataset/forum__subforum/drift-all.json'), 'utf8')) as { drift: unknown };
    expect(file.drift).toEqual(summary.drift);
  });

  it('keeps a conflicting value in _extra and the column type of every part', async () => {
    const dir = freshDir();
    const options = { operation: 'forum/subforum', params: { subforum: 'drift' } } as const;
    await recordsIntoDataset([post('a', { score: 1 })], dir, options);
    // Another day: another part file, written with the recorded schema.
    await recordsIntoDataset([{ ...post('c', { score: true }), created_utc: 1_763_000_000 }], dir, options);
    const rows = await query(`SELECT id, score, _extra FROM ${table(dir)} ORDER BY id`);
    expect(rows).toEqual([
      { id: 'a', score: 1, _extra: null },
      { id: 'c', score: null, _extra: '{"score":true}' },
    ]);
    expect([...(await typesPerPart(dir)).get('score')!]).toEqual(['INT64/null']);
  });

  it('reports recorded fields no record carried as missing', async () => {
    const dir = freshDir();
    const options = { operation: 'forum/subforum', params: { subforum: 'drift' } } as const;
    await recordsIntoDataset([post('a', { score: 1, flair: 'x' })], dir, options);
    const summary = await recordsIntoDataset([post('b', { score: 2 })], dir, options);
    expect(summary.drift.missing).toEqual(['flair']);
  });
});
