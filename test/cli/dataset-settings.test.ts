/**
 * A dataset's settings fixed before anything is published (issue 38, item 2; README § 8 "Hive
 * layout"): of two first runs with different settings started together, exactly one writes and the
 * other is refused before its first request; a run not given a setting takes the one a run close
 * ahead fixed; a run that bought nothing fixes nothing.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, DatasetError } from '../../src/index.ts';
import { toDataset, type ExportSummary } from '../../src/export/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir } from './helpers.ts';

const KEYS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'].map((name) => `sk_live_sandbox_settings_${name}`);
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 10, accounts: KEYS.map((apiKey) => ({ apiKey, credits: 10_000 })) });
});
afterAll(async () => {
  await sandbox.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const charged = (key: string) => sandbox.requests.charged[key] ?? 0;
/** A key of its own per writer of each test: what it bought is counted apart. */
let nextKey = 0;
const freshKey = () => KEYS[nextKey++ % KEYS.length];

/** Subforums of 60 posts each, spread over months: two shards each take some of them. */
function inputs(name: string): string {
  const path = join(tempDir(), 'inputs.txt');
  writeFileSync(path, Array.from({ length: 6 }, (_, index) => `subforum=${name}${index}-n60 sort=new trim=true\n`).join(''));
  return path;
}

/** The Hive folders of the operation, e.g. `_date=2025-11`. */
function folders(dir: string): string[] {
  return readdirSync(join(dir, 'forum', 'subforum')).filter((name) => name.startsWith('_date='));
}

/** Whether each folder is of a day (`_date=2025-11-21`) or of a month (`_date=2025-11`). */
function grains(dir: string): string[] {
  return [...new Set(folders(dir).map((name) => (/^_date=\d{4}-\d{2}-\d{2}$/.test(name) ? 'day' : /^_date=\d{4}-\d{2}$/.test(name) ? 'month' : name)))];
}

async function rowsAndKeys(dir: string, extension: string): Promise<{ rows: number; keys: number }> {
  const reader = extension === 'parquet' ? 'read_parquet' : 'read_json_auto';
  const glob = sqlPath(join(dir, 'forum', 'subforum', '**', `*.${extension}`));
  const [row] = await query(`SELECT count(*)::INT AS rows, count(DISTINCT id)::INT AS keys FROM ${reader}(${glob}, hive_partitioning = true, union_by_name = true)`);
  return { rows: Number(row.rows), keys: Number(row.keys) };
}

describe('two first runs on a new dataset, one by day and one by month', () => {
  for (const delay of [0, 300, 800]) {
    it(`leave one writer and refuse the other, started ${delay} ms later, with exit 2 before it buys a page`, async () => {
      const dir = join(tempDir(), 'dataset');
      const list = inputs(`race${delay}-`);
      const keys = [freshKey(), freshKey()];
      const day = finished(startCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--partition', 'day', '--shard', '1/2'], sandboxEnv(sandbox, keys[0])));
      await sleep(delay);
      const month = finished(startCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--partition', 'month', '--shard', '2/2'], sandboxEnv(sandbox, keys[1])));
      const results = await Promise.all([day, month]);

      expect(results.map((result) => result.code).sort(), results.map((result) => result.stderr).join('\n')).toEqual([0, 2]);
      const loser = results.findIndex((result) => result.code === 2);
      expect(results[loser].stderr.trim().split('\n')).toHaveLength(1);
      expect(results[loser].stderr).toMatch(/partition/);
      expect(charged(keys[loser])).toBe(0);
      expect(grains(dir)).toEqual([loser === 0 ? 'month' : 'day']);
      const { rows, keys: distinct } = await rowsAndKeys(dir, 'parquet');
      expect(rows).toBe(distinct);
      expect(rows).toBeGreaterThan(0);
    });
  }
});

describe('a run not given a partitioning', () => {
  it('takes the one a run started just before it fixed, though neither has published yet', async () => {
    const dir = join(tempDir(), 'dataset');
    const list = inputs('adopt-');
    const day = finished(startCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--partition', 'day', '--shard', '1/2'], sandboxEnv(sandbox, freshKey())));
    await sleep(300);
    const unsaid = finished(startCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--shard', '2/2'], sandboxEnv(sandbox, freshKey())));
    const results = await Promise.all([day, unsaid]);
    expect(results.map((result) => result.code), results.map((result) => result.stderr).join('\n')).toEqual([0, 0]);
    expect(grains(dir)).toEqual(['day']);
    const { rows, keys } = await rowsAndKeys(dir, 'parquet');
    expect([rows, keys]).toEqual([360, 360]);
  });
});

describe('a first run refused with 401', () => {
  it('fixes nothing: a later run with another partitioning writes the dataset', async () => {
    const dir = join(tempDir(), 'dataset');
    const list = inputs('refused-');
    const refused = await runCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--partition', 'day'], sandboxEnv(sandbox, 'sk_live_not_an_account'));
    expect(refused.code).toBe(3);
    const later = await runCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--partition', 'month'], sandboxEnv(sandbox, freshKey()));
    expect(later.code, later.stderr).toBe(0);
    expect(grains(dir)).toEqual(['month']);
  });
});

describe('two first runs through the library, one of NDJSON parts and one of Parquet', () => {
  it('leave one format and refuse the other run with DatasetError before it buys a page', async () => {
    const dir = join(tempDir(), 'dataset');
    const keys = [freshKey(), freshKey()];
    const clients = keys.map((apiKey) => createClient({ apiKey, baseUrl: sandbox.url }));
    try {
      const run = (index: number, format: 'ndjson' | 'parquet'): Promise<ExportSummary | unknown> =>
        toDataset(clients[index].stream('forum/subforum', { subforum: `formats${index}-n150`, sort: 'new', trim: true }), dir, { format, writer: `writer-${index}` }).catch(
          (error: unknown) => error,
        );
      const outcomes = await Promise.all([run(0, 'ndjson'), run(1, 'parquet')]);
      const refused = outcomes.findIndex((outcome) => outcome instanceof DatasetError);
      expect(refused, String(outcomes.find((outcome) => outcome instanceof Error))).not.toBe(-1);
      expect(outcomes.filter((outcome) => outcome instanceof Error)).toHaveLength(1);
      expect(charged(keys[refused])).toBe(0);
      const parts = readdirSync(join(dir, 'forum', 'subforum'), { recursive: true }).map(String).filter((name) => /part-[^/]*$/.test(name));
      const kept = refused === 0 ? 'parquet' : 'ndjson';
      expect(parts.filter((name) => !name.endsWith(`.${kept}`))).toEqual([]);
      expect(await rowsAndKeys(dir, kept)).toEqual({ rows: 150, keys: 150 });
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
