/**
 * A reader through kill -9 during group publishes (issue 28, item 4; docs/datasets.md "Crash safety"):
 * three shards publish into the same bucket parts at once, and are killed -9 again and again at
 * random moments and the moment a publish journal appears; meanwhile a reader loop globs the dataset
 * with DuckDB. It must never see a key twice, never lose a key it saw, and the resumed shards must
 * finish with every record once.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { finished, passJournalWritten, randomDelays, runCli, sandboxEnv, startCli, tempDir } from './helpers.ts';

const KEY = 'sk_live_sandbox_publish_kill';
let sandbox: Sandbox;
beforeAll(async () => {
  // A little latency: the kills land among pages as well as among publishes.
  sandbox = await startSandbox({ port: 0, latencyMs: 5, accounts: [{ apiKey: KEY, credits: 100_000 }] });
});
afterAll(async () => {
  await sandbox.close();
});

const COUNTS = [300, 260, 220, 180, 240, 200, 160, 280, 120];

describe('a reader globbing a dataset while shards publish together and are killed -9', () => {
  it('never sees a record twice or loses one it saw, and the resumed shards finish with every record once', async () => {
    const dir = join(tempDir(), 'dataset');
    const inputs = join(tempDir(), 'inputs.txt');
    // Each subforum spans years: every publish rewrites dozens of month parts.
    writeFileSync(inputs, COUNTS.map((count, index) => `subforum=pk${index}-n${count} sort=new trim=true\n`).join(''));
    const args = (shard: number) => ['export', 'forum/subforum', '--inputs', inputs, '--dataset', dir, '--shard', `${shard}/3`, '--resume'];
    const meta = join(dir, '_dataset/forum__subforum');

    let reading = true;
    const seen = new Set<string>();
    const violations: string[] = [];
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        if (!existsSync(join(dir, 'forum'))) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        let rows: Record<string, unknown>[];
        try {
          rows = await query(`SELECT id FROM read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`);
        } catch (error) {
          // A glob that matched nothing yet; any other failure is a finding.
          if (!/No files found/.test(String(error))) violations.push(`read failed: ${String(error)}`);
          continue;
        }
        reads++;
        const ids = rows.map((row) => String(row.id));
        const unique = new Set(ids);
        if (unique.size !== ids.length) violations.push(`read ${reads}: ${ids.length - unique.size} keys twice`);
        const lost = [...seen].filter((id) => !unique.has(id));
        if (lost.length > 0) violations.push(`read ${reads}: ${lost.length} keys seen before are gone`);
        for (const id of unique) seen.add(id);
      }
    })();

    const kills: string[] = [];
    const delays = randomDelays(28, 8, 2_500);
    for (const [round, delay] of delays.entries()) {
      const shards = [1, 2, 3].map((shard) => {
        const child = startCli(args(shard), sandboxEnv(sandbox, KEY));
        return { child, done: finished(child) };
      });
      // Every other round: the moment a publish journal appears (its renames under way); else at a random time.
      const deadline = Date.now() + delay;
      while (shards.some(({ child }) => child.exitCode === null) && (round % 2 === 0 ? !passJournalWritten(meta) && Date.now() < deadline + 5_000 : Date.now() < deadline)) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      for (const { child } of shards) child.kill('SIGKILL');
      const ended = await Promise.all(shards.map(({ done }) => done));
      kills.push(ended.map((result) => result.signal ?? result.code).join('/'));
    }
    for (const shard of [1, 2, 3]) {
      const resumed = await runCli(args(shard), sandboxEnv(sandbox, KEY));
      expect(resumed.code, resumed.stderr).toBe(0);
    }
    reading = false;
    await reader;

    expect(violations, kills.join(' ')).toEqual([]);
    expect(reads).toBeGreaterThan(10);
    expect(kills.filter((kill) => kill.includes('SIGKILL')).length, kills.join(' ')).toBeGreaterThanOrEqual(4);
    const [{ rows, ids }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS ids FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true)`);
    const total = COUNTS.reduce((sum, count) => sum + count, 0);
    expect({ rows, ids }).toEqual({ rows: total, ids: total });
  }, 300_000);
});
