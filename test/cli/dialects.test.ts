/**
 * `socialstream export` against a sandbox of each dialect, to each format, read back by readers
 * that are not ours: the same record ids and counts whether the service answers as the API reference reads or
 * as it does in practice.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxDialect, startSandbox } from '../../src/sandbox/index.ts';
import { runCli, sandboxEnv, tempDir } from './helpers.ts';
import { queryWithDuckDb, readCsvWithPython, readNdjson } from './readers.ts';

const DIALECTS: readonly SandboxDialect[] = ['spec', 'service'];

/** Exports whose walks differ most between the dialects: trimmed bodies, the comment tree, page-like cursors. */
const EXPORTS = [
  { args: ['shortvideo/videos', 'handle=cli-trim-n95', 'trim=true'], id: 'aweme_id', count: 95 },
  { args: ['forum/post/comments', 'url=https://forum.example/r/x/comments/cli/thread-n60'], id: 'id', count: 60 },
  { args: ['search-ad-library/company-ads', 'domain=cli.example-n90'], id: 'creativeId', count: 90 },
] as const;

const sandboxes = {} as Record<SandboxDialect, Sandbox>;
beforeAll(async () => {
  for (const dialect of DIALECTS) sandboxes[dialect] = await startSandbox({ port: 0, dialect });
});
afterAll(async () => {
  for (const dialect of DIALECTS) await sandboxes[dialect].close();
});

/** The values of column `id` in an export file, read back by DuckDB, Python's csv module, or JSON.parse per line. */
async function idsIn(path: string, id: string): Promise<string[]> {
  if (path.endsWith('.parquet')) return (await queryWithDuckDb(path, `SELECT "${id}"::VARCHAR AS id FROM FILE`)).map((row) => String(row.id));
  const rows: Array<Record<string, unknown>> = path.endsWith('.csv') ? readCsvWithPython(path) : readNdjson(path);
  return rows.map((row) => String(row[id]));
}

describe.each(['ndjson', 'csv', 'parquet'])('export to %s in both dialects', (format) => {
  it.each(EXPORTS.map((each) => ({ ...each, op: each.args[0] })))('of $op writes the same record ids', async ({ args, id, count }) => {
    const found: Record<string, string[]> = {};
    for (const dialect of DIALECTS) {
      const out = join(tempDir(), `${dialect}.${format}`);
      const result = await runCli(['export', ...args, '--out', out], sandboxEnv(sandboxes[dialect]));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toContain('warning:');
      found[dialect] = await idsIn(out, id);
    }
    expect(found.spec).toHaveLength(count);
    expect(new Set(found.spec).size).toBe(count);
    expect(found.service).toEqual(found.spec);
  });
});
