/** Reads export files back with readers that are not ours: JSON.parse per line, Python's csv module, DuckDB. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

export function readNdjson(path: string): Record<string, unknown>[] {
  const text = readFileSync(path, 'utf8');
  return text === '' ? [] : text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Rows of a CSV file as Python's csv.DictReader sees them. */
export function readCsvWithPython(path: string): Record<string, string>[] {
  const script = 'import csv, json, sys\nwith open(sys.argv[1], newline="", encoding="utf-8") as f:\n    print(json.dumps(list(csv.DictReader(f))))';
  return JSON.parse(execFileSync('python3', ['-c', script, path], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })) as Record<string, string>[];
}

/** Rows of any file DuckDB can read, with the given SQL over `FILE` (replaced by a reader of `path`). */
export async function queryWithDuckDb(path: string, sql = 'SELECT * FROM FILE'): Promise<Record<string, unknown>[]> {
  const reader = path.endsWith('.parquet') ? `read_parquet('${path}')` : path.endsWith('.csv') ? `read_csv_auto('${path}')` : `read_json_auto('${path}')`;
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    const result = await connection.runAndReadAll(sql.replace('FILE', reader));
    return result.getRowObjectsJS();
  } finally {
    connection.closeSync();
  }
}
