/**
 * Three readers' types and values as one canonical form (sinks/README.md "Parquet types"), so DuckDB
 * (@duckdb/node-api), Polars (nodejs-polars) and arrow-rs (parquet-wasm, through apache-arrow)
 * compare: the documented mapping from a field's shape to each reader's type, and values as every
 * reader should agree on them.
 */
import type { DuckDBType } from '@duckdb/node-api';
import { DataType as ArrowType, Type } from 'apache-arrow';
import type { Shape } from './read-back.ts';

/** A reader's type as one canonical tree, so three readers' names for a type compare. */
export type Canonical = string | { struct: Array<[string, Canonical]> } | { list: Canonical };

/** The documented mapping: what each leaf kind, struct and list must read as. */
export function expectedType(shape: Shape): Canonical {
  if ('list' in shape) return { list: expectedType(shape.list) };
  if ('struct' in shape) return { struct: shape.struct.map(({ name, shape: child }) => [name, expectedType(child)]) };
  const leaf: Record<string, string> = { integer: 'int64', bigint: 'int64', double: 'float64', boolean: 'bool', string: 'utf8', json: 'utf8', timestamp: 'timestamp[ms]' };
  return leaf[shape.kind];
}

export function duckType(type: DuckDBType): Canonical {
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

export interface PolarsType {
  variant: string;
  fields?: Array<{ name: string; dtype: PolarsType }>;
  inner?: PolarsType[];
  timeUnit?: string;
}

export function polarsType(type: PolarsType): Canonical {
  const leaf: Record<string, string> = { Int64: 'int64', Float64: 'float64', Bool: 'bool', String: 'utf8', Utf8: 'utf8' };
  if (type.variant === 'Struct') return { struct: type.fields!.map((field) => [field.name, polarsType(field.dtype)]) };
  if (type.variant === 'List') return { list: polarsType(type.inner![0]) };
  if (type.variant === 'Datetime') return `timestamp[${type.timeUnit}]`;
  return leaf[type.variant] ?? type.variant;
}

export function arrowType(type: ArrowType): Canonical {
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
export function canonicalValue(shape: Shape, value: unknown): unknown {
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

export function canonicalRow(fields: Array<{ name: string; shape: Shape }>, row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(fields.map(({ name, shape }) => [name, canonicalValue(shape, row[name])]));
}
