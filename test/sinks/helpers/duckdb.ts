/** DuckDB as an independent reader of the files the sinks write. */
import { DuckDBInstance, DuckDBTimestampValue } from '@duckdb/node-api';

/** Runs `sql` in a fresh in-memory database; BIGINT comes back as number (bigint past 2^53), TIMESTAMP as an ISO string. */
export async function query(sql: string): Promise<Array<Record<string, unknown>>> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(sql);
    return reader.getRowObjects().map((row) => {
      const plain: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(row)) plain[name] = toPlain(value);
      return plain;
    });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Runs `sql` like `query`, with rows as the binding's JS values: STRUCT an object, LIST an array, BIGINT a bigint, TIMESTAMP a Date. */
export async function queryJS(sql: string): Promise<Array<Record<string, unknown>>> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function toPlain(value: unknown): unknown {
  if (typeof value === 'bigint') {
    // Past 2^53 a number would round: the exact value stays a bigint, as the sinks were given it.
    return value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER) ? value : Number(value);
  }
  if (value instanceof DuckDBTimestampValue) return new Date(Number(value.micros / 1000n)).toISOString();
  return value;
}

/** Escapes a file path for a single-quoted SQL string. */
export function sqlPath(path: string): string {
  return `'${path.replace(/'/g, "''")}'`;
}
