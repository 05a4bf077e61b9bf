/**
 * A dataset's parts read as one table by every reader (docs/datasets.md): DuckDB and Polars over the hive
 * folder, arrow-rs (parquet-wasm) part by part, after a second run added a field.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.ts';
import { toDataset } from '../../src/export/index.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import { query } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';

const dir = join(scratchDir(), 'dataset');
const glob = `${dir}/**/*.parquet`;

function parts(): string[] {
  return execFileSync('find', [dir, '-name', '*.parquet'], { encoding: 'utf8' }).trim().split('\n').sort();
}

beforeAll(async () => {
  const sandbox = await startSandbox({ port: 0, slowMs: 0 });
  try {
    const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    await toDataset(client.forum.subforum({ subforum: 'readers-n30' }), dir);
    const later = async function* (records: AsyncIterable<unknown>) {
      for await (const record of records) yield { ...(record as Record<string, unknown>), late_field: 7 };
    };
    await toDataset(client.forum.subforum({ subforum: 'readers-later-n30' }), dir, { transform: later });
  } finally {
    await sandbox.close();
  }
}, 120_000);

describe('a dataset whose second run added a field', () => {
  it('reads as one table in DuckDB over the hive folder (union_by_name)', async () => {
    const [row] = await query(`SELECT count(*) AS rows, count(late_field) AS late FROM read_parquet('${glob}', hive_partitioning = true, union_by_name = true)`);
    expect(row).toEqual({ rows: 60, late: 30 });
  });

  it('reads as one table in Polars over the hive folder, given the union of the parts\' schemas', () => {
    const schema = Object.assign({}, ...parts().map((part) => pl.readParquet(part).schema)) as Record<string, unknown>;
    const frame = pl.scanParquet(glob, { hivePartitioning: true, schema, missingColumns: 'insert' }).collectSync();
    expect(frame.height).toBe(60);
    expect(frame.getColumn('late_field').nullCount()).toBe(30);
  });

  it('reads part by part in arrow-rs with the rows DuckDB reads in each', async () => {
    let rows = 0;
    for (const part of parts()) {
      const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream());
      const [{ n }] = await query(`SELECT count(*) AS n FROM '${part}'`);
      expect(table.numRows).toBe(n);
      rows += table.numRows;
    }
    expect(rows).toBe(60);
  });
});
