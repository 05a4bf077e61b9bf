/**
 * Which version of a key a dataset keeps (docs/datasets.md "One row per record", issue 38 item 5): the
 * later fetch by the service's clock, whatever the writers' own clocks say. Writers are the CLI as
 * subprocesses, their clocks set wrong by a preload (`fixtures/shifted-clock.mjs`); records an older
 * version staged rank below every record this version fetched, and are never published without a
 * fetch time. Read back by DuckDB.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { hashPrefix } from '../../src/export/durable.ts';
import { loadState, writeState } from '../../src/export/journal.ts';
import { serveRecords, type ServedRecords } from '../export/helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { CLI, finished, runCli, sandboxEnv, tempDir, type CliResult } from './helpers.ts';

const SHIFTED_CLOCK = ['--import', resolve(import.meta.dirname, 'fixtures/shifted-clock.mjs')];
const MINUTE = 60_000;

/** The CLI exporting `subforum` of `served` into `dir`, on a machine whose clock is `shiftMs` off. */
function exportShifted(served: ServedRecords, subforum: string, dir: string, shiftMs: number): Promise<CliResult> {
  const env = { ...process.env, SOCIALSTREAM_BASE_URL: served.url, SOCIALSTREAM_API_KEY: 'sk_test_served_records', SHIFTED_CLOCK_MS: String(shiftMs) };
  const child = spawn(process.execPath, [...SHIFTED_CLOCK, ...CLI, 'export', 'forum/subforum', `subforum=${subforum}`, '--dataset', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return finished(child);
}

/** Two posts of 2024-03, `title` telling versions apart. */
function posts(title: string): object[] {
  return [0, 1].map((n) => ({ id: `p${n}`, created_utc: 1_709_251_200 + n * 600, title: `${title} ${n}` }));
}

async function titles(dir: string): Promise<string[]> {
  const rows = await query(`SELECT title FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true) ORDER BY id`);
  return rows.map((row) => String(row.title));
}

describe('the fetch kept between two writers', () => {
  let served: ServedRecords;
  let sameSecond: ServedRecords;
  beforeAll(async () => {
    served = await serveRecords();
    // A service whose every answer says the same second: two fetches within it.
    sameSecond = await serveRecords({ date: new Date().toUTCString() });
  });
  afterAll(async () => {
    await served.close();
    await sameSecond.close();
  });

  it('is the later one when the writer that fetched first has a clock ten minutes ahead and the other ten minutes behind', async () => {
    const dir = tempDir();
    served.serve('clocks', posts('fetched first'));
    const first = await exportShifted(served, 'clocks', dir, 10 * MINUTE);
    expect(first.code, first.stderr).toBe(0);
    served.serve('clocks', posts('fetched later'));
    const later = await exportShifted(served, 'clocks', dir, -10 * MINUTE);
    expect(later.code, later.stderr).toBe(0);
    expect(await titles(dir)).toEqual(['fetched later 0', 'fetched later 1']);
  }, 120_000);

  it('is the later one when both fetches fall in the same second of the service, whatever the writers’ clocks', async () => {
    const dir = tempDir();
    // The first version's text sorts after the second's: a tie would keep it.
    sameSecond.serve('second', posts('z fetched first'));
    const first = await exportShifted(sameSecond, 'second', dir, 5_000);
    expect(first.code, first.stderr).toBe(0);
    sameSecond.serve('second', posts('a fetched later'));
    const later = await exportShifted(sameSecond, 'second', dir, -5_000);
    expect(later.code, later.stderr).toBe(0);
    expect(await titles(dir)).toEqual(['a fetched later 0', 'a fetched later 1']);
  }, 120_000);
});

describe("an older version's unfinished run, finished by this one", () => {
  const KEY = 'sk_live_sandbox_older';
  // 25 posts a page with trim, newest first: 4 pages, each bought only once the one before is read.
  const PARAMS = ['subforum=older-run-n100', 'trim=true'];
  let sandbox: Sandbox;
  beforeAll(async () => {
    // Slowed down, so a kill lands between pages.
    sandbox = await startSandbox({ port: 0, latencyMs: 40, accounts: [{ apiKey: KEY, credits: 10_000 }] });
  });
  afterAll(() => sandbox.close());

  const charged = () => sandbox.requests.charged[KEY] ?? 0;
  const exportArgs = (dir: string) => ['export', 'forum/subforum', ...PARAMS, '--dataset', dir];

  /**
   * A dataset with a run killed after two pages, its staged records as an older version left them:
   * `restamp` gives each its fetch time (none before versions kept one; a local clock's, three digits, after).
   */
  async function olderStaging(restamp: (record: Record<string, unknown>) => Record<string, unknown>): Promise<string> {
    const dir = tempDir();
    const child = spawn(process.execPath, [...CLI, ...exportArgs(dir)], { env: sandboxEnv(sandbox, KEY), stdio: ['ignore', 'pipe', 'pipe'] });
    const done = finished(child);
    const target = charged() + 2;
    while (charged() < target) await new Promise((wake) => setTimeout(wake, 1));
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const staging = join(dir, '_dataset/forum__subforum/staging-all');
    const spool = join(staging, 'spool.ndjson');
    const records = readFileSync(spool, 'utf8').trim().split('\n').map((line) => restamp(JSON.parse(line) as Record<string, unknown>));
    expect(records.length).toBeGreaterThanOrEqual(25);
    const text = records.map((record) => `${JSON.stringify(record)}\n`).join('');
    writeFileSync(spool, text);
    // The checkpoint vouches for the spool by its hash: as the older version wrote it, for these bytes.
    const checkpoint = join(staging, 'checkpoint.json');
    const state = (await loadState(checkpoint))!;
    const bytes = Buffer.byteLength(text);
    await writeState(checkpoint, { ...state, spool: { bytes, sha256: (await hashPrefix(spool, bytes)).digest('hex') } });
    return dir;
  }

  async function fetchTimes(dir: string): Promise<Map<string, string | null>> {
    const rows = await query(`SELECT id, _fetched_at FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true)`);
    return new Map(rows.map((row) => [String(row.id), row._fetched_at as string | null]));
  }

  it('publishes the records it staged with a fetch time, never NULL, each key once', async () => {
    const dir = await olderStaging(({ _fetched_at: _, ...record }) => record);
    const resumed = await runCli([...exportArgs(dir), '--resume'], sandboxEnv(sandbox, KEY));
    expect(resumed.code, resumed.stderr).toBe(0);
    const times = await fetchTimes(dir);
    expect(times.size).toBe(100);
    expect([...times.values()].filter((time) => time === null)).toEqual([]);
    const [{ rows }] = await query(`SELECT count(*) AS rows FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)})`);
    expect(rows).toBe(100);
  }, 120_000);

  it('keeps the records this version fetched again over the ones it staged, even stamped by a clock ahead', async () => {
    const ahead = new Date(Date.now() + 10 * MINUTE).toISOString();
    const dir = await olderStaging((record) => ({ ...record, _fetched_at: ahead }));
    const staged = stagedIds(dir);
    const resumed = await runCli([...exportArgs(dir), '--resume'], sandboxEnv(sandbox, KEY));
    expect(resumed.code, resumed.stderr).toBe(0);
    // A later run fetches the newest page again (it stops at the first page the dataset holds).
    const again = await runCli(exportArgs(dir), sandboxEnv(sandbox, KEY));
    expect(again.code, again.stderr).toBe(0);
    const times = await fetchTimes(dir);
    const refetched = staged.slice(0, 25);
    expect(refetched.map((id) => times.get(id))).not.toContain(ahead);
  }, 120_000);

  /** The ids of the staged records, in the order they were fetched (newest first). */
  function stagedIds(dir: string): string[] {
    const spool = join(dir, '_dataset/forum__subforum/staging-all/spool.ndjson');
    return readFileSync(spool, 'utf8').trim().split('\n').map((line) => String((JSON.parse(line) as { id: unknown }).id));
  }
});
