/** Records rebuilt from files the sinks wrote, as independent readers (DuckDB, python3 csv) see them. */
import { query, queryJS, sqlPath } from './duckdb.ts';
import { readCsvWithPython } from './files.ts';
import { rebuild } from './leaves.ts';

/** A nested file's field shape, as `socialstream.columns` describes it (sinks/README.md). */
export type Shape = { kind: string } | { struct: Array<{ name: string; shape: Shape }> } | { list: Shape };

interface ColumnsMetadata {
  layout?: 'flat' | 'nested';
  columns: Array<{ name: string; kind: string }>;
  fields: Array<{ name: string; shape: Shape }>;
  overflow: string;
}

/** The `socialstream.columns` key-value metadata of a Parquet file, read by DuckDB. */
export async function parquetColumns(path: string): Promise<ColumnsMetadata> {
  const [row] = await query(
    `SELECT decode(value) AS value FROM parquet_kv_metadata(${sqlPath(path)}) WHERE decode(key) = 'socialstream.columns'`,
  );
  return JSON.parse(row.value as string) as ColumnsMetadata;
}

/** Every row of a Parquet file read by DuckDB, rebuilt into a record (JSON columns parsed), in either layout. */
export async function parquetRecords(path: string): Promise<Array<Record<string, unknown>>> {
  const described = await parquetColumns(path);
  if (described.layout === 'nested') return nestedRecords(await queryJS(`SELECT * FROM ${sqlPath(path)}`), described);
  const { columns, overflow } = described;
  const json = new Set(columns.filter((column) => column.kind === 'json').map((column) => column.name));
  const rows = await query(`SELECT * FROM ${sqlPath(path)}`);
  return rows.map((row) => rebuild(row, overflow, (column, cell) => (json.has(column) ? JSON.parse(cell as string) : cell)));
}

/**
 * Rows of a nested file as a reader gives them (structs as objects, lists as arrays, INT64 as
 * bigint, TIMESTAMP as Date), rebuilt into records: JSON leaves parsed, `_extra` put back.
 */
export function nestedRecords(rows: Array<Record<string, unknown>>, described: Pick<ColumnsMetadata, 'fields' | 'overflow'>): Array<Record<string, unknown>> {
  return rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const { name, shape } of described.fields) {
      const value = decodeNested(shape, row[name]);
      if (value !== null && value !== undefined) record[name] = value;
    }
    return rebuild({ [described.overflow]: row[described.overflow] }, described.overflow, () => undefined, record);
  });
}

function decodeNested(shape: Shape, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if ('kind' in shape) {
    if (shape.kind === 'json') return JSON.parse(value as string);
    if (shape.kind === 'timestamp') return (value as Date).toISOString();
    if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value;
    return value;
  }
  if ('list' in shape) return (value as unknown[]).map((item) => decodeNested(shape.list, item));
  const object = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const { name, shape: child } of shape.struct) {
    const item = decodeNested(child, object[name]);
    if (item !== null) out[name] = item;
  }
  return out;
}

/** CSV cells are text; a cell holding a kept-as-JSON value (array or object) is parsed back. */
function decodeCsvCell(_column: string, cell: unknown): unknown {
  const text = cell as string;
  return text.startsWith('[') || text.startsWith('{') ? JSON.parse(text) : text;
}

/** CSV rows (objects keyed by header, empty fields null) rebuilt into records. */
export function csvRecords(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return rows.map((row) => rebuild(row, '_extra', decodeCsvCell));
}

/** A CSV file's rows as python3's csv module reads them, keyed by the header; empty fields are null. */
export function pythonCsvRows(path: string): Array<Record<string, unknown>> {
  const [header, ...rows] = readCsvWithPython(path);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] === '' ? null : row[i]])));
}
