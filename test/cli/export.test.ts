import { execFile } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { CLI, runCli, sandboxEnv, tempDir } from './helpers.ts';
import { queryWithDuckDb, readCsvWithPython, readNdjson } from './readers.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(() => sandbox.close());

const SUBFORUM = ['forum/subforum', 'subforum=cli-n230', 'sort=new'];

describe('socialstream export', () => {
  it('writes every record of a walk to NDJSON, leaves no checkpoint and keeps stdout clean', async () => {
    const out = join(tempDir(), 'posts.ndjson');
    const result = await runCli(['export', ...SUBFORUM, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    const records = readNdjson(out);
    expect(records).toHaveLength(230);
    expect(new Set(records.map((record) => record.id)).size).toBe(230);
    expect(existsSync(`${out}.checkpoint.json`)).toBe(false);
    expect(existsSync(`${out}.spool.ndjson`)).toBe(false);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/wrote 230 records \(3 pages/);
  });

  it('writes a CSV file that Python reads back with every record', async () => {
    const out = join(tempDir(), 'posts.csv');
    const result = await runCli(['export', ...SUBFORUM, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    const rows = readCsvWithPython(out);
    expect(rows).toHaveLength(230);
    expect(rows[0]).toHaveProperty('title');
    expect(new Set(rows.map((row) => row.id)).size).toBe(230);
  });

  it('writes a Parquet file that DuckDB reads back with every record', async () => {
    const out = join(tempDir(), 'posts.parquet');
    const result = await runCli(['export', ...SUBFORUM, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    const [row] = await queryWithDuckDb(out, 'SELECT count(*)::INTEGER AS n, count(DISTINCT id)::INTEGER AS ids FROM FILE');
    expect(row).toEqual({ n: 230, ids: 230 });
  });

  it('writes NDJSON to stdout with --out - and its summary to stderr', async () => {
    const result = await runCli(['export', ...SUBFORUM, '--out', '-', '--limit', '120'], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { id: string });
    expect(lines).toHaveLength(120);
    expect(result.stderr).toContain('wrote 120 records');
  });

  it('stops at --limit records and at --max-pages pages', async () => {
    const dir = tempDir();
    const limited = await runCli(['export', ...SUBFORUM, '--out', join(dir, 'a.ndjson'), '--limit', '150'], sandboxEnv(sandbox));
    expect(limited.code).toBe(0);
    expect(readNdjson(join(dir, 'a.ndjson'))).toHaveLength(150);
    const paged = await runCli(['export', ...SUBFORUM, '--out', join(dir, 'b.ndjson'), '--max-pages', '2'], sandboxEnv(sandbox));
    expect(paged.code).toBe(0);
    expect(readNdjson(join(dir, 'b.ndjson'))).toHaveLength(200);
  });

  it('never spends more than --max-credits, and exits 0 with what it fetched', async () => {
    const key = 'sk_live_sandbox_maxcredits';
    const capped = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits: 100 }] });
    try {
      const out = join(tempDir(), 'capped.ndjson');
      const result = await runCli(['export', 'forum/subforum', 'subforum=cap-n2000', 'trim=true', '--out', out, '--max-credits', '7'], sandboxEnv(capped));
      expect(result.code, result.stderr).toBe(0);
      expect(capped.balance(key).credits).toBe(93);
      expect(readNdjson(out)).toHaveLength(7 * 25);
    } finally {
      await capped.close();
    }
  });

  it('fans out over an --inputs file, one walk per line, with common parameters from the command line', async () => {
    const dir = tempDir();
    const inputs = join(dir, 'subforums.txt');
    writeFileSync(inputs, '# three subforums\nsubforum=alpha-n40\n\n{"subforum": "beta-n55"}\nsubforum=gamma-n7 sort=top\n');
    const out = join(dir, 'all.ndjson');
    const result = await runCli(['export', 'forum/subforum', 'sort=new', '--inputs', inputs, '--concurrency', '2', '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    const records = readNdjson(out) as { subforum: string }[];
    expect(records).toHaveLength(40 + 55 + 7);
    const counts: Record<string, number> = {};
    for (const record of records) counts[record.subforum] = (counts[record.subforum] ?? 0) + 1;
    expect(counts).toEqual({
      'alpha-n40': 40,
      'beta-n55': 55,
      'gamma-n7': 7,
    });
  });

  it('names the line of an --inputs file whose parameters are wrong, before any request', async () => {
    const before = sandbox.balance(sandbox.apiKey).credits;
    const inputs = join(tempDir(), 'bad.txt');
    writeFileSync(inputs, 'subforum=fine-n5\n# a comment\n\nsubforum=also-fine sort=sideways\n');
    const result = await runCli(['export', 'forum/subforum', '--inputs', inputs, '--out', join(tempDir(), 'x.ndjson')], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${inputs} line 4: forum/subforum: sort must be one of`);
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(before);
  });

  it('drops records already written with --dedupe, even when the service repeats them across pages', async () => {
    const repeating = await startSandbox({ port: 0, faults: { duplicates: true } });
    try {
      const out = join(tempDir(), 'deduped.ndjson');
      const result = await runCli(['export', 'forum/subforum', 'subforum=dup-n260', '--dedupe', 'id', '--out', out], sandboxEnv(repeating));
      expect(result.code, result.stderr).toBe(0);
      const ids = readNdjson(out).map((record) => record.id);
      expect(ids).toHaveLength(260);
      expect(new Set(ids).size).toBe(260);
    } finally {
      await repeating.close();
    }
  });

  it('rejects bad parameters with exit 2 before any request is paid for', async () => {
    const before = sandbox.balance(sandbox.apiKey).credits;
    const cases: [string[], RegExp][] = [
      [['export', 'forum/nope', '--out', 'x.ndjson'], /unknown operation "forum\/nope"/],
      [['export', 'forum/subforum', '--out', 'x.ndjson'], /subforum/],
      [['export', 'forum/subforum', 'subforum=a', 'sort=sideways', '--out', 'x.ndjson'], /sort must be one of/],
      [['export', 'forum/subforum', 'subforum=a', '--out', 'x.xlsx'], /must end in \.ndjson, \.jsonl, \.csv or \.parquet/],
      [['export', 'forum/subforum', 'subforum=a'], /needs --out/],
      [['export', 'forum/subforum', 'subforum=a', '--out', 'x.csv', '--limit', 'ten'], /--limit must be/],
      [['export', 'forum/subforum', 'subforum=a', '--out', 'x.csv', '--frobnicate'], /unknown option --frobnicate/],
      [['export', 'search/search', 'query=x', 'page=12', '--out', 'x.csv'], /page must be at most 11/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, sandboxEnv(sandbox));
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(before);
  });

  it('exits 5 after retries when the service keeps failing before any page, leaving nothing behind for a plain re-run', async () => {
    const failing = await startSandbox({ port: 0 });
    try {
      const out = join(tempDir(), 'failing.ndjson');
      const env = sandboxEnv(failing);
      failing.setFaults({ rate: 1 });
      const result = await runCli(['export', ...SUBFORUM, '--out', out], env);
      expect(result.code, result.stderr).toBe(5);
      expect(result.stderr).toMatch(/Failed to fetch/);
      expect(readdirSync(dirname(out))).toEqual([]);
      failing.setFaults({});
      const again = await runCli(['export', ...SUBFORUM, '--out', out], env);
      expect(again.code, again.stderr).toBe(0);
      expect(readNdjson(out)).toHaveLength(230);
    } finally {
      await failing.close();
    }
  });

  it('refuses to start over an interrupted export unless told to --resume', async () => {
    const key = 'sk_live_sandbox_onecredit';
    const poor = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits: 1 }] });
    try {
      const out = join(tempDir(), 'left.ndjson');
      const first = await runCli(['export', ...SUBFORUM, '--out', out], sandboxEnv(poor));
      expect(first.code).toBe(4);
      const again = await runCli(['export', ...SUBFORUM, '--out', out], sandboxEnv(poor));
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('resume it (--resume');
    } finally {
      await poor.close();
    }
  });

  it('draws live progress when stderr is a terminal, and none when it is not', async () => {
    const slow = await startSandbox({ port: 0, latencyMs: 40 });
    try {
      const args = ['export', 'forum/subforum', 'subforum=tty-n500', 'trim=true', '--out', join(tempDir(), 'tty.ndjson')];
      // `script` runs the CLI on a pseudo-terminal, as a person at a shell would.
      const command = [process.execPath, ...CLI, ...args].map((word) => `'${word}'`).join(' ');
      const { stdout: terminal } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], { env: sandboxEnv(slow) });
      expect(terminal).toMatch(/\d+ records · \d+ pages · \d+ credits · \d+ rec\/s/);
      expect(terminal).toContain('wrote 500 records');
      const piped = await runCli([...args.slice(0, -1), join(tempDir(), 'piped.ndjson')], sandboxEnv(slow));
      expect(piped.stderr).not.toContain('rec/s');
      expect(piped.stderr).toContain('wrote 500 records');
    } finally {
      await slow.close();
    }
  });
});
