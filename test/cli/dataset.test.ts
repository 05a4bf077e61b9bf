/**
 * `socialstream export … --dataset DIR` as a subprocess against a sandbox that grows between runs.
 * Purchases are counted on the sandbox's side, per key; the dataset is read back by DuckDB.
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { finished, passJournalWritten, runCli, sandboxEnv, startCli, tempDir } from './helpers.ts';

const KILLS = 10;
const keys = ['sk_live_sandbox_ds', ...Array.from({ length: KILLS + 12 }, (_, index) => `sk_live_sandbox_ds${index}`)];
/** Grows between runs (`advance`); `steady` never does, so counts elsewhere do not depend on test order. */
let sandbox: Sandbox;
let steady: Sandbox;
beforeAll(async () => {
  // Slowed down a little, so a kill lands between pages rather than after the last.
  sandbox = await startSandbox({ port: 0, latencyMs: 15, accounts: keys.map((apiKey) => ({ apiKey, credits: 10_000 })) });
  steady = await startSandbox({ port: 0, accounts: keys.map((apiKey) => ({ apiKey, credits: 10_000 })) });
});
afterAll(async () => {
  await sandbox.close();
  await steady.close();
});

const charged = (key: string, on = sandbox) => on.requests.charged[key] ?? 0;

/** Every row but its fetch time: the same records fetched by another run are the same rows. */
async function rows(dir: string): Promise<Record<string, unknown>[]> {
  return query(`SELECT * EXCLUDE (_fetched_at) FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true) ORDER BY id`);
}

function exportTo(dir: string, params: string[], ...flags: string[]): string[] {
  return ['export', 'forum/subforum', ...params, '--dataset', dir, ...flags];
}

describe('export --dataset against a growing resource', () => {
  // 25 posts a page with trim; sort=new lists them newest first, a day's worth, so few partitions.
  const params = ['subforum=cli-grow-n100', 'sort=new', 'timeframe=day', 'trim=true'];
  const template = join(tempDir(), 'after-run-1');
  let reference: Record<string, unknown>[];
  let before: Record<string, unknown>[];

  beforeAll(async () => {
    const first = await runCli(exportTo(template, params), sandboxEnv(sandbox, keys[0]));
    expect(first.code, first.stderr).toBe(0);
    before = await rows(template);
    // Run 2 finds 250 new posts: 10 new pages, then the one that reaches the mark.
    sandbox.advance({ records: 250 });
    const finishedRun = join(tempDir(), 'after-run-2');
    cpSync(template, finishedRun, { recursive: true });
    const second = await runCli(exportTo(finishedRun, params), sandboxEnv(sandbox, keys[1]));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/250 new rows, 25 updated/);
    reference = await rows(finishedRun);
  }, 120_000);

  it('buys the new pages plus one, and holds every record once', async () => {
    expect(charged(keys[1])).toBe(11);
    expect(reference).toHaveLength(350);
    expect(new Set(reference.map((row) => row.id)).size).toBe(350);
  });

  it(`leaves a readable, consistent dataset after kill -9 at ${KILLS} points of run 2, and --resume completes it without buying a staged page again`, async () => {
    // Kill once the n-th page of run 2 was charged (n of 11); the last two after the last page: at once,
    // and the moment the publish journal appears (while part files are being renamed into place).
    const points = [1, 2, 3, 4, 5, 6, 7, 9, 11, 11].map((pages, index) => ({ pages, atJournal: index === KILLS - 1 }));
    const outcomes: string[] = [];
    for (const [index, { pages, atJournal }] of points.entries()) {
      const key = keys[3 + index];
      const dir = join(tempDir(), `killed-${index}`);
      cpSync(template, dir, { recursive: true });
      const child = startCli(exportTo(dir, params), sandboxEnv(sandbox, key));
      const done = finished(child);
      while (charged(key) < pages && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 1));
      const meta = join(dir, '_dataset/forum__subforum');
      while (atJournal && !passJournalWritten(meta) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 1));
      child.kill('SIGKILL');
      const killed = await done;

      const seen = await rows(dir);
      const ids = seen.map((row) => row.id);
      expect(new Set(ids).size, `kill ${index}: a key twice`).toBe(ids.length);
      const byId = new Map(seen.map((row) => [row.id, row]));
      for (const row of before) expect(byId.has(row.id), `kill ${index}: a record of run 1 is gone`).toBe(true);
      // Each row is as run 1 left it or as run 2 makes it: never half of a row or a row of neither.
      const beforeById = new Map(before.map((row) => [row.id, row]));
      const referenceById = new Map(reference.map((row) => [row.id, row]));
      for (const row of seen) expect([beforeById.get(row.id), referenceById.get(row.id)], `kill ${index}`).toContainEqual(row);

      const resumed = await runCli(exportTo(dir, params, '--resume'), sandboxEnv(sandbox, key));
      expect(resumed.code, `kill ${index}: ${resumed.stderr}`).toBe(0);
      expect(await rows(dir), `kill ${index}`).toEqual(reference);
      // Every page is bought once, except the one in flight when the kill came.
      expect(charged(key), `kill ${index}: pages bought again`).toBeLessThanOrEqual(11 + 1);
      outcomes.push(`${pages}:${killed.signal ?? killed.code}:${charged(key)}`);
    }
    expect(outcomes.filter((outcome) => outcome.includes('SIGKILL')).length, outcomes.join(' ')).toBeGreaterThanOrEqual(KILLS - 1);
  }, 300_000);

  it('refuses to start over a run that was interrupted, unless told to --resume', async () => {
    const key = keys[KILLS + 4];
    const dir = join(tempDir(), 'interrupted');
    cpSync(template, dir, { recursive: true });
    const child = startCli(exportTo(dir, params), sandboxEnv(sandbox, key));
    const done = finished(child);
    while (charged(key) < 2 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 1));
    child.kill('SIGKILL');
    await done;
    const again = await runCli(exportTo(dir, params), sandboxEnv(sandbox, key));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/resume it \(--resume/);
  });

  it('buys only the new pages plus one on a third run, with the latest values', async () => {
    const dir = join(tempDir(), 'third');
    cpSync(template, dir, { recursive: true });
    const key = keys[2];
    expect((await runCli(exportTo(dir, params), sandboxEnv(sandbox, key))).code).toBe(0);
    sandbox.advance({ records: 30 });
    const third = await runCli(exportTo(dir, params), sandboxEnv(sandbox, key));
    expect(third.code, third.stderr).toBe(0);
    // Run 2: 11 pages as above; run 3: 30 new posts are 2 pages, the second also reaching the mark.
    expect(charged(key)).toBe(11 + 2);
    const all = await rows(dir);
    expect(all).toHaveLength(380);
    expect(new Set(all.map((row) => row.id)).size).toBe(380);
  });
});

describe('export --dataset schema', () => {
  it('stops a run with --schema freeze at the first drifting page, before buying another', async () => {
    const key = keys[KILLS + 5];
    const dir = join(tempDir(), 'frozen');
    expect((await runCli(exportTo(dir, ['subforum=cli-frozen-n300', 'timeframe=day', 'trim=true']), sandboxEnv(steady, key))).code).toBe(0);
    const bought = charged(key, steady);
    const frozen = await runCli(exportTo(dir, ['subforum=cli-frozen-n300', 'timeframe=day'], '--schema', 'freeze'), sandboxEnv(steady, key));
    expect(frozen.code).toBe(1);
    expect(frozen.stderr).toMatch(/schema is frozen.*new \(/);
    expect(charged(key, steady) - bought).toBe(1);
    expect(await rows(dir)).toHaveLength(300);
  });

  it('reports fields added between runs in the summary', async () => {
    const key = keys[KILLS + 6];
    const dir = join(tempDir(), 'evolving');
    expect((await runCli(exportTo(dir, ['subforum=cli-evolve-n20', 'trim=true']), sandboxEnv(steady, key))).code).toBe(0);
    const evolved = await runCli(exportTo(dir, ['subforum=cli-evolve-n20']), sandboxEnv(steady, key));
    expect(evolved.code, evolved.stderr).toBe(0);
    expect(evolved.stderr).toMatch(/schema drift: \d+ new \(.*upvote_ratio: double/);
  });
});

describe('export --dataset --shard', () => {
  it('gives the same dataset from 3 processes, each taking its share of one inputs file, as from one process', async () => {
    const key = keys[KILLS + 7];
    const inputs = join(tempDir(), 'subforums.txt');
    writeFileSync(inputs, Array.from({ length: 9 }, (_, index) => `subforum=shard${index}-n${20 + index * 7} timeframe=day trim=true`).join('\n') + '\n');
    const one = join(tempDir(), 'one');
    const single = await runCli(['export', 'forum/subforum', '--inputs', inputs, '--dataset', one], sandboxEnv(steady, key));
    expect(single.code, single.stderr).toBe(0);
    const pages = charged(key, steady);
    const shared = join(tempDir(), 'shared');
    const shards = await Promise.all(
      [1, 2, 3].map((k) => runCli(['export', 'forum/subforum', '--inputs', inputs, '--dataset', shared, '--shard', `${k}/3`], sandboxEnv(steady, key))),
    );
    for (const shard of shards) expect(shard.code, shard.stderr).toBe(0);
    const expected = await rows(one);
    expect(expected).toHaveLength(9 * 20 + 7 * 36);
    expect(await rows(shared)).toEqual(expected);
    // Another shard count, or one writer, merges into the same bucket parts: no record twice. (These
    // walks are not newest first: each is walked in full again, once by the two shards, once by one writer.)
    const bought = charged(key, steady);
    for (const flags of [['--shard', '1/2'], ['--shard', '2/2'], []]) {
      const other = await runCli(['export', 'forum/subforum', '--inputs', inputs, '--dataset', shared, ...flags], sandboxEnv(steady, key));
      expect(other.code, other.stderr).toBe(0);
    }
    expect(charged(key, steady) - bought).toBe(2 * pages);
    expect(await rows(shared)).toEqual(expected);
  }, 120_000);
});

describe('export --dataset flags', () => {
  it.each([
    [['--dataset', 'DIR', '--csv-escape-formulae'], /--csv-escape-formulae does not go with --dataset/],
    [['--out', 'OUT.ndjson', '--schema', 'freeze'], /--schema goes only with --dataset/],
    [['--out', 'OUT.ndjson', '--shard', '1/2'], /--shard goes only with --dataset/],
    [['--out', 'OUT.ndjson', '--since', '2025-10-01'], /--since goes only with --dataset/],
    [['--dataset', 'DIR', '--since', 'last-month'], /--since must be an ISO 8601 date \(YYYY-MM-DD, UTC\) or time, got "last-month"/],
    [['--dataset', 'DIR', '--since', '2025-10-01', '--until', '2025-09-01'], /--since must be before --until, got 2025-10-01 and 2025-09-01/],
  ])('refuses %j rather than ignoring a flag, and buys nothing', async (flags, message) => {
    const key = keys[KILLS + 8];
    const dir = tempDir();
    const args = flags.map((flag) => flag.replace('DIR', join(dir, 'ds')).replace('OUT', join(dir, 'out')));
    const result = await runCli(['export', 'forum/subforum', 'subforum=cli-flags-n50', ...args], sandboxEnv(steady, key));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(charged(key, steady)).toBe(0);
  });

  it('counts --max-pages per run: a resume after a 402 starts a new run, as a file export does', async () => {
    const apiKey = keys[KILLS + 9];
    const poor = await startSandbox({ port: 0, accounts: [{ apiKey, credits: 2 }] });
    try {
      const dir = join(tempDir(), 'capped');
      const params = ['subforum=cli-pages-n200', 'sort=new', 'trim=true'];
      const first = await runCli(exportTo(dir, params, '--max-pages', '3'), sandboxEnv(poor, apiKey));
      expect(first.code, first.stderr).toBe(4);
      expect(charged(apiKey, poor)).toBe(2);
      poor.purchase(apiKey, 100);
      const resumed = await runCli(exportTo(dir, params, '--resume', '--max-pages', '3'), sandboxEnv(poor, apiKey));
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(charged(apiKey, poor)).toBe(5);
      expect(await rows(dir)).toHaveLength(125);
    } finally {
      await poor.close();
    }
  });
});

describe('export --dataset --since / --until', () => {
  it('buys no page wholly older than --since, and writes nothing older', async () => {
    const key = keys[KILLS + 10];
    const params = ['subforum=cli-since-n300', 'sort=new', 'timeframe=week', 'trim=true'];
    // The listing as the sandbox serves it, 25 posts a page, read free of charge from a twin sandbox.
    const twin = await startSandbox({ port: 0 });
    let pages: number[][];
    try {
      const listed = await runCli(['export', 'forum/subforum', ...params, '--out', '-'], sandboxEnv(twin));
      const times = listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { created_utc: number }).created_utc);
      pages = Array.from({ length: Math.ceil(times.length / 25) }, (_, page) => times.slice(page * 25, page * 25 + 25));
    } finally {
      await twin.close();
    }
    const since = pages[4][12];
    // It stops at the first page that ends in five posts older than --since: the ones after are older still.
    const last = pages.findIndex((times) => times.slice(-5).every((time) => time < since));
    expect(last).toBe(4);
    const dir = join(tempDir(), 'since');
    const result = await runCli(exportTo(dir, params, '--since', new Date(since * 1000).toISOString()), sandboxEnv(steady, key));
    expect(result.code, result.stderr).toBe(0);
    expect(charged(key, steady)).toBe(last + 1);
    const held = await rows(dir);
    expect(held).toHaveLength(pages.flat().filter((time) => time >= since).length);
    expect(Math.min(...held.map((row) => Number(row.created_utc)))).toBeGreaterThanOrEqual(since);
  });

  it('writes only records before --until', async () => {
    const key = keys[KILLS + 11];
    const dir = join(tempDir(), 'until');
    const result = await runCli(exportTo(dir, ['subforum=cli-until-n80', 'sort=new', 'trim=true'], '--until', '2025-11-01'), sandboxEnv(steady, key));
    expect(result.code, result.stderr).toBe(0);
    const held = await rows(dir);
    expect(held.length).toBeGreaterThan(0);
    expect(Math.max(...held.map((row) => Number(row.created_utc)))).toBeLessThan(Date.parse('2025-11-01') / 1000);
  });
});

describe('export --dataset over a feed with pinned, garbage-time, year-9999 and out-of-order posts', () => {
  it.each(['spec', 'service'] as const)('loses no post across runs and buys the new pages plus one (%s dialect)', async (dialect) => {
    const apiKey = 'sk_live_sandbox_odd';
    const odd = await startSandbox({ port: 0, dialect, accounts: [{ apiKey, credits: 1_000 }], faults: { pinned: true, garbageTime: true, futureTime: true, outOfOrder: true } });
    try {
      const dir = join(tempDir(), 'odd');
      const params = ['subforum=cli-odd-n240', 'sort=new', 'timeframe=week', 'trim=true'];
      expect((await runCli(exportTo(dir, params), sandboxEnv(odd, apiKey))).code).toBe(0);
      odd.advance({ records: 100 });
      const before = charged(apiKey, odd);
      const second = await runCli(exportTo(dir, params), sandboxEnv(odd, apiKey));
      expect(second.code, second.stderr).toBe(0);
      // 100 new posts (and the pinned one) are 4 pages and a post; the fifth page is wholly held.
      expect(charged(apiKey, odd) - before).toBe(5);
      const held = await rows(dir);
      expect(held).toHaveLength(340);
      expect(new Set(held.map((row) => row.id)).size).toBe(340);
    } finally {
      await odd.close();
    }
  });
});
