/**
 * `socialstream export` used carelessly or unluckily: its staging folder deleted mid-run, an output
 * name too long for its side files, a refused partition change. The CLI as a subprocess against a
 * sandbox over loopback; purchases counted on the sandbox's side.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadState } from '../../src/export/journal.ts';
import type { ExportSummary } from '../../src/export/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { readNdjson } from './readers.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 10, accounts: [{ apiKey: 'sk_live_sandbox_edges', credits: 100_000 }] });
});
afterAll(() => sandbox.close());
const charged = () => sandbox.requests.charged['sk_live_sandbox_edges'] ?? 0;

describe('socialstream export, its staging folder deleted mid-run', () => {
  it('exits 2 before its next request with one line naming the folder and a remedy that works', async () => {
    const folder = join(tempDir(), 'out');
    mkdirSync(folder);
    const out = join(folder, 'posts.ndjson');
    const walk = ['export', 'forum/subforum', 'subforum=cli-gone-n1250', '--out', out];
    const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
    const child = startCli(walk, env);
    const done = finished(child);
    await waitFor(`${out}.checkpoint.json`);
    rmSync(folder, { recursive: true, force: true });
    const boughtAt = charged();
    const result = await done;
    expect(result.code, result.stderr).toBe(2);
    const last = result.stderr.trimEnd().split('\n').at(-1)!;
    expect(last).toMatch(new RegExp(`^socialstream: ${folder} was removed while the export was staging into it`));
    expect(last).not.toMatch(/--restart|--resume|checkpoint\.json/);
    // The request in flight when the folder went may be answered; none is sent after.
    expect(charged() - boughtAt).toBeLessThanOrEqual(1);
    expect(existsSync(folder)).toBe(false);
    const again = await runCli(walk, env);
    expect(again.code, again.stderr).toBe(0);
    expect(readNdjson(out)).toHaveLength(1250);
    expect(readdirSync(folder).sort()).toEqual(['posts.ndjson', 'posts.ndjson.export.json']);
  });
});

describe('socialstream export to a name its side files cannot carry', () => {
  it('refuses a 229-byte name before any request, exit 2, naming the limit, and leaves nothing behind', async () => {
    const folder = tempDir();
    const out = join(folder, `${'p'.repeat(221)}.ndjson`);
    const before = charged();
    const result = await runCli(['export', 'forum/subforum', 'subforum=cli-long-n300', '--out', out], sandboxEnv(sandbox, 'sk_live_sandbox_edges'));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/255 bytes/);
    expect(charged()).toBe(before);
    expect(readdirSync(folder)).toEqual([]);
  });

  it('--resume refuses an output beside a spool no checkpoint vouches for, exit 2, naming the spool, instead of "complete"', async () => {
    const out = join(tempDir(), 'posts.ndjson');
    const walk = ['export', 'forum/subforum', 'subforum=cli-stray-n300', '--out', out];
    const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
    expect((await runCli([...walk, '--limit', '100'], env)).code).toBe(0);
    // As a run left it that staged a page but could not write its checkpoint.
    rmSync(`${out}.checkpoint.json`);
    const before = charged();
    const resumed = await runCli([...walk, '--resume', '--json'], env);
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stdout).toBe('');
    expect(resumed.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(resumed.stderr).toContain(`${out}.spool.ndjson`);
    expect(charged()).toBe(before);
  });
});

describe('socialstream export --resume after a publish killed while it removed its staging', () => {
  // The publish renames the output into place, then removes the journal, then the spool: a kill in
  // between leaves a complete output beside the spool it was written from (found by killing runs at random).
  for (const format of ['parquet', 'csv', 'ndjson'] as const) {
    it(`${format}: reports the output complete, buys nothing, and removes the spool`, async () => {
      const folder = tempDir();
      const out = join(folder, `posts.${format}`);
      const spooled = join(folder, 'spooled.ndjson');
      const walk = ['export', 'forum/subforum', 'subforum=cli-leftover-n260'];
      const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
      expect((await runCli([...walk, '--out', out], env)).code).toBe(0);
      expect((await runCli([...walk, '--out', spooled], env)).code).toBe(0);
      copyFileSync(spooled, `${out}.spool.ndjson`);
      const before = charged();
      const resumed = await runCli([...walk, '--out', out, '--resume', '--json'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout) as ExportSummary).toMatchObject({ complete: true, totalRecords: 260 });
      expect(charged()).toBe(before);
      expect(existsSync(`${out}.spool.ndjson`)).toBe(false);
    });
  }

  it('still refuses a spool that holds other records than the complete output (a run that could not checkpoint them)', async () => {
    const folder = tempDir();
    const out = join(folder, 'posts.parquet');
    const walk = ['export', 'forum/subforum', 'subforum=cli-leftover-n260'];
    const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
    expect((await runCli([...walk, '--out', out], env)).code).toBe(0);
    expect((await runCli([...walk, '--out', join(folder, 'page.ndjson'), '--limit', '25'], env)).code).toBe(0);
    copyFileSync(join(folder, 'page.ndjson'), `${out}.spool.ndjson`);
    const resumed = await runCli([...walk, '--out', out, '--resume'], env);
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stderr).toContain(`${out}.spool.ndjson`);
    expect(existsSync(`${out}.spool.ndjson`)).toBe(true);
  });
});

describe('socialstream export --resume with a lower --limit after a kill', () => {
  it('writes only the lower limit, keeps what was staged past it, and writes that first in the next run, buying no page again', async () => {
    const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
    // 3,000 trimmed posts, 25 a page: 120 pages.
    const walk = ['export', 'forum/subforum', 'subforum=cli-lower-n3000', 'trim=true'];
    const referenceOut = join(tempDir(), 'reference.ndjson');
    expect((await runCli([...walk, '--out', referenceOut], env)).code).toBe(0);
    const reference = readNdjson(referenceOut).map((post) => post.id);
    const out = join(tempDir(), 'posts.ndjson');
    const journal = `${out}.checkpoint.json`;
    const staged = async (): Promise<number> => (await loadState(journal).catch(() => undefined))?.records ?? 0;
    const start = charged();
    const child = startCli([...walk, '--out', out, '--limit', '2500'], env);
    const done = finished(child);
    while ((await staged()) <= 1000) await new Promise((resolve) => setTimeout(resolve, 5));
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const kept = await staged();
    expect(kept).toBeGreaterThan(1000);
    expect(kept).toBeLessThan(2500);
    const spoolLines = () => readFileSync(`${out}.spool.ndjson`, 'utf8').split('\n').filter((line) => line !== '').length;

    const killedAt = charged();
    const lowered = await runCli([...walk, '--out', out, '--resume', '--limit', '1000', '--json'], env);
    expect(lowered.code, lowered.stderr).toBe(0);
    expect(JSON.parse(lowered.stdout) as ExportSummary).toMatchObject({ complete: false, stoppedBy: 'limit', records: 1000 });
    expect(charged()).toBe(killedAt);
    expect(readNdjson(out).map((post) => post.id)).toEqual(reference.slice(0, 1000));
    // What was staged past the limit stays staged.
    expect(spoolLines()).toBe(kept);

    const next = await runCli([...walk, '--out', out, '--resume', '--limit', '1000', '--json'], env);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout) as ExportSummary).toMatchObject({ stoppedBy: 'limit', records: 1000 });
    expect(readNdjson(out).map((post) => post.id)).toEqual(reference.slice(0, 2000));

    const last = await runCli([...walk, '--out', out, '--resume', '--json'], env);
    expect(last.code, last.stderr).toBe(0);
    expect(JSON.parse(last.stdout) as ExportSummary).toMatchObject({ complete: true, records: 1000 });
    expect(readNdjson(out).map((post) => post.id)).toEqual(reference);
    // 120 pages, and at most the one in flight at the kill bought again.
    expect(charged() - start).toBeGreaterThanOrEqual(120);
    expect(charged() - start).toBeLessThanOrEqual(121);
  });
});

describe('socialstream export --dataset --resume with a lower --limit after a kill', () => {
  it('publishes only the lower limit, keeps what was staged past it, and publishes that first in the next run, buying no page again', async () => {
    const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
    // 3,000 trimmed posts, 25 a page: 120 pages.
    const walk = ['export', 'forum/subforum', 'subforum=cli-lower-ds-n3000', 'trim=true'];
    const referenceOut = join(tempDir(), 'reference.ndjson');
    expect((await runCli([...walk, '--out', referenceOut], env)).code).toBe(0);
    const reference = readNdjson(referenceOut).map((post) => String(post.id));
    const dir = join(tempDir(), 'data');
    const journal = join(dir, '_dataset', 'forum__subforum', 'staging-all', 'checkpoint.json');
    const staged = async (): Promise<number> => (await loadState(journal).catch(() => undefined))?.records ?? 0;
    const idsIn = async (): Promise<string[]> =>
      (await query(`SELECT id FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`)).map((row) => String(row.id)).sort();
    const start = charged();
    const child = startCli([...walk, '--dataset', dir, '--limit', '2500'], env);
    const done = finished(child);
    while ((await staged()) <= 1200) await new Promise((resolve) => setTimeout(resolve, 5));
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const kept = await staged();
    expect(kept).toBeGreaterThan(1200);
    expect(kept).toBeLessThan(2500);

    const killedAt = charged();
    const lowered = await runCli([...walk, '--dataset', dir, '--resume', '--limit', '1000', '--json'], env);
    expect(lowered.code, lowered.stderr).toBe(0);
    expect(JSON.parse(lowered.stdout) as ExportSummary).toMatchObject({ complete: false, stoppedBy: 'limit', records: 1000 });
    expect(charged()).toBe(killedAt);
    expect(await idsIn()).toEqual(reference.slice(0, 1000).sort());
    // What was staged past the limit stays staged, for the next run.
    expect(await staged()).toBe(kept);

    const rest = await runCli([...walk, '--dataset', dir, '--resume', '--limit', '2500', '--json'], env);
    expect(rest.code, rest.stderr).toBe(0);
    expect(JSON.parse(rest.stdout) as ExportSummary).toMatchObject({ complete: true, records: 2000 });
    expect(await idsIn()).toEqual([...reference].sort());
    // 120 pages, and at most the one in flight at the kill bought again.
    expect(charged() - start).toBeGreaterThanOrEqual(120);
    expect(charged() - start).toBeLessThanOrEqual(121);
  });
});

describe('socialstream export refusals and failures, in documented words and codes', () => {
  it('refuses a dataset partition change with exit 2 and one line, buying nothing', async () => {
    const dir = join(tempDir(), 'data');
    const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
    const walk = ['export', 'forum/subforum', 'subforum=cli-partition-n30', '--dataset', dir];
    expect((await runCli([...walk, '--partition', 'year'], env)).code).toBe(0);
    const before = charged();
    const changed = await runCli([...walk, '--partition', 'day'], env);
    expect(changed.code, changed.stderr).toBe(2);
    expect(changed.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(changed.stderr).toMatch(/partitioned by year; a run cannot partition it by day/);
    expect(charged()).toBe(before);
  });

  it('on a full disk names the disk and what it was writing, and never an output that does not exist', async () => {
    const disk = join(tempDir(), 'small');
    mkdirSync(disk);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=300k', 'tmpfs', disk]).status).toBe(0);
    try {
      const out = join(disk, 'posts.ndjson');
      const full = await runCli(['export', 'forum/subforum', 'subforum=cli-full-n2000', 'trim=true', '--out', out], sandboxEnv(sandbox, 'sk_live_sandbox_edges'));
      expect(full.code, full.stderr).toBe(6);
      const last = full.stderr.trimEnd().split('\n').at(-1)!;
      expect(last).toMatch(new RegExp(`^socialstream: no space left on the disk holding ${disk} \\(writing ${out}\\.(spool\\.ndjson|checkpoint\\.json)\\): free some space there\\.`));
      // Nothing could be published: the message says so, and where what was staged waits.
      expect(existsSync(out)).toBe(false);
      expect(last).not.toContain(`output so far is in ${out}`);
      expect(last).toMatch(/Nothing is written to .*posts\.ndjson yet.*--resume/);
    } finally {
      spawnSync('umount', [disk]);
    }
  });
});
