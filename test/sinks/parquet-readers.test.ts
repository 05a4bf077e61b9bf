/**
 * Every reader agrees (sinks/README.md "Parquet types"): the sandbox records of every operation, in
 * both dialects, written in both layouts and read by DuckDB (@duckdb/node-api), Polars
 * (nodejs-polars) and arrow-rs (parquet-wasm, through apache-arrow). Each reader must give the same
 * row count, the types the file's `socialstream.columns` promises by the documented mapping, and the
 * same values; DuckDB's rebuilt records must match the records leaf for leaf.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBType } from '@duckdb/node-api';
import { DataType as ArrowType, tableFromIPC, Type } from 'apache-arrow';
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

/** A reader's type as one canonical tree, so three readers' names for a type compare. */
type Canonical = string | { struct: Array<[string, Canonical]> } | { list: Canonical };

/** The documented mapping: what each leaf kind, struct and list must read as. */
function expectedType(shape: Shape): Canonical {
  if ('list' in shape) return { list: expectedType(shape.list) };
  if ('struct' in shape) return { struct: shape.struct.map(({ name, shape: child }) => [name, expectedType(child)]) };
  const leaf: Record<string, string> = { integer: 'int64', bigint: 'int64', double: 'float64', boolean: 'bool', string: 'utf8', json: 'utf8', timestamp: 'timestamp[ms]' };
  return leaf[shape.kind];
}

function duckType(type: DuckDBType): Canonical {
  const t = type as DuckDBType & { entryNames?: string[]; entryTypes?: DuckDBType[]; valueType?: DuckDBType };
  const leaf: Record<string, string> = {
    DuckDBBigIntType: 'int64',
    DuckDBDoubleType: 'float64',
    DuckDBBooleanType: 'bool',
    DuckDBVarCharType: 'utf8',
    // DuckDB reads TIMESTAMP_MILLIS as its microsecond TIMESTAMP: the same instants.
    DuckDBTimestampType: 'timestamp[ms]',
  };
  if (t.entryNames !== undefined) return { struct: t.entryNames.map((name, i) => [name, duckType(t.entryTypes![i])]) };
  if (t.valueType !== undefined) return { list: duckType(t.valueType) };
  return leaf[t.constructor.name] ?? t.constructor.name;
}

interface PolarsType {
  variant: string;
  fields?: Array<{ name: string; dtype: PolarsType }>;
  inner?: PolarsType[];
  timeUnit?: string;
}

function polarsType(type: PolarsType): Canonical {
  const leaf: Record<string, string> = { Int64: 'int64', Float64: 'float64', Bool: 'bool', String: 'utf8', Utf8: 'utf8' };
  if (type.variant === 'Struct') return { struct: type.fields!.map((field) => [field.name, polarsType(field.dtype)]) };
  if (type.variant === 'List') return { list: polarsType(type.inner![0]) };
  if (type.variant === 'Datetime') return `timestamp[${type.timeUnit}]`;
  return leaf[type.variant] ?? type.variant;
}

function arrowType(type: ArrowType): Canonical {
  switch (type.typeId) {
    case Type.Int:
      return `int${(type as unknown as { bitWidth: number }).bitWidth}`;
    case Type.Float:
      return 'float64';
    case Type.Bool:
      return 'bool';
    case Type.Utf8:
    case Type.LargeUtf8:
      return 'utf8';
    case Type.Timestamp:
      return (type as unknown as { unit: number }).unit === 1 ? 'timestamp[ms]' : `timestamp unit ${(type as unknown as { unit: number }).unit}`;
    case Type.Struct:
      return { struct: type.children.map((field) => [field.name, arrowType(field.type as ArrowType)]) };
    case Type.List:
    case Type.LargeList:
      return { list: arrowType(type.children[0].type as ArrowType) };
    default:
      return `arrow type ${Type[type.typeId]}`;
  }
}

/** A value as every reader should agree on it: integers as numbers (or digits beyond 2^53), instants as ISO text. */
function canonicalValue(shape: Shape, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if ('list' in shape) return [...(value as Iterable<unknown>)].map((item) => canonicalValue(shape.list, item));
  if ('struct' in shape) {
    const object = (typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value) as Record<string, unknown>;
    return Object.fromEntries(shape.struct.map(({ name, shape: child }) => [name, canonicalValue(child, object[name])]));
  }
  if (shape.kind === 'timestamp') {
    // Polars' JSON writes `2024-01-01 00:00:00.123` (UTC), arrow-rs gives epoch milliseconds, DuckDB a Date.
    if (typeof value === 'string') return new Date(`${value.replace(' ', 'T')}Z`).toISOString();
    return new Date(value instanceof Date ? value.getTime() : Number(value)).toISOString();
  }
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  return value;
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

function canonicalRow(fields: Array<{ name: string; shape: Shape }>, row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(fields.map(({ name, shape }) => [name, canonicalValue(shape, row[name])]));
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
    const differences = records.flatMap((record, i) => leafDifferences(leaves(record, { structs: true }), leaves(back[i], { structs: true })));
    expect(differences.slice(0, 5)).toEqual([]);
  });
});
