/**
 * A Parquet file, or a dataset's parts, as the three independent readers give them back: DuckDB (the
 * documented read), Polars (every part, concatenated diagonally) and arrow-rs (parquet-wasm, part by
 * part).
 */
import { datasetParts } from './dataset-parts.ts';
import { readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { parseExact } from '../../../src/exact-json.ts';
import { queryJS, sqlPath } from '../../sinks/helpers/duckdb.ts';

/** Plain JSON values: bigints as their digits, so three readers' rows compare alike. */
export function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_, each: unknown) => (typeof each === 'bigint' ? (Number.isSafeInteger(Number(each)) ? Number(each) : String(each)) : each))) as unknown;
}

export function partsOf(target: string): string[] {
  if (target.endsWith('.parquet')) return [target];
  return datasetParts(target);
}

/**
 * `columns` of every row, by `id`, as DuckDB (the documented read, `union_by_name`), Polars (every
 * part, concatenated diagonally) and arrow-rs (part by part) give them back.
 */
export async function readThree(target: string, columns: readonly string[]): Promise<Array<Array<Record<string, unknown>>>> {
  const glob = target.endsWith('.parquet') ? target : `${target}/**/*.parquet`;
  const pick = (row: Record<string, unknown>) => plain(Object.fromEntries(['id', ...columns].map((name) => [name, row[name] ?? null]))) as Record<string, unknown>;
  const byId = (rows: Array<Record<string, unknown>>) => rows.map(pick).sort((a, b) => String(a.id).localeCompare(String(b.id)));
  const duck = await queryJS(`SELECT * FROM read_parquet(${sqlPath(glob)}, hive_partitioning = true, union_by_name = true)`);
  const frames = partsOf(target).map((part) => pl.readParquet(part));
  const polars = parseExact(String(pl.concat(frames, { how: 'diagonalRelaxed' }).writeJSON({ format: 'json' }))) as Array<Record<string, unknown>>;
  const arrow = partsOf(target).flatMap((part) =>
    tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream())
      .toArray()
      .map((row) => (row as { toJSON(): Record<string, unknown> }).toJSON()),
  );
  return [byId(duck), byId(polars), byId(arrow.map((row) => plain(row) as Record<string, unknown>))];
}

/** DuckDB's type of `column` over the dataset or file. */
export async function duckType(target: string, column: string): Promise<string | undefined> {
  const glob = target.endsWith('.parquet') ? target : `${target}/**/*.parquet`;
  const rows = await queryJS(`DESCRIBE SELECT * FROM read_parquet(${sqlPath(glob)}, hive_partitioning = true, union_by_name = true)`);
  return rows.find((row) => row.column_name === column)?.column_type as string | undefined;
}
