/**
 * Every reader agrees (sinks/README.md "Parquet types"): the sandbox records of every operation, in
 * both dialects, written in both layouts and read by DuckDB (@duckdb/node-api), Polars
 * (nodejs-polars) and arrow-rs (parquet-wasm, through apache-arrow). Each reader must give the same
 * row count, the types the file's `socialstream.columns` promises by the documented mapping, and the
 * same values; DuckDB's rebuilt records must match the records leaf for leaf.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DataType as ArrowType, tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExact } from '../../src/exact-json.ts';
import { createClient, operations, type OperationSpec } from '../../src/index.ts';
import { startSandbox, type SandboxDialect } from '../../src/sandbox/index.ts';
import { toParquet } from '../../sinks/index.ts';
import { scratchDir } from './helpers/files.ts';
import { sandboxParams } from './helpers/sandbox-params.ts';
import { leafDifferences, leaves } from './helpers/leaves.ts';
import { nestedRecords, parquetColumns, type Shape } from './helpers/read-back.ts';
import { arrowType, canonicalRow, duckType, expectedType, polarsType, type Canonical, type PolarsType } from './helpers/readers.ts';

const dir = scratchDir();
const RECORDS_PER_OPERATION = 12;

function paramsFor(op: OperationSpec): Record<string, string | number> {
  return sandboxParams(op, RECORDS_PER_OPERATION);
}

async function walk(dialect: SandboxDialect): Promise<Map<string, Array<Record<string, unknown>>>> {
  const sandbox = await startSandbox({ port: 0, slowMs: 0, dialect });
  try {
    const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const groups = client as unknown as Record<string, Record<string, (params: object, options: object) => AsyncIterable<Record<string, unknown>>>>;
    const walked = new Map<string, Array<Record<string, unknown>>>();
    for (const op of operations) {
      const records: Array<Record<string, unknown>> = [];
      for await (const record of groups[op.group][op.method](paramsFor(op), { limit: RECORDS_PER_OPERATION })) records.push(record);
      walked.set(op.id, records);
    }
    return walked;
  } finally {
    await sandbox.close();
  }
}

interface Read {
  rows: number;
  types: Record<string, Canonical>;
  values: Array<Record<string, unknown>>;
}

async function readWithDuckDB(path: string, fields: Array<{ name: string; shape: Shape }>): Promise<Read & { raw: Array<Record<string, unknown>> }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT * FROM '${path}'`);
    const names = reader.columnNames();
    const types = Object.fromEntries(reader.columnTypes().map((type, i) => [names[i], duckType(type)]));
    const raw = reader.getRowObjectsJS() as Array<Record<string, unknown>>;
    return { rows: raw.length, types, values: raw.map((row) => canonicalRow(fields, row)), raw };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function readWithPolars(path: string, fields: Array<{ name: string; shape: Shape }>): Read {
  const frame = pl.readParquet(path);
  const types = Object.fromEntries(Object.entries(frame.schema).map(([name, type]) => [name, polarsType(type as PolarsType)]));
  // The binding's `toRecords` cannot turn a struct inside a list into JS values; Polars' own JSON can
  // (read exactly: an INT64 past 2^53 keeps its digits).
  const rows = parseExact(String(frame.writeJSON({ format: 'json' }))) as Array<Record<string, unknown>>;
  return { rows: frame.height, types, values: rows.map((row) => canonicalRow(fields, row)) };
}

function readWithArrow(path: string, fields: Array<{ name: string; shape: Shape }>): Read {
  const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
  const types = Object.fromEntries(table.schema.fields.map((field) => [field.name, arrowType(field.type as ArrowType)]));
  const rows = table.toArray().map((row) => (row as { toJSON(): Record<string, unknown> }).toJSON());
  return { rows: table.numRows, types, values: rows.map((row) => canonicalRow(fields, row)) };
}

/** The fields of a file in either layout, as shapes: a flat file's columns are leaves of the root. */
async function fieldsOf(path: string): Promise<Array<{ name: string; shape: Shape }>> {
  const described = await parquetColumns(path);
  const fields = described.layout === 'nested' ? described.fields : described.columns.map(({ name, kind }) => ({ name, shape: { kind } }));
  return [...fields, { name: described.overflow, shape: { kind: 'json' } }];
}

const walked = new Map<SandboxDialect, Map<string, Array<Record<string, unknown>>>>();

beforeAll(async () => {
  for (const dialect of ['spec', 'service'] as const) walked.set(dialect, await walk(dialect));
}, 120_000);

afterAll(() => undefined);

const cases = (['spec', 'service'] as const).flatMap((dialect) =>
  (['nested', 'flat'] as const).flatMap((layout) => operations.map((op) => [dialect, layout, op.id] as const)),
);

describe.each(cases)('Parquet of %s-dialect records, %s layout: %s', (dialect, layout, id) => {
  it('reads the same in DuckDB, Polars and arrow-rs: row count, types by the documented mapping, values', async () => {
    const records = walked.get(dialect)!.get(id)!;
    expect(records.length).toBeGreaterThan(0);
    const path = join(dir, `${dialect}-${layout}-${id.replace(/\//g, '_')}.parquet`);
    await toParquet(records, path, { layout });
    const fields = await fieldsOf(path);
    const expected = Object.fromEntries(fields.map(({ name, shape }) => [name, expectedType(shape)]));
    const duck = await readWithDuckDB(path, fields);
    const polars = readWithPolars(path, fields);
    const arrow = readWithArrow(path, fields);
    for (const read of [duck, polars, arrow]) {
      expect(read.rows).toBe(records.length);
      expect(read.types).toEqual(expected);
    }
    expect(polars.values).toEqual(duck.values);
    expect(arrow.values).toEqual(duck.values);
  });
});

describe.each(operations.map((op) => op.id))('nested Parquet of %s', (id) => {
  it('gives back every leaf of every record when DuckDB reads it', async () => {
    const records = walked.get('spec')!.get(id)!;
    const path = join(dir, `leaves-${id.replace(/\//g, '_')}.parquet`);
    await toParquet(records, path);
    const described = await parquetColumns(path);
    expect(described.layout).toBe('nested');
    const back = nestedRecords((await readWithDuckDB(path, [])).raw, described);
    // A field only ever `[]` or `{}` (or objects of nulls) types nothing: it is no column, and reads NULL (docs/types.md).
    const typedNothing = (difference: string) => /^missing .* = "(\{\}|\[\])"$/.test(difference);
    const differences = records.flatMap((record, i) => leafDifferences(leaves(record, { structs: true }), leaves(back[i], { structs: true })).filter((d) => !typedNothing(d)));
    expect(differences.slice(0, 5)).toEqual([]);
  });
});
