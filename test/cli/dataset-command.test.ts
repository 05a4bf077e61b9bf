/**
 * `socialstream dataset info|compact DIR` as subprocesses, on a dataset `export --dataset` wrote
 * against the sandbox; read back by DuckDB.
 */
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import type { DatasetInfo } from '../../src/export/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';

let sandbox: Sandbox;
let template: string;
const META = '_dataset/forum__subforum';
const PARAMS = ['subforum=cli-tools-n150', 'sort=new', 'trim=true'];

function table(dir: string): string {
  return `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
}

function partFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.parquet') && !name.startsWith('_dataset'));
}

async function counts(dir: string): Promise<{ rows: unknown; keys: unknown }> {
  const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM ${table(dir)}`);
  return { rows, keys };
}

/** Rows either dataset has that the other lacks, the partition column left out. */
async function difference(a: string, b: string): Promise<unknown> {
  const [{ n }] = await query(
    `SELECT (SELECT count(*) FROM (SELECT * EXCLUDE (_date) FROM ${table(a)} EXCEPT ALL SELECT * EXCLUDE (_date) FROM ${table(b)})) + ` +
      `(SELECT count(*) FROM (SELECT * EXCLUDE (_date) FROM ${table(b)} EXCEPT ALL SELECT * EXCLUDE (_date) FROM ${table(a)})) AS n`,
  );
  return n;
}

function copy(): string {
  const dir = join(tempDir(), 'ds');
  cpSync(template, dir, { recursive: true });
  return dir;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 100 });
  template = join(tempDir(), 'ds');
  const run = await runCli(['export', 'forum/subforum', ...PARAMS, '--dataset', template, '--partition', 'day'], sandboxEnv(sandbox));
  expect(run.code, run.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await sandbox.close();
});

describe('socialstream dataset', () => {
  it('answers --help on stdout with exit 0, for itself and each verb, and refuses an unknown verb', async () => {
    for (const words of [['dataset', '--help'], ['dataset', 'info', '--help'], ['dataset', 'compact', '--help']]) {
      const result = await runCli(words, process.env);
      expect(result.code, words.join(' ')).toBe(0);
      expect(result.stdout, words.join(' ')).toMatch(/usage: socialstream dataset|socialstream dataset info DIR/);
    }
    const unknown = await runCli(['dataset', 'compcat', template], process.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/dataset has no command "compcat": info or compact/);
  });
});

describe('socialstream dataset info', () => {
  it('prints with --json the rows, partitions and parts DuckDB reads', async () => {
    const run = await runCli(['dataset', 'info', template, '--json'], process.env);
    expect(run.code, run.stderr).toBe(0);
    const info = JSON.parse(run.stdout) as DatasetInfo;
    const [operation] = info.operations;
    expect(operation.rows).toBe(150);
    expect(operation.parts).toBe(partFiles(template).length);
    const [{ partitions }] = await query(`SELECT count(DISTINCT _date) AS partitions FROM ${table(template)}`);
    expect(operation.partitions).toHaveLength(partitions as number);
    expect(operation.marks[0].params).toEqual({ subforum: 'cli-tools-n150', sort: 'new', trim: 'true' });
  });

  it('prints as text what the dataset holds', async () => {
    const run = await runCli(['dataset', 'info', template], process.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^forum\/subforum: 150 rows, \d+ partitions by day \(_date=…\)/m);
    expect(run.stdout).toMatch(/mark subforum=cli-tools-n150 sort=new trim=true: \d{4}-/);
  });

  it('fails with one line on a folder that is no dataset, and asks for the folder when none is given', async () => {
    const missing = await runCli(['dataset', 'info', tempDir()], process.env);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toMatch(/^socialstream: .* is not a dataset \(it has no _dataset folder\)/);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    const bare = await runCli(['dataset', 'info'], process.env);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/needs the dataset's directory/);
  });
});

describe('socialstream dataset compact', () => {
  it('merges the parts by day into one a month, with the same rows', async () => {
    const dir = copy();
    const run = await runCli(['dataset', 'compact', dir, '--partition', 'month'], process.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^forum\/subforum: \d+ part files → \d+, 150 rows, partitioned by day → month/);
    expect(partFiles(dir).length).toBeLessThan(partFiles(template).length);
    expect(await difference(template, dir)).toBe(0);
    expect(await counts(dir)).toEqual({ rows: 150, keys: 150 });
  });

  it.each([
    ['its staged parts appear', 'compact'],
    ['its journal appears', 'compact.json'],
  ])('killed with SIGKILL once %s leaves a dataset the next compact finishes, every record once', async (_, marker) => {
    const dir = copy();
    const child = startCli(['dataset', 'compact', dir, '--partition', 'month'], process.env);
    const killed = finished(child);
    await waitFor(join(dir, META, marker)).catch(() => undefined);
    child.kill('SIGKILL');
    await killed;
    const again = await runCli(['dataset', 'compact', dir, '--partition', 'month'], process.env);
    expect(again.code, again.stderr).toBe(0);
    expect(await counts(dir)).toEqual({ rows: 150, keys: 150 });
    expect(await difference(template, dir)).toBe(0);
    expect(partFiles(dir).every((file) => /_date=\d{4}-\d{2}\//.test(file))).toBe(true);
    expect(existsSync(join(dir, META, 'compact.json'))).toBe(false);
  });

  it('is refused (exit 2, LOCKED) while an export writes the dataset', async () => {
    const dir = copy();
    // 80 new pages at 100 ms: the export still runs while the compaction starts, however slowly it starts.
    sandbox.advance({ records: 2000 });
    const exporting = startCli(['export', 'forum/subforum', ...PARAMS, '--dataset', dir], sandboxEnv(sandbox));
    const exported = finished(exporting);
    await waitFor(join(dir, META, 'writer-all.lock'));
    const refused = await runCli(['dataset', 'compact', dir, '--partition', 'month'], process.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/another export \(pid \d+\) is writing/);
    const done = await exported;
    expect(done.code, done.stderr).toBe(0);
    expect(await counts(dir)).toEqual({ rows: 2150, keys: 2150 });
    const info = JSON.parse((await runCli(['dataset', 'info', dir, '--json'], process.env)).stdout) as DatasetInfo;
    expect(info.operations[0].partitioning.by).toBe('day');
  });
});
