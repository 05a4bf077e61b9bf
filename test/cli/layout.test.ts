/** `export --layout`: a .parquet output keeps records' shape by default, or takes flat dotted columns (docs/guide/first-export.md). */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { runCli, sandboxEnv, tempDir } from './helpers.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, slowMs: 0 });
});
afterAll(() => sandbox?.close());

async function exportParquet(extra: string[]): Promise<string> {
  const out = join(tempDir(), 'videos.parquet');
  const result = await runCli(['export', 'shortvideo/videos', 'handle=layout-n5', '--out', out, ...extra], sandboxEnv(sandbox));
  expect(result.code, result.stderr).toBe(0);
  return out;
}

describe('export --layout', () => {
  it('writes a nested .parquet by default, which DuckDB queries as author.nickname', async () => {
    const out = await exportParquet([]);
    const rows = await query(`SELECT author.nickname AS nickname, len(author.avatar_thumb.url_list) AS urls FROM ${sqlPath(out)}`);
    expect(rows).toHaveLength(5);
    expect(rows.every((row) => typeof row.nickname === 'string' && row.urls === 2)).toBe(true);
  });

  it('writes dotted columns with --layout flat', async () => {
    const out = await exportParquet(['--layout', 'flat']);
    const rows = await query(`SELECT "author.nickname" AS nickname, "author.avatar_thumb.url_list" AS urls FROM ${sqlPath(out)}`);
    expect(rows).toHaveLength(5);
    expect(JSON.parse(rows[0].urls as string)).toHaveLength(2);
  });

  it('is refused for an output that is not Parquet, and for an unknown layout', async () => {
    const csv = await runCli(['export', 'shortvideo/videos', 'handle=x', '--out', join(tempDir(), 'v.csv'), '--layout', 'flat'], sandboxEnv(sandbox));
    expect(csv.code).toBe(2);
    expect(csv.stderr).toContain('--layout applies to a .parquet output or a dataset only');
    const wide = await runCli(['export', 'shortvideo/videos', 'handle=x', '--out', join(tempDir(), 'v.parquet'), '--layout', 'wide'], sandboxEnv(sandbox));
    expect(wide.code).toBe(2);
    expect(wide.stderr).toContain('--layout must be nested or flat');
  });
});
