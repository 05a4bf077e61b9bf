/**
 * Dataset state that is valid JSON but wrong (`_dataset/<op>/schema.json`, `state-<writer>.json`, a
 * walk's `walks/<walk>.json`, the journals and commits a kill left) and
 * part files cut short, as a careless edit or an unlucky disk leaves them: `export --dataset`,
 * `dataset info` and `dataset compact` as subprocesses refuse with STATE_DAMAGED (exit 2) naming the
 * file and a remedy, before any request; DuckDB still reads every record.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { runCli, sandboxEnv, tempDir, type CliResult } from './helpers.ts';

const META = '_dataset/forum__subforum';
const PARAMS = ['subforum=state-n1000', 'sort=new', 'trim=true'];

let sandbox: Sandbox;
/** 1,000 posts by month, as `export --dataset` wrote them. */
let template: string;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  template = join(tempDir(), 'ds');
  const run = await runCli(exportArgs(template), sandboxEnv(sandbox));
  expect(run.code, run.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await sandbox.close();
});

function exportArgs(dir: string): string[] {
  return ['export', 'forum/subforum', ...PARAMS, '--dataset', dir];
}

function copy(): string {
  const dir = join(tempDir(), 'ds');
  cpSync(template, dir, { recursive: true });
  return dir;
}

function table(dir: string): string {
  return `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
}

/** Rows, distinct ids, and rows whose id is in its column (not moved to `_extra`), as DuckDB reads them. */
async function counts(dir: string): Promise<{ rows: number; keys: number; ids: number }> {
  const [{ rows, keys, ids }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys, count(id) AS ids FROM ${table(dir)}`);
  return { rows: rows as number, keys: keys as number, ids: ids as number };
}

function partFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.parquet') && !name.startsWith('_dataset')).sort();
}

function editJson(path: string, edit: (value: Record<string, unknown>) => unknown): void {
  writeFileSync(path, JSON.stringify(edit(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)));
}

/** A refusal as the rules want it: exit 2, one line naming the file, no stack trace. */
function expectRefused(run: CliResult, file: string, reason: RegExp): void {
  expect(run.code, run.stderr).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toContain(file);
  expect(lines[0]).toMatch(reason);
  expect(run.stderr).not.toMatch(/TypeError|Cannot read prop|undefined|at .*\.ts:\d+/);
}

/** The export refused before buying anything, and the dataset DuckDB reads is the one it was. */
async function expectRefusedExport(dir: string, file: string, reason: RegExp): Promise<void> {
  const before = charged();
  const run = await runCli(exportArgs(dir), sandboxEnv(sandbox));
  expectRefused(run, file, reason);
  expect(charged() - before).toBe(0);
  expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
}

describe('a schema.json that is valid JSON but wrong', () => {
  it('with a column listed twice is refused before any request, and without the repeat the next run keeps every id in its column', async () => {
    const dir = copy();
    const schema = join(dir, META, 'schema.json');
    editJson(schema, (value) => ({ ...value, columns: [...(value.columns as { name: string }[]), { name: 'id', kind: 'string' }] }));
    await expectRefusedExport(dir, schema, /columns lists the column "id" twice \(columns\[0\] and columns\[\d+\]\); remove the repeated entry/);
    editJson(schema, (value) => ({ ...value, columns: (value.columns as { name: string }[]).slice(0, -1) }));
    const run = await runCli(exportArgs(dir), sandboxEnv(sandbox));
    expect(run.code, run.stderr).toBe(0);
    const after = await counts(dir);
    expect(after).toEqual({ rows: after.rows, keys: after.rows, ids: after.rows });
    expect(after.rows).toBeGreaterThanOrEqual(1000);
  });

  it.each([
    ['by week', { by: 'week', column: '_date' }],
    ['as a bare word', 'week'],
  ])('with a partitioning %s is refused before any request, and no folder the dataset cannot read is written', async (_, partitioning) => {
    const dir = copy();
    const schema = join(dir, META, 'schema.json');
    editJson(schema, (value) => ({ ...value, partitioning }));
    await expectRefusedExport(dir, schema, /partitioning.*day, month, year, none/);
    expect(readdirSync(join(dir, 'forum', 'subforum')).every((folder) => folder.startsWith('_date='))).toBe(true);
  });

  it.each([
    ['null', () => null, /holds null, not an object/],
    ['columns: null', (value: Record<string, unknown>) => ({ ...value, columns: null }), /columns is null, not a list/],
    [
      'a column of an unknown kind',
      (value: Record<string, unknown>) => ({ ...value, columns: [{ name: 'id', kind: 'decimal' }, ...(value.columns as unknown[]).slice(1)] }),
      /kind is "decimal", not one of integer, bigint, double, boolean, string, timestamp, json/,
    ],
    ['an unknown format', (value: Record<string, unknown>) => ({ ...value, format: 'xlsx' }), /format is "xlsx", not one of parquet, ndjson, csv/],
    ['another operation', (value: Record<string, unknown>) => ({ ...value, operation: 'videosite/video/comments' }), /names the operation "videosite\/video\/comments", and its folder is forum\/subforum's/],
    ['layout: null', (value: Record<string, unknown>) => ({ ...value, layout: null }), /layout is null, not an object/],
    ['a layout of 0 buckets', (value: Record<string, unknown>) => ({ ...value, layout: { buckets: 0, splitBytes: 1024 } }), /layout\.buckets is 0, not a whole number from 1 to 65536/],
    ['a lock mechanism it does not know', (value: Record<string, unknown>) => ({ ...value, locks: 'zookeeper' }), /locks is "zookeeper", not one of queue, leases/],
  ])('holding %s is refused before any request, naming the file', async (_, edit, reason) => {
    const dir = copy();
    const schema = join(dir, META, 'schema.json');
    editJson(schema, edit);
    await expectRefusedExport(dir, schema, reason);
  });

  it('deleted while part files hold 1,000 rows is damage: export and info name it instead of reporting an empty dataset', async () => {
    const dir = copy();
    const schema = join(dir, META, 'schema.json');
    rmSync(schema);
    await expectRefusedExport(dir, schema, /is missing.*part files/);
    expectRefused(await runCli(['dataset', 'info', dir, '--json'], process.env), schema, /is missing.*part files/);
    expectRefused(await runCli(['dataset', 'compact', dir, '--partition', 'year'], process.env), schema, /is missing.*part files/);
  });

  it('is named by dataset info and compact, which change nothing', async () => {
    const dir = copy();
    const schema = join(dir, META, 'schema.json');
    editJson(schema, (value) => ({ ...value, columns: [...(value.columns as unknown[]), (value.columns as unknown[])[0]] }));
    const parts = partFiles(dir);
    expectRefused(await runCli(['dataset', 'info', dir], process.env), schema, /twice/);
    expectRefused(await runCli(['dataset', 'compact', dir, '--partition', 'year'], process.env), schema, /twice/);
    expect(partFiles(dir)).toEqual(parts);
    expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
  });
});

describe('a state-<writer>.json that is valid JSON but wrong', () => {
  it.each([
    ['walks: null', (value: Record<string, unknown>) => ({ ...value, walks: null }), /walks is null, not an object/],
    ['null', () => null, /holds null, not an object/],
    ['a completed run that is a number', (value: Record<string, unknown>) => ({ ...value, completedRun: 7 }), /completedRun is 7, not text/],
  ])('holding %s is refused before any request, saying to delete it', async (_, edit, reason) => {
    const dir = copy();
    const state = join(dir, META, 'state-all.json');
    editJson(state, edit);
    await expectRefusedExport(dir, state, reason);
    const refused = await runCli(['dataset', 'info', dir], process.env);
    expectRefused(refused, state, reason);
    expect(refused.stderr).toMatch(/delete it: the next run walks in full every parameter set whose mark only it held/);
    rmSync(state);
    const again = await runCli(exportArgs(dir), sandboxEnv(sandbox));
    expect(again.code, again.stderr).toBe(0);
    expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
  });
});

describe("a walk's own state file (walks/<walk>.json) that is valid JSON but wrong", () => {
  function walkFile(dir: string): string {
    const [name] = readdirSync(join(dir, META, 'walks'));
    return join(dir, META, 'walks', name);
  }

  it.each([
    ['null', () => null, /holds null, not an object/],
    ['a mark that is text', (value: Record<string, unknown>) => ({ ...value, mark: 'soon' }), /mark is "soon", not a number/],
    ['near: null', (value: Record<string, unknown>) => ({ ...value, near: null }), /near is null, not a list/],
    ['a near key without its time', (value: Record<string, unknown>) => ({ ...value, near: [['p1']] }), /near\[0\] is \["p1"\], not a pair of a key and a time or null/],
    ['the params of another walk', (value: Record<string, unknown>) => ({ ...value, params: { ...(value.params as object), subforum: 'other' } }), /params .* are not those of the walk it is named for/],
  ])('holding %s is refused by export and dataset info before any request, and deleting it walks in full again', async (_, edit, reason) => {
    const dir = copy();
    const walk = walkFile(dir);
    editJson(walk, edit);
    await expectRefusedExport(dir, walk, reason);
    const refused = await runCli(['dataset', 'info', dir], process.env);
    expectRefused(refused, walk, reason);
    expect(refused.stderr).toMatch(/delete it to walk this parameter set in full again/);
    rmSync(walk);
    const before = charged();
    const again = await runCli(exportArgs(dir), sandboxEnv(sandbox));
    expect(again.code, again.stderr).toBe(0);
    // Walked in full: every page of the 1,000 posts is bought again, and written once.
    expect(charged() - before).toBe(40);
    expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
  });
});

describe('a journal a kill left that is valid JSON but wrong', () => {
  it('of a publish is refused by the next export before any request, naming it', async () => {
    const dir = copy();
    const journal = join(dir, META, 'staging-all', 'publish.json');
    mkdirSync(join(dir, META, 'staging-all'));
    writeFileSync(journal, JSON.stringify({ renames: null, schema: JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) }));
    await expectRefusedExport(dir, journal, /renames is null, not a list; restart the export \(--restart\)/);
  });

  it('of a group publish (publish.json of the operation) is refused by the next export before any request, and deleting it as said recovers', async () => {
    const dir = copy();
    const journal = join(dir, META, 'publish.json');
    const schema = JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as unknown;
    writeFileSync(journal, JSON.stringify({ version: 2, renames: [], removes: [], schema, walks: [], members: null, drift: { added: [], missing: [], conflicting: [] } }));
    await expectRefusedExport(dir, journal, /members is null, not a list; delete .*publish\.json and .*publishing/);
    rmSync(journal);
    const again = await runCli(exportArgs(dir), sandboxEnv(sandbox));
    expect(again.code, again.stderr).toBe(0);
    expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
  });

  it("of a publish pass (publishing/<pass>/journal.json) is refused by the next export before any request, and deleting its folder as said recovers", async () => {
    const dir = copy();
    const pass = join(dir, META, 'publishing', 'a-pass');
    mkdirSync(pass, { recursive: true });
    const schema = JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as unknown;
    writeFileSync(join(pass, 'journal.json'), JSON.stringify({ version: 2, renames: [], removes: [], schema, walks: [], partitions: ['2025-01'], members: null, drift: { added: [], missing: [], conflicting: [] } }));
    await expectRefusedExport(dir, join(pass, 'journal.json'), /members is null, not a list; delete .*publishing\/a-pass: the parts are then as before/);
    rmSync(pass, { recursive: true });
    const again = await runCli(exportArgs(dir), sandboxEnv(sandbox));
    expect(again.code, again.stderr).toBe(0);
    expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
  });

  it('of a group publish whose walk state is wrong is refused, not written on into walks/', async () => {
    const dir = copy();
    const journal = join(dir, META, 'publish.json');
    const schema = JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as unknown;
    const walk = { version: 1, params: { subforum: 'x' }, mark: 'soon', markTime: 'soon', near: [] };
    writeFileSync(journal, JSON.stringify({ version: 2, renames: [], removes: [], schema, walks: [walk], members: [], drift: { added: [], missing: [], conflicting: [] } }));
    await expectRefusedExport(dir, journal, /walks\[0\]\.mark is "soon", not a number/);
    expect(readdirSync(join(dir, META, 'walks'))).toHaveLength(1);
  });

  it("of another writer's commit waiting for a publish is refused by the next export before any request, naming it", async () => {
    const dir = copy();
    const commit = join(dir, META, 'commits', 'shard-1-of-2.json');
    mkdirSync(join(dir, META, 'commits'), { recursive: true });
    writeFileSync(commit, JSON.stringify({ writer: 'shard-1-of-2', complete: true, state: null }));
    await expectRefusedExport(dir, commit, /state is null, not an object .*; delete .*shard-1-of-2\.json; its writer publishes on resume/);
    writeFileSync(commit, JSON.stringify({ writer: 'shard-1-of-2', complete: 'yes', state: null }));
    await expectRefusedExport(dir, commit, /complete is "yes", not true or false/);
  });

  it('of a compaction moving walk states is refused by dataset compact and export, naming it', async () => {
    const dir = copy();
    const journal = join(dir, META, 'compact.json');
    const schema = JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as unknown;
    writeFileSync(journal, JSON.stringify({ version: 1, operation: 'forum/subforum', renames: [], removes: [], schema, walks: null }));
    expectRefused(await runCli(['dataset', 'compact', dir], process.env), journal, /walks is null, not a list; delete .*compact\.json/);
    await expectRefusedExport(dir, journal, /walks is null, not a list/);
    writeFileSync(journal, JSON.stringify({ version: 1, operation: 'forum/subforum', renames: [], removes: [], schema, writers: { all: { version: 1, operation: 'forum/subforum', walks: null } } }));
    expectRefused(await runCli(['dataset', 'compact', dir], process.env), journal, /writers\["all"\]\.walks is null, not an object/);
  });

  it('of a compaction is refused by dataset compact, naming it', async () => {
    const dir = copy();
    const journal = join(dir, META, 'compact.json');
    writeFileSync(journal, JSON.stringify({ version: 1, operation: 'forum/subforum', renames: [], removes: [], schema: { version: 1 } }));
    expectRefused(await runCli(['dataset', 'compact', dir], process.env), journal, /schema\.operation is missing, not text; delete .*compact\.json/);
    expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
  });
});

describe('a part file cut short', () => {
  function cutShort(dir: string): string {
    const part = join(dir, partFiles(dir)[0]);
    truncateSync(part, statSync(part).size - 100);
    return part;
  }

  it('is named by dataset info and dataset compact (exit 2), not "footer != PAR1" alone', async () => {
    const dir = copy();
    const part = cutShort(dir);
    expectRefused(await runCli(['dataset', 'info', dir, '--json'], process.env), part, /cannot be read/);
    expectRefused(await runCli(['dataset', 'compact', dir, '--partition', 'year'], process.env), part, /cannot be read/);
    expect(existsSync(join(dir, META, 'compact.json'))).toBe(false);
  });

  it('is named by an export before any request, and what the message says to do brings every record back', async () => {
    const dir = copy();
    const part = cutShort(dir);
    const before = charged();
    const refused = await runCli(exportArgs(dir), sandboxEnv(sandbox));
    expectRefused(refused, part, /cannot be read.*move it out of .* and delete .*walks \(the walks' marks\) and .*state-\*\.json/);
    expect(charged() - before).toBe(0);
    renameSync(part, join(tempDir(), 'cut-short.parquet'));
    rmSync(join(dir, META, 'walks'), { recursive: true });
    rmSync(join(dir, META, 'state-all.json'));
    const again = await runCli(exportArgs(dir), sandboxEnv(sandbox));
    expect(again.code, again.stderr).toBe(0);
    expect(await counts(dir)).toEqual({ rows: 1000, keys: 1000, ids: 1000 });
  });
});
