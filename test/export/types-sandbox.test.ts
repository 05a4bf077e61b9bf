/**
 * Issue 39's "Done when": a dataset of sandbox forum posts and short videos, grown over 10 runs of
 * the sandbox's `advance`, has no column typed by absence (the posts' `media`, `secure_media`,
 * `distinguished` are always null, `all_awardings` always empty: they stay `untyped` and out of the
 * parts), no JSON-quoted strings, and reads as one table in DuckDB, Polars and arrow-rs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toDataset } from '../../src/export/index.ts';
import type { Client } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { datasetParts } from './helpers/dataset-parts.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
const RUNS = 10;

type Column = { name: string; kind: string; fields?: Column[]; element?: Column };

let sandbox: Sandbox;
let client: Client;
beforeAll(async () => ({ sandbox, client } = await startSandboxClient({ slowMs: 0 })));
afterAll(() => closeSandboxClient({ sandbox, client }));

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The recorded leaves a record reaches through structs, as SQL paths, with their kinds. */
function leaves(columns: readonly Column[], prefix: string[] = []): Array<{ path: string[]; kind: string }> {
  return columns.flatMap((column) =>
    column.kind === 'struct' ? leaves(column.fields!, [...prefix, column.name]) : [{ path: [...prefix, column.name], kind: column.kind }],
  );
}

const CASES = [
  { operation: 'forum/subforum', walk: () => client.forum.subforum({ subforum: 'grown-n40', sort: 'new' }) },
  { operation: 'shortvideo/videos', walk: () => client.shortvideo.videos({ handle: 'grown-n40' }) },
];

describe.each(CASES)('a dataset of $operation grown over 10 runs of advance', ({ operation, walk }) => {
  const dir = join(root, operation.replaceAll('/', '_'));
  let columns: Column[] = [];
  let rows = 0;
  const table = `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;

  beforeAll(async () => {
    for (let run = 0; run < RUNS; run++) {
      await toDataset(walk(), dir);
      sandbox.advance({ records: 5 });
    }
    columns = (JSON.parse(readFileSync(join(dir, '_dataset', operation.replaceAll('/', '__'), 'schema.json'), 'utf8')) as { columns: Column[] }).columns;
    [{ n: rows }] = (await query(`SELECT count(*)::INTEGER AS n FROM ${table}`)) as Array<{ n: number }>;
  }, 120_000);

  it('has no column typed by absence: every typed leaf holds a value, and the untyped ones are in no part', async () => {
    const typed = leaves(columns).filter((leaf) => leaf.kind !== 'untyped');
    const sql = typed.map((leaf, i) => `count(${leaf.path.map(quoted).join('.')}) AS c${i}`).join(', ');
    const [counts] = await query(`SELECT ${sql} FROM ${table}`);
    expect(typed.filter((_, i) => counts[`c${i}`] === 0).map((leaf) => leaf.path.join('.'))).toEqual([]);
    const untyped = columns.filter((column) => column.kind === 'untyped').map((column) => column.name);
    if (operation === 'forum/subforum') expect(untyped).toEqual(expect.arrayContaining(['media', 'secure_media', 'distinguished', 'all_awardings']));
    const described = await query(`DESCRIBE SELECT * FROM ${table}`);
    expect(described.map((column) => column.column_name).filter((name) => untyped.includes(String(name)))).toEqual([]);
  });

  it('holds no string as quoted JSON text', async () => {
    const strings = leaves(columns).filter((leaf) => leaf.kind === 'string');
    expect(strings.length).toBeGreaterThan(0);
    const sql = strings.map((leaf, i) => `count(*) FILTER (WHERE ${leaf.path.map(quoted).join('.')} LIKE '"%') AS q${i}`).join(', ');
    const [counts] = await query(`SELECT ${sql} FROM ${table}`);
    expect(strings.filter((_, i) => counts[`q${i}`] !== 0).map((leaf) => leaf.path.join('.'))).toEqual([]);
  });

  it('reads as one table in DuckDB, Polars and arrow-rs', () => {
    expect(rows).toBeGreaterThan(40);
    const parts = datasetParts(dir);
    const frame = pl.concat(
      parts.map((part) => pl.readParquet(part)),
      { how: 'diagonalRelaxed' },
    );
    expect(frame.height).toBe(rows);
    const arrowRows = parts.reduce((sum, part) => sum + tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream()).numRows, 0);
    expect(arrowRows).toBe(rows);
  });
});
