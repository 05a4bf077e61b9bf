import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadState, StateJournal } from '../../src/export/journal.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, randomDelays, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';
import { queryWithDuckDb, readCsvWithPython, readNdjson } from './readers.ts';

// 2,000 trimmed posts, 25 a page: 80 pages, slowed down so that a kill lands mid-walk.
const WALK = ['export', 'forum/subforum', 'subforum=resume-n2000', 'trim=true'];
const PAGES = 80;
const FORMATS = ['ndjson', 'csv', 'parquet'] as const;
const KILLS = 20;

let sandbox: Sandbox;
const reference: Record<string, string> = {};
const keys = Array.from({ length: KILLS + 1 }, (_, index) => `sk_live_resume${index}`);
/** The account of the runs over a file already there: its balance shows what they bought. */
const OVER_KEY = 'sk_live_resume_over';

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 8, accounts: [...keys, OVER_KEY].map((apiKey) => ({ apiKey, credits: 1000 })) });
  const dir = tempDir();
  for (const format of FORMATS) {
    const out = join(dir, `reference.${format}`);
    const result = await runCli([...WALK, '--out', out], sandboxEnv(sandbox, keys[0]));
    expect(result.code, result.stderr).toBe(0);
    reference[format] = out;
  }
});
afterAll(() => sandbox.close());

async function sameContent(format: string, out: string): Promise<void> {
  if (format === 'parquet') {
    const sql = 'SELECT * FROM FILE ORDER BY id';
    expect(await queryWithDuckDb(out, sql)).toEqual(await queryWithDuckDb(reference[format], sql));
  } else {
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(reference[format], 'utf8'));
  }
}

describe('an interrupted export resumed with --resume', () => {
  it(`ends with exactly the uninterrupted result after kill -9 at ${KILLS} random points across the three formats`, async () => {
    const delays = randomDelays(20261122, KILLS, 700);
    const outcomes: string[] = [];
    for (let run = 0; run < KILLS; run++) {
      const format = FORMATS[run % FORMATS.length];
      const key = keys[run + 1];
      const out = join(tempDir(), `killed.${format}`);
      const env = sandboxEnv(sandbox, key);
      const child = startCli([...WALK, '--out', out], env);
      const done = finished(child);
      await waitFor(`${out}.checkpoint.json`);
      await new Promise((resolve) => setTimeout(resolve, delays[run]));
      child.kill('SIGKILL');
      const killed = await done;
      // A kill that came after the last page finds a finished export: nothing is left to resume.
      if (killed.signal === 'SIGKILL') {
        const resumed = await runCli([...WALK, '--out', out, '--resume'], env);
        expect(resumed.code, `run ${run}: ${resumed.stderr}`).toBe(0);
      } else {
        expect(killed.code, `run ${run}: ${killed.stderr}`).toBe(0);
      }
      await sameContent(format, out);
      expect(existsSync(`${out}.checkpoint.json`)).toBe(false);
      const charged = sandbox.requests.charged[key] ?? 0;
      expect(charged, `run ${run}`).toBeGreaterThanOrEqual(PAGES);
      expect(charged, `run ${run}: pages bought again`).toBeLessThanOrEqual(PAGES + 1);
      outcomes.push(`${format}:${killed.signal ?? killed.code}:+${charged - PAGES}`);
    }
    // Most kills must land mid-walk, or the test would prove little.
    expect(outcomes.filter((outcome) => outcome.includes('SIGKILL')).length).toBeGreaterThanOrEqual(KILLS - 2);
  }, 240_000);

  it('after a 402 mid-run keeps a valid file, and after a purchase buys no finished page again', async () => {
    const key = 'sk_live_runsdry';
    const dry = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits: 30 }] });
    try {
      const out = join(tempDir(), 'dry.parquet');
      const env = sandboxEnv(dry, key);
      const first = await runCli([...WALK, '--out', out], env);
      expect(first.code).toBe(4);
      expect(first.stderr).toMatch(/out of credits: the balance is 0, the next request needs 1/);
      expect(first.stderr).toContain('--resume');
      const [partial] = await queryWithDuckDb(out, 'SELECT count(*)::INTEGER AS n FROM FILE');
      expect(partial.n).toBe(30 * 25);
      // What stays on disk for --resume names the export, never the key or the service address.
      const kept = readFileSync(`${out}.checkpoint.json`, 'utf8') + readFileSync(`${out}.spool.ndjson`, 'utf8');
      expect(kept).toContain('resume-n2000');
      expect(kept).not.toContain(key);
      expect(kept).not.toContain(dry.url);
      dry.purchase(key, 500);
      const second = await runCli([...WALK, '--out', out, '--resume'], env);
      expect(second.code, second.stderr).toBe(0);
      await sameContent('parquet', out);
      expect(dry.requests.charged[key]).toBe(PAGES);
      expect(dry.balance(key)).toMatchObject({ credits: 530 - PAGES, subscriptionStatus: 'active' });
    } finally {
      await dry.close();
    }
  });

  it('after Ctrl-C exits 130 with a valid file, and --resume completes it', async () => {
    const key = keys[0];
    const out = join(tempDir(), 'interrupted.ndjson');
    const env = sandboxEnv(sandbox, key);
    const child = startCli([...WALK, '--out', out], env);
    const done = finished(child);
    await waitFor(`${out}.checkpoint.json`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    child.kill('SIGINT');
    const interrupted = await done;
    expect(interrupted.code, interrupted.stderr).toBe(130);
    expect(interrupted.stderr).toContain('interrupted');
    const partial = readNdjson(out);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(2000);
    const resumed = await runCli([...WALK, '--out', out, '--resume'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    await sameContent('ndjson', out);
  });

  it('finishes an export whose last page was saved before the crash, without a request', async () => {
    const key = 'sk_live_sandbox_finishing';
    const poor = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits: 30 }] });
    try {
      const out = join(tempDir(), 'finishing.csv');
      const env = sandboxEnv(poor, key);
      expect((await runCli([...WALK, '--out', out], env)).code).toBe(4);
      // As if the run had ended right after recording that every page is in the spool, and died
      // before the output was written from it.
      const checkpoint = `${out}.checkpoint.json`;
      const state = await loadState(checkpoint);
      const journal = StateJournal.start(checkpoint, { ...state!, finished: true });
      await journal.save();
      await journal.close();
      rmSync(out);
      const charged = poor.requests.charged[key];
      const finished = await runCli([...WALK, '--out', out, '--resume'], env);
      expect(finished.code, finished.stderr).toBe(0);
      expect(finished.stderr).toContain('no request needed');
      expect(readCsvWithPython(out)).toHaveLength(30 * 25);
      expect(poor.requests.charged[key]).toBe(charged);
      expect(existsSync(checkpoint)).toBe(false);
      expect(existsSync(`${out}.spool.ndjson`)).toBe(false);
    } finally {
      await poor.close();
    }
  });

  it('resumes a fan-out over --inputs after a 402, every walk continuing where it stood', async () => {
    const key = 'sk_live_sandbox_fanout';
    const dry = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits: 9 }] });
    try {
      const dir = tempDir();
      const inputs = join(dir, 'subforums.txt');
      writeFileSync(inputs, 'subforum=fan-a-n100\nsubforum=fan-b-n75\nsubforum=fan-c-n50\nsubforum=fan-d-n60\n');
      const args = ['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--concurrency', '3', '--out', join(dir, 'fan.ndjson')];
      const env = sandboxEnv(dry, key);
      const first = await runCli(args, env);
      expect(first.code, first.stderr).toBe(4);
      const partial = readNdjson(join(dir, 'fan.ndjson'));
      expect(partial.length).toBeGreaterThan(0);
      expect(partial.length).toBeLessThanOrEqual(9 * 25);
      dry.purchase(key, 100);
      const second = await runCli([...args, '--resume'], env);
      expect(second.code, second.stderr).toBe(0);
      const records = readNdjson(join(dir, 'fan.ndjson')) as { id: string; subforum: string }[];
      expect(records).toHaveLength(100 + 75 + 50 + 60);
      expect(new Set(records.map((record) => record.id)).size).toBe(records.length);
      // 4 + 3 + 2 + 3 pages in all, each bought once: when one walk met the 402, the pages the others
      // had in flight were still saved, so the resume bought none of them again.
      expect(dry.requests.charged[key]).toBe(12);
    } finally {
      await dry.close();
    }
  });

  it('resumes when the --inputs lines list the same parameters in another order', async () => {
    const key = 'sk_live_sandbox_reordered';
    const dry = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits: 3 }] });
    try {
      const dir = tempDir();
      const inputs = join(dir, 'subforums.txt');
      writeFileSync(inputs, 'subforum=order-a-n100 sort=new\nsubforum=order-b-n50 sort=new\n');
      const args = ['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--concurrency', '1', '--out', join(dir, 'order.ndjson')];
      const env = sandboxEnv(dry, key);
      expect((await runCli(args, env)).code).toBe(4);
      writeFileSync(inputs, 'sort=new subforum=order-a-n100\nsort=new subforum=order-b-n50\n');
      dry.purchase(key, 100);
      const second = await runCli([...args, '--resume'], env);
      expect(second.code, second.stderr).toBe(0);
      const records = readNdjson(join(dir, 'order.ndjson')) as { id: string }[];
      expect(new Set(records.map((record) => record.id)).size).toBe(150);
      expect(records).toHaveLength(150);
      expect(dry.requests.charged[key]).toBe(6);
    } finally {
      await dry.close();
    }
  });
});

/** A copy of the reference output of `format` (its record of the export too), in a folder of its own. */
function referenceCopy(format: string, withRecord = true): string {
  const out = join(tempDir(), `copy.${format}`);
  copyFileSync(reference[format], out);
  const record = `${reference[format]}.export.json`;
  if (withRecord && existsSync(record)) copyFileSync(record, `${out}.export.json`);
  return out;
}

describe('--resume over a file already there', () => {
  it('refuses a file another export finished with exit 2, naming what it holds and --restart, before any request', async () => {
    const env = sandboxEnv(sandbox, OVER_KEY);
    for (const format of FORMATS) {
      const out = referenceCopy(format);
      const result = await runCli(['export', 'forum/subforum', 'subforum=python-n100', '--out', out, '--resume'], env);
      expect(result.code, result.stderr).toBe(2);
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines.at(-1)).toMatch(new RegExp(`^socialstream: ${out} holds another export: forum/subforum subforum=resume-n2000 trim=true \\(${format}, 2000 records\\), not forum/subforum subforum=python-n100; .*--restart`));
      expect(result.stderr).not.toMatch(/wrote|staged/);
      await sameContent(format, out);
    }
    expect(sandbox.balance(OVER_KEY).credits).toBe(1000);
  });

  it('says its own finished file is already complete and spends no credit', async () => {
    const env = sandboxEnv(sandbox, OVER_KEY);
    for (const format of FORMATS) {
      const result = await runCli([...WALK, '--out', referenceCopy(format), '--resume'], env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/^already complete: 2000 records in .*; nothing bought, nothing written$/m);
      expect(result.stderr).not.toContain('from what was staged');
    }
    expect(sandbox.balance(OVER_KEY).credits).toBe(1000);
  });

  it('refuses a file that records no export (written before outputs recorded theirs) with exit 2, naming --restart', async () => {
    const out = referenceCopy('ndjson', false);
    const result = await runCli([...WALK, '--out', out, '--resume'], sandboxEnv(sandbox, OVER_KEY));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^socialstream: ${out} does not record the export that made it.*--restart`));
    expect(sandbox.balance(OVER_KEY).credits).toBe(1000);
  });

  it("after Ctrl-C, --resume reports this run's records and the file's total, which DuckDB counts", async () => {
    const out = join(tempDir(), 'total.parquet');
    const env = sandboxEnv(sandbox, keys[0]);
    const child = startCli([...WALK, '--out', out], env);
    const done = finished(child);
    await waitFor(`${out}.checkpoint.json`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    child.kill('SIGINT');
    expect((await done).code).toBe(130);
    const [partial] = await queryWithDuckDb(out, 'SELECT count(*)::INTEGER AS n FROM FILE');
    const resumed = await runCli([...WALK, '--out', out, '--resume', '--json'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout) as { records: number; totalRecords: number };
    const [whole] = await queryWithDuckDb(out, 'SELECT count(*)::INTEGER AS n FROM FILE');
    expect(summary).toMatchObject({ records: 2000 - (partial.n as number), totalRecords: whole.n });
    expect(whole.n).toBe(2000);
    expect(resumed.stderr).toContain(`wrote ${summary.records} records (`);
    expect(resumed.stderr).toMatch(/\) this run to .*, which holds 2000 records in all; /);
  });
});
