/**
 * A dataset's Parquet layout on the command line (docs/datasets.md "Parquet layout"): `export --dataset`
 * makes a new dataset nested (`--layout flat` for dotted columns), a run asking for another layout
 * than the recorded one exits 2 before any request, and `dataset compact --layout` converts one,
 * every row kept once. Read back by DuckDB.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { runCli, sandboxEnv, tempDir } from './helpers.ts';

let sandbox: Sandbox;
const VIDEOS = ['shortvideo/videos', 'handle=cli-layout-n30'];
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

function recordedLayout(dir: string): unknown {
  return (JSON.parse(readFileSync(join(dir, '_dataset/shortvideo__videos/schema.json'), 'utf8')) as { parquetLayout?: unknown }).parquetLayout;
}

const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox.close();
});

describe('export --dataset', () => {
  it('makes a new dataset nested: SQL reads author.nickname without quotes', async () => {
    const dir = join(tempDir(), 'ds');
    const run = await runCli(['export', ...VIDEOS, '--dataset', dir], sandboxEnv(sandbox));
    expect(run.code, run.stderr).toBe(0);
    expect(recordedLayout(dir)).toBe('nested');
    const [{ rows, named }] = await query(`SELECT count(*) AS rows, count(author.nickname) AS named FROM ${table(dir)}`);
    expect({ rows, named }).toEqual({ rows: 30, named: 30 });
  });

  it('refuses with exit 2, before any request, a run asking for another layout than the recorded one, naming the remedy', async () => {
    const dir = join(tempDir(), 'ds');
    expect((await runCli(['export', ...VIDEOS, '--dataset', dir], sandboxEnv(sandbox))).code).toBe(0);
    const before = charged();
    const run = await runCli(['export', ...VIDEOS, '--dataset', dir, '--layout', 'flat'], sandboxEnv(sandbox));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/in the nested Parquet layout .*run without layout \(--layout\) to add nested parts, or convert the dataset first with `socialstream dataset compact .* --layout flat`/);
    expect(charged()).toBe(before);
    expect(recordedLayout(dir)).toBe('nested');
  });
});

describe('dataset compact --layout nested', () => {
  it('converts a flat dataset, every row kept once, and later runs keep the nested layout', async () => {
    const dir = join(tempDir(), 'ds');
    expect((await runCli(['export', ...VIDEOS, '--dataset', dir, '--layout', 'flat'], sandboxEnv(sandbox))).code).toBe(0);
    expect(recordedLayout(dir)).toBe('flat');
    const [flat] = await query(`SELECT count(*) AS rows, count(DISTINCT aweme_id) AS keys, count("author.nickname") AS named FROM ${table(dir)}`);
    expect(flat).toEqual({ rows: 30, keys: 30, named: 30 });

    const compaction = await runCli(['dataset', 'compact', dir, '--layout', 'nested'], process.env);
    expect(compaction.code, compaction.stderr).toBe(0);
    expect(compaction.stdout).toMatch(/shortvideo\/videos: .*30 rows.*, flat → nested layout/);
    expect(recordedLayout(dir)).toBe('nested');
    const [nested] = await query(`SELECT count(*) AS rows, count(DISTINCT aweme_id) AS keys, count(author.nickname) AS named FROM ${table(dir)}`);
    expect(nested).toEqual(flat);

    expect((await runCli(['export', ...VIDEOS, '--dataset', dir], sandboxEnv(sandbox))).code).toBe(0);
    expect(recordedLayout(dir)).toBe('nested');
    const [after] = await query(`SELECT count(*) AS rows, count(DISTINCT aweme_id) AS keys FROM ${table(dir)}`);
    expect(after).toEqual({ rows: 30, keys: 30 });
  });

  it('refuses a layout it does not know with exit 2', async () => {
    const run = await runCli(['dataset', 'compact', tempDir(), '--layout', 'wide'], process.env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--layout must be nested or flat, got "wide"/);
  });
});
