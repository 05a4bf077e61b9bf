/**
 * A dataset export killed -9 at a step of its publish, then resumed (issue 38, item 4; docs/datasets.md
 * "Crash safety"): whatever step the kill met, its journal's included, the resume is the same run.
 * It says so (`resumed`), its cap counts what the killed process spent (`--max-credits 25` is 25 in
 * all), no walk buys a page it had, and DuckDB reads every key once. The kill lands on the step
 * itself (`helpers/cli-killed-at.ts`); the sandbox counts the credits charged to each key.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportSummary } from '../../src/export/types.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { finished, runCli, sandboxEnv, tempDir, type CliResult } from './helpers.ts';

// A newest-first walk of 8 pages and another of 10 (25 trimmed posts a page): 18 credits, under the cap.
const WALKS = ['subforum=rk-new-n200 sort=new trim=true', 'subforum=rk-all-n250 trim=true'];
const POSTS = 450;
const PAGES = 18;
const CAP = 25;

/** Each step of a publish as the rename it makes: the process is killed before or after the first rename into a path the pattern matches. */
const STEPS: [string, 'before' | 'after', string][] = [
  ['right after its journal is written', 'after', '/publishing/[^/]+/journal\\.json$'],
  ['between the renames of its parts', 'after', '/_date=[^/]+/part-[^/]+$'],
  ['after its renames, before the walk states', 'before', '/_dataset/[^/]+/walks/[^/]+\\.json$'],
  ["after the walk states, before the writer's own files", 'before', '/_dataset/[^/]+/state-all\\.json$'],
  ['after its receipt, before the writer read it', 'after', '/_dataset/[^/]+/receipts/all\\.json$'],
  // Before its journal: these a resume finished as the same run already.
  ['before its commit is written', 'before', '/_dataset/[^/]+/commits/all\\.json$'],
  ['right after its commit is written', 'after', '/_dataset/[^/]+/commits/all\\.json$'],
  ['after its pass claimed the commit', 'after', '/publishing/[^/]+/claim\\.json$'],
];

const KEYS = Array.from({ length: 12 }, (_, index) => `sk_live_sandbox_resume_kill${index}`);
let sandbox: Sandbox;
let used = 0;
let inputs: string;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: KEYS.map((apiKey) => ({ apiKey, credits: 1_000 })) });
  inputs = join(tempDir(), 'inputs.txt');
  writeFileSync(inputs, WALKS.map((walk) => `${walk}\n`).join(''));
});
afterAll(() => sandbox.close());

/** A key of its own: the sandbox's count of its charges is one test's. */
function account(): { env: NodeJS.ProcessEnv; charged: () => number } {
  const key = KEYS[used++];
  return { env: sandboxEnv(sandbox, key), charged: () => sandbox.requests.charged[key] ?? 0 };
}

function exportArgs(dir: string, ...flags: string[]): string[] {
  return ['export', 'forum/subforum', '--inputs', inputs, '--dataset', dir, '--max-credits', String(CAP), '--json', ...flags];
}

/** The CLI, killed -9 at the step named by `when` and `pattern` (`helpers/cli-killed-at.ts`). */
function killedAt(when: 'before' | 'after', pattern: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const helper = resolve(import.meta.dirname, 'helpers/cli-killed-at.ts');
  return finished(spawn(process.execPath, ['--import', 'tsx', helper, when, pattern, '1', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function keys(dir: string): Promise<{ rows: number; ids: number }> {
  const [counts] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS ids FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true)`);
  return { rows: Number(counts.rows), ids: Number(counts.ids) };
}

describe('a dataset export killed -9 during its publish, then resumed', () => {
  it.each(STEPS)('killed %s, is resumed as the same run: within its cap in all, no page bought twice, each key once', async (_, when, pattern) => {
    const dir = join(tempDir(), 'dataset');
    const { env, charged } = account();
    const killed = await killedAt(when, pattern, exportArgs(dir), env);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(charged()).toBe(PAGES);

    const resumed = await runCli(exportArgs(dir, '--resume'), env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(charged(), 'credits over both runs').toBeLessThanOrEqual(CAP);
    expect(charged(), 'credits over both runs').toBe(PAGES);
    const summary = JSON.parse(resumed.stdout) as ExportSummary;
    expect({ resumed: summary.resumed, complete: summary.complete }).toEqual({ resumed: true, complete: true });
    expect(await keys(dir)).toEqual({ rows: POSTS, ids: POSTS });
  });

  it('killed right after the journal of a run that found nothing new (its newest-first walk stopped at the mark), is resumed without buying a page again', async () => {
    const dir = join(tempDir(), 'dataset');
    const first = await runCli(exportArgs(dir), account().env);
    expect(first.code, first.stderr).toBe(0);
    const { env, charged } = account();
    const [, when, pattern] = STEPS[0];
    const killed = await killedAt(when, pattern, exportArgs(dir), env);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // The newest-first walk reads its first page, wholly held; the other walk reads all 10 again.
    expect(charged()).toBe(11);

    const resumed = await runCli(exportArgs(dir, '--resume'), env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(charged(), 'credits over both runs').toBe(11);
    const summary = JSON.parse(resumed.stdout) as ExportSummary;
    expect({ resumed: summary.resumed, complete: summary.complete }).toEqual({ resumed: true, complete: true });
    expect(await keys(dir)).toEqual({ rows: POSTS, ids: POSTS });
  });
});
