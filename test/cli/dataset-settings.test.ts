/**
 * A dataset's settings fixed before anything is published (issue 38, item 2; docs/datasets.md "Hive
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
import { walkName } from '../../src/operations/walk-name.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';

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

/** Which share of `--shard K/2` takes a walk: as `sources.ts` deals walks to shards, by the first 32 bits of its name. */
function shareOf(subforum: string): number {
  return (Number.parseInt(walkName({ subforum, sort: 'new', trim: 'true' }).slice(0, 8), 16) % 2) + 1;
}

/** Subforums of `posts` posts each, spread over months, three for each share of two shards: each of `--shard 1/2` and `2/2` buys pages. */
function inputs(name: string, posts = 30): string {
  const names: string[] = [];
  for (let index = 0, taken = [0, 0, 0]; names.length < 6; index++) {
    const subforum = `${name}${index}-n${posts}`;
    if (taken[shareOf(subforum)]++ < 3) names.push(subforum);
  }
  const path = join(tempDir(), 'inputs.txt');
  writeFileSync(path, names.map((subforum) => `subforum=${subforum} sort=new trim=true\n`).join(''));
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
      // The winner's three walks of 30 posts, each key once.
      expect(await rowsAndKeys(dir, 'parquet')).toEqual({ rows: 90, keys: 90 });
    });
  }
});

describe('a run not given a partitioning', () => {
  it('takes the one a run buying pages fixed, though that run has published nothing yet', async () => {
    // Pages slow enough that the first run is still buying when the second opens the dataset.
    const slow = await startSandbox({ port: 0, latencyMs: 250, accounts: [{ apiKey: KEYS[0], credits: 1_000 }] });
    try {
      const dir = join(tempDir(), 'dataset');
      const list = inputs('adopt-', 100);
      const day = finished(startCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--partition', 'day', '--shard', '1/2', '--concurrency', '1'], sandboxEnv(slow, KEYS[0])));
      await waitFor(join(dir, '_dataset', 'forum__subforum', 'staging-shard-1-of-2', 'checkpoint.json'), 30_000);
      const unsaid = await runCli(['export', 'forum/subforum', '--inputs', list, '--dataset', dir, '--shard', '2/2'], sandboxEnv(slow, KEYS[0]));
      const results = [await day, unsaid];
      expect(results.map((result) => result.code), results.map((result) => result.stderr).join('\n')).toEqual([0, 0]);
      expect(grains(dir)).toEqual(['day']);
      expect(await rowsAndKeys(dir, 'parquet')).toEqual({ rows: 600, keys: 600 });
    } finally {
      await slow.close();
    }
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
