/**
 * A nested dataset reads as one table in every reader (docs/datasets.md "Parquet layout"): the sandbox
 * records of every operation, in both dialects, published by two runs whose second brings a new
 * top-level field, a new field inside a struct and a new field in a list's structs, read by DuckDB
 * (`union_by_name`) and Polars over the hive folder and by arrow-rs part by part: the same rows,
 * types by the documented mapping (helpers/readers.ts), the same values. And a flat dataset
 * converted by `compactDataset(dir, { layout: 'nested' })` holds every row it held, once.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DataType as ArrowType, tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExact } from '../../src/exact-json.ts';
import { compactDataset, toDataset } from '../../src/export/index.ts';
import { createClient, operations, type Client, type OperationSpec } from '../../src/index.ts';
import { startSandbox, type Sandbox, type SandboxDialect } from '../../src/sandbox/index.ts';
import { scratchDir } from './helpers/files.ts';
import { parquetColumns, parquetRecords, type Shape } from './helpers/read-back.ts';
import { arrowType, canonicalRow, duckType, expectedType, polarsType, type PolarsType } from './helpers/readers.ts';
import { sandboxParams } from './helpers/sandbox-params.ts';

const root = scratchDir();
const RECORDS = 12;

type Field = { name: string; shape: Shape };
type Walk = (params: Record<string, string | number>) => AsyncIterable<Record<string, unknown>>;

function walkOf(client: Client, op: OperationSpec): Walk {
  const groups = client as unknown as Record<string, Record<string, Walk>>;
  return (params) => groups[op.group][op.method](params);
}

/** The same parameters naming other records: the sandbox derives records from them. */
function laterParams(params: Record<string, string | number>): Record<string, string | number> {
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) => [
      name,
      typeof value !== 'string' ? value : /^\d+$/.test(value) ? String(BigInt(value) + 1n) : value.replace(/-n(\d+)$/, '-later-n$1'),
    ]),
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The second run's records: a new top-level field, a new field in the first object field, and in the structs of the first list of objects. */
async function* evolved(records: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const record of records) {
    const next: Record<string, unknown> = { ...(record as Record<string, unknown>), late_field: 7 };
    const object = Object.keys(next).find((key) => isPlainObject(next[key]) && Object.keys(next[key]).length > 0 && !('0' in next[key]));
    if (object !== undefined) next[object] = { ...(next[object] as object), late_nested: 'x' };
    const list = Object.keys(next).find((key) => Array.isArray(next[key]) && (next[key] as unknown[]).length > 0 && (next[key] as unknown[]).every(isPlainObject));
    if (list !== undefined) next[list] = (next[list] as Record<string, unknown>[]).map((item) => ({ ...item, late_item: 1 }));
    yield next;
  }
}

function parts(dir: string): string[] {
  return execFileSync('find', [dir, '-name', 'part-*.parquet'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).sort();
}

/**
 * The schema file's columns as the shapes a nested part's metadata describes: an `untyped` column
 * (no value typed it yet), a struct of only such fields and a list of such elements are in no part.
 */
function recordedFields(dir: string, op: OperationSpec): { layout: string | undefined; fields: Field[] } {
  type Column = { name: string; kind: string; fields?: Column[]; element?: Column };
  const fieldsOf = (columns: Column[]): Field[] =>
    columns.flatMap((column) => {
      const shape = shapeOf(column);
      return shape === undefined ? [] : [{ name: column.name, shape }];
    });
  const shapeOf = (column: Column): Shape | undefined => {
    if (column.kind === 'untyped') return undefined;
    if (column.kind === 'struct') {
      const struct = fieldsOf(column.fields!);
      return struct.length === 0 ? undefined : { struct };
    }
    if (column.kind !== 'list') return { kind: column.kind };
    const element = shapeOf(column.element!);
    return element === undefined ? undefined : { list: element };
  };
  const schema = JSON.parse(readFileSync(join(dir, '_dataset', op.id.replaceAll('/', '__'), 'schema.json'), 'utf8')) as { parquetLayout?: string; columns: Column[] };
  return { layout: schema.parquetLayout, fields: fieldsOf(schema.columns) };
}

/** Rows in one order, whatever order a reader gave them in. */
function sorted(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const text = (row: unknown) => JSON.stringify(row, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  return [...rows].sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

interface Read {
  rows: number;
  types: Record<string, unknown>;
  values: Array<Record<string, unknown>>;
}

async function duckdbRead(dir: string, fields: Field[]): Promise<Read> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT * EXCLUDE (_date) FROM read_parquet('${dir}/**/*.parquet', union_by_name = true, hive_partitioning = true)`);
    const names = reader.columnNames();
    const types = Object.fromEntries(reader.columnTypes().map((type, i) => [names[i], duckType(type)]));
    const rows = reader.getRowObjectsJS() as Array<Record<string, unknown>>;
    return { rows: rows.length, types, values: sorted(rows.map((row) => canonicalRow(fields, row))) };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Polars over the hive folder, given the schema of the part written last: every part a run writes
 * has the whole recorded schema, and older parts lack only fields added since, which Polars inserts
 * as NULL (`missing_columns` and `cast_options=ScanCastOptions(missing_struct_fields='insert')`).
 */
function polarsRead(dir: string, fields: Field[]): Read {
  const newest = parts(dir).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const frame = pl
    .scanParquet(`${dir}/**/*.parquet`, { hivePartitioning: true, schema: pl.readParquet(newest).schema, missingColumns: 'insert', castOptions: { missingStructFields: 'insert' } })
    .collectSync()
    .drop('_date');
  const types = Object.fromEntries(Object.entries(frame.schema).map(([name, type]) => [name, polarsType(type as PolarsType)]));
  const rows = parseExact(String(frame.writeJSON({ format: 'json' }))) as Array<Record<string, unknown>>;
  return { rows: frame.height, types, values: sorted(rows.map((row) => canonicalRow(fields, row))) };
}

/** arrow-rs part by part (it reads one file); the newest part's types stand for the dataset's. */
function arrowRead(dir: string, fields: Field[]): Read {
  const values: Array<Record<string, unknown>> = [];
  let types: Record<string, unknown> = {};
  let newest = -1;
  for (const part of parts(dir)) {
    const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream());
    values.push(...table.toArray().map((row) => canonicalRow(fields, (row as { toJSON(): Record<string, unknown> }).toJSON())));
    const written = statSync(part).mtimeMs;
    if (written > newest) {
      newest = written;
      types = Object.fromEntries(table.schema.fields.map((field) => [field.name, arrowType(field.type as ArrowType)]));
    }
  }
  return { rows: values.length, types, values: sorted(values) };
}

/** The three readers against the schema file: row count, types by the documented mapping, values. */
async function expectReadersAgree(dir: string, op: OperationSpec, rows: number): Promise<void> {
  const { layout, fields } = recordedFields(dir, op);
  expect(layout).toBe('nested');
  const newest = parts(dir).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const described = await parquetColumns(newest);
  // The part written last carries the whole recorded schema.
  expect(described.fields).toEqual(fields);
  const all = [...fields, { name: described.overflow, shape: { kind: 'json' } }];
  const expected = Object.fromEntries(all.map(({ name, shape }) => [name, expectedType(shape)]));
  const duck = await duckdbRead(dir, all);
  const polars = polarsRead(dir, all);
  const arrow = arrowRead(dir, all);
  for (const read of [duck, polars, arrow]) {
    expect(read.rows).toBe(rows);
    expect(read.types).toEqual(expected);
  }
  expect(polars.values).toEqual(duck.values);
  expect(arrow.values).toEqual(duck.values);
}

/**
 * Every part's records as DuckDB reads them (either layout), rebuilt, with NULL leaves, objects left
 * empty and empty lists dropped: what both layouts agree a record is (a field only ever `[]` types
 * nothing, so the nested layout reads it NULL: docs/types.md).
 */
async function heldRecords(dir: string): Promise<string[]> {
  const prune = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map((item) => prune(item) ?? null);
    if (!isPlainObject(value)) return value ?? undefined;
    const empty = (pruned: unknown) => (isPlainObject(pruned) && Object.keys(pruned).length === 0) || (Array.isArray(pruned) && pruned.length === 0);
    const kept = Object.entries(value).flatMap(([key, item]) => {
      const pruned = prune(item);
      return pruned === undefined || empty(pruned) ? [] : [[key, pruned] as const];
    });
    return Object.fromEntries(kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  };
  const records: string[] = [];
  for (const part of parts(dir)) {
    // DuckDB adds the Hive key of a part's folder to a flat part's columns.
    for (const { _date: _, ...record } of await parquetRecords(part)) records.push(JSON.stringify(prune(record), (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value)));
  }
  return records.sort();
}

for (const dialect of ['spec', 'service'] as const satisfies readonly SandboxDialect[]) {
  describe(`nested datasets of ${dialect}-dialect records`, () => {
    let sandbox: Sandbox;
    let client: Client;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0, slowMs: 0, dialect });
      client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    });
    afterAll(async () => {
      await sandbox?.close();
    });

    describe.each(operations.map((op) => [op.id, op] as const))('%s', (id, op) => {
      it('read as one table in DuckDB, Polars and arrow-rs after a second run added fields at the top, in a struct and in a list of structs', async () => {
        const dir = join(root, `${dialect}-evolve-${id.replaceAll('/', '_')}`);
        const params = sandboxParams(op, RECORDS);
        const first = await toDataset(walkOf(client, op)(params), dir);
        const second = await toDataset(walkOf(client, op)(laterParams(params)), dir, { transform: evolved });
        const rows = (first.dataset?.added ?? 0) + (second.dataset?.added ?? 0);
        expect(rows).toBeGreaterThan(0);
        expect(second.dataset?.drift.added.map(({ column }) => column)).toContain('late_field');
        await expectReadersAgree(dir, op, rows);
      });

      it('keeps every row once when compaction converts a flat dataset to nested, and the readers agree on it', async () => {
        const dir = join(root, `${dialect}-convert-${id.replaceAll('/', '_')}`);
        const summary = await toDataset(walkOf(client, op)(sandboxParams(op, RECORDS)), dir, { layout: 'flat' });
        expect(recordedFields(dir, op).layout).toBe('flat');
        const before = await heldRecords(dir);
        expect(before).toHaveLength(summary.dataset?.added ?? -1);
        const compaction = await compactDataset(dir, { layout: 'nested' });
        expect(compaction.operations.map(({ layout }) => layout)).toEqual([{ before: 'flat', after: 'nested' }]);
        expect(await heldRecords(dir)).toEqual(before);
        await expectReadersAgree(dir, op, before.length);
      });
    });
  });
}
