/** Records rebuilt from files the sinks wrote, as independent readers (DuckDB, python3 csv) see them. */
import { query, sqlPath } from './duckdb.ts';
import { readCsvWithPython } from './files.ts';
import { rebuild } from './leaves.ts';

interface ColumnsMetadata {
  columns: Array<{ name: string; kind: string }>;
  overflow: string;
}

/** The `socialstream.columns` key-value metadata of a Parquet file, read by DuckDB. */
export async function parquetColumns(path: string): Promise<ColumnsMetadata> {
  const [row] = await query(
    `SELECT decode(value) AS value FROM parquet_kv_metadata(${sqlPath(path)}) WHERE decode(key) = 'socialstream.columns'`,
  );
  return JSON.parse(row.value as string) as ColumnsMetadata;
}

/** Every row of a Parquet file read by DuckDB, rebuilt into a record (JSON columns parsed). */
export async function parquetRecords(path: string): Promise<Array<Record<string, unknown>>> {
  const { columns, overflow } = await parquetColumns(path);
  const json = new Set(columns.filter((column) => column.kind === 'json').map((column) => column.name));
  const rows = await query(`SELECT * FROM ${sqlPath(path)}`);
  return rows.map((row) => rebuild(row, overflow, (column, cell) => (json.has(column) ? JSON.parse(cell as string) : cell)));
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
