/**
 * Merges keep every value and type (issue 20, item 2): a publish reads old parts back and writes
 * them again, so every column of every operation must come back as the type it was written, in both
 * sandbox dialects. Checked by DuckDB: column types, non-null counts per column, and every row.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox, type SandboxDialect } from '../../src/sandbox/index.ts';
import { toDataset } from '../../src/export/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

const root = scratchDir();
let counter = 0;

interface Case {
  operation: string;
  key: string;
  /** Records of the walk: enough that some numeric column repeats values and is dictionary-encoded. */
  count: number;
  walk: (client: Client, name: string) => AsyncIterable<unknown>;
}

const CASES: Case[] = [
  { operation: 'shortvideo/videos', key: 'aweme_id', count: 60, walk: (c, name) => c.shortvideo.videos({ handle: `${name}-n60` }) },
  { operation: 'forum/subforum', key: 'id', count: 400, walk: (c, name) => c.forum.subforum({ subforum: `${name}-n400`, sort: 'new' }) },
  {
    operation: 'videosite/video/comments',
    key: 'id',
    count: 60,
    walk: (c, name) => c.videosite.videoComments({ url: `https://videosite.example/watch?v=${name}-n60`, order: 'newest' }),
  },
];

/** The DuckDB type each recorded leaf kind must read as. */
const DUCKDB_TYPE: Record<string, string> = { integer: 'BIGINT', bigint: 'BIGINT', double: 'DOUBLE', boolean: 'BOOLEAN', string: 'VARCHAR', json: 'VARCHAR' };

/** A column of the schema file: a leaf, or in a nested dataset a struct or list too. */
interface Column {
  name: string;
  kind: string;
  fields?: Column[];
  element?: Omit<Column, 'name'>;
}

/**
 * The DuckDB type of a recorded column: a STRUCT of its fields' types, a list of its element's, or
 * its leaf kind's; undefined for an untyped one, which no part holds (nor a struct of untyped fields).
 */
function duckdbType(column: Omit<Column, 'name'>): string | undefined {
  if (column.kind === 'struct') {
    const fields = column.fields!.flatMap((field) => {
      const type = duckdbType(field);
      return type === undefined ? [] : [`${field.name} ${type}`];
    });
    return fields.length === 0 ? undefined : `STRUCT(${fields.join(', ')})`;
  }
  if (column.kind === 'list') {
    const element = duckdbType(column.element!);
    return element === undefined ? undefined : `${element}[]`;
  }
  return DUCKDB_TYPE[column.kind];
}

/** The leaves a record reaches through structs, by the dotted path `_extra` names them with. */
function leaves(columns: readonly Column[], prefix = ''): Column[] {
  return columns.flatMap((column) => {
    const name = prefix === '' ? column.name : `${prefix}.${column.name}`;
    return column.kind === 'struct' ? leaves(column.fields!, name) : [{ ...column, name }];
  });
}

const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

function recordedSchema(dir: string, operation: string): Column[] {
  const path = join(dir, '_dataset', operation.replaceAll('/', '__'), 'schema.json');
  return (JSON.parse(readFileSync(path, 'utf8')) as { columns: Column[] }).columns;
}

/** What DuckDB sees: each column's type, its non-null count, and every row in key order. */
async function snapshot(dir: string, key: string) {
  const types = Object.fromEntries(
    (await query(`DESCRIBE SELECT * EXCLUDE (_date) FROM ${table(dir)}`)).map((row) => [String(row.column_name), String(row.column_type)]),
  );
  const names = Object.keys(types);
  const [counts] = await query(`SELECT ${names.map((name, i) => `count(${quoted(name)}) AS c${i}`).join(', ')} FROM ${table(dir)}`);
  const filled = Object.fromEntries(names.map((name, i) => [name, counts[`c${i}`]]));
  // A re-run fetches every record again: its `_fetched_at` is the one value that moves.
  const rows = await query(`SELECT * EXCLUDE (_date, _fetched_at) FROM ${table(dir)} ORDER BY ${quoted(key)}`);
  return { types, filled, rows };
}

/** Keys of `_extra` that name a schema column whose kind holds the value: a value moved out of its column. */
function misplaced(rows: Array<Record<string, unknown>>, schema: Column[]): string[] {
  const kinds = new Map(leaves(schema).map((column) => [column.name, column.kind]));
  const holds = (kind: string | undefined, value: unknown): boolean =>
    kind === 'json' ||
    (kind === 'string' && typeof value === 'string') ||
    (kind === 'double' && typeof value === 'number') ||
    (kind === 'integer' && Number.isSafeInteger(value)) ||
    (kind === 'boolean' && typeof value === 'boolean');
  return rows.flatMap((row) => {
    if (typeof row._extra !== 'string') return [];
    const extra = JSON.parse(row._extra) as Record<string, unknown>;
    return Object.keys(extra).filter((name) => holds(kinds.get(name), extra[name]));
  });
}

for (const dialect of ['spec', 'service'] as const satisfies readonly SandboxDialect[]) {
  describe(`merging parts of the ${dialect} dialect`, () => {
    let sandbox: Sandbox;
    let client: Client;
    beforeEach(async () => {
      sandbox = await startSandbox({ port: 0, dialect });
      client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    });
    afterEach(async () => {
      await sandbox?.close();
    });

    for (const { operation, key, count: total, walk } of CASES) {
      it.each(['nested', 'flat'] as const)(`keeps every column type and value of ${operation} through an identical re-run and a run with new records (%s)`, async (layout) => {
        const dir = join(root, `merge-${++counter}`);
        const name = `merge-${dialect}-${counter}`;
        // One partition: every publish reads every old row back and writes it again.
        await toDataset(walk(client, name), dir, { partition: 'none', layout });
        const schema = recordedSchema(dir, operation);
        const first = await snapshot(dir, key);
        expect(first.rows).toHaveLength(total);
        // DuckDB quotes a struct field's name only where SQL needs it (`"name"`, not `channelId`).
        const unquoted = (type: string | undefined) => type?.replaceAll('"', '');
        for (const column of schema) expect([column.name, unquoted(first.types[column.name])]).toEqual([column.name, unquoted(duckdbType(column))]);
        expect(leaves(schema).filter((column) => column.kind === 'integer' || column.kind === 'double').length).toBeGreaterThan(1);
        expect(misplaced(first.rows, schema)).toEqual([]);

        const again = await toDataset(walk(client, name), dir);
        expect(again.dataset?.updated).toBeGreaterThan(0);
        expect(await snapshot(dir, key)).toEqual(first);

        sandbox.advance({ records: 10 });
        await toDataset(walk(client, name), dir);
        const grown = await snapshot(dir, key);
        expect(grown.rows).toHaveLength(total + 10);
        expect(grown.types).toEqual(first.types);
        // Counters of old records change (advance), but no typed cell may turn NULL: a column every row
        // filled is filled in every row still, and none holds fewer values than before.
        for (const [column, count] of Object.entries(first.filled)) {
          expect([column, grown.filled[column]]).toEqual([column, count === total ? total + 10 : expect.any(Number)]);
          expect(Number(grown.filled[column])).toBeGreaterThanOrEqual(Number(count));
        }
        expect(misplaced(grown.rows, recordedSchema(dir, operation))).toEqual([]);
      });
    }
  });
}
