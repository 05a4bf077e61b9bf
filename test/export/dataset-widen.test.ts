/**
 * A widened column reaches every part (issue 39, item 2; docs/datasets.md "Stable schema"): a run
 * that widens `score` from integers to doubles into one month rewrites, before it reports, the
 * parts of the months it did not touch, one partition at a time, so every part holds the one type
 * and DuckDB, the Polars recipe of docs/guide/datasets.md and arrow-rs (part by part) read one table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, describe, expect, it } from 'vitest';
import { describeSummary } from '../../src/export/index.ts';
import { datasetParts } from './helpers/dataset-parts.ts';
import { closeServed, recordsIntoDataset, type FlatSummary } from './helpers/served-records.ts';
import { queryJS, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

afterAll(closeServed);

const root = scratchDir();
let counter = 0;
/** 2025-09-04, 2025-10-09 and 2025-11-21, in seconds: three months, three partitions. */
const SEPTEMBER = 1_757_000_000;
const OCTOBER = 1_760_000_000;
const NOVEMBER = 1_763_700_000;
const EXPECTED = [
  { id: 'a1', score: 3 },
  { id: 'a2', score: 4 },
  { id: 'b1', score: 5 },
  { id: 'c1', score: 0.5 },
];

/** Run 1 writes `score` as integers to September and October; run 2 writes a double to November alone. */
async function widened(layout: 'flat' | 'nested'): Promise<{ dir: string; summary: FlatSummary }> {
  const dir = join(root, `widen-${++counter}`);
  await recordsIntoDataset(
    [
      { id: 'a1', created_utc: SEPTEMBER, score: 3 },
      { id: 'a2', created_utc: SEPTEMBER + 60, score: 4 },
      { id: 'b1', created_utc: OCTOBER, score: 5 },
    ],
    dir,
    { layout, params: { subforum: 'first' } },
  );
  const summary = await recordsIntoDataset([{ id: 'c1', created_utc: NOVEMBER, score: 0.5 }], dir, { layout, params: { subforum: 'second' } });
  return { dir, summary };
}

/** Each part as arrow-rs reads it alone: `score`'s type and the rows' ids and scores. */
function arrowParts(dir: string): { type: string; rows: { id: string; score: number }[] }[] {
  return datasetParts(dir).map((part) => {
    const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream());
    const rows = table.toArray().map((row) => {
      const { id, score } = (row as { toJSON(): { id: string; score: number } }).toJSON();
      return { id, score };
    });
    return { type: String(table.schema.fields.find((field) => field.name === 'score')?.type), rows };
  });
}

/** The recipe of docs/guide/datasets.md, as written there for Node: the schema from the dataset's schema file. */
function polarsTable(dir: string): pl.DataFrame {
  const schema = pl.readParquet(readFileSync(join(dir, '_dataset/forum__subforum/schema.parquet-schema'))).schema;
  return pl
    .scanParquet(`${dir}/forum/subforum/**/*.parquet`, { hivePartitioning: true, schema, missingColumns: 'insert', castOptions: { missingStructFields: 'insert' } })
    .collectSync();
}

describe.each(['flat', 'nested'] as const)('a %s dataset whose second run widens a column into one month of three', (layout) => {
  it('holds the widened type in every part once the run has reported, the months it did not touch too', async () => {
    const { dir } = await widened(layout);
    const each = arrowParts(dir);
    expect(each).toHaveLength(3);
    expect(each.map((part) => part.type)).toEqual(['Float64', 'Float64', 'Float64']);
  });

  it('reads as one table with the exact values in DuckDB, the Polars recipe and arrow-rs part by part', async () => {
    const { dir } = await widened(layout);
    const glob = sqlPath(`${dir}/forum/subforum/**/*.parquet`);
    expect(await queryJS(`SELECT id, score FROM read_parquet(${glob}, hive_partitioning = true, union_by_name = true) ORDER BY id`)).toEqual(EXPECTED);
    const polars = polarsTable(dir).select('id', 'score').sort('id');
    expect(String(polars.getColumn('score').dtype)).toBe('DataType(Float64)');
    expect(polars.toRecords()).toEqual(EXPECTED);
    const arrow = arrowParts(dir);
    expect(new Set(arrow.map((part) => part.type))).toEqual(new Set(['Float64']));
    expect(arrow.flatMap((part) => part.rows).sort((a, b) => a.id.localeCompare(b.id))).toEqual(EXPECTED);
  });

  it('says in its summary how many partitions it rewrote to the widened types', async () => {
    const { summary } = await widened(layout);
    expect(summary.drift.widened).toEqual([{ column: 'score', from: 'integer', to: 'double' }]);
    expect(summary.widening?.partitions).toBe(2);
    expect(describeSummary(summary)).toMatch(/\n {2}rewrote 2 partitions to the widened types in \d+\.\d s/);
  });
});

describe('two writers at once, one of whose runs widens a column', () => {
  it('leave the rewrite to one of them, and every part ends with the widened type and every value', async () => {
    const dir = join(root, `widen-${++counter}`);
    await recordsIntoDataset(
      [
        { id: 'a1', created_utc: SEPTEMBER, score: 3 },
        { id: 'b1', created_utc: OCTOBER, score: 5 },
      ],
      dir,
      { params: { subforum: 'first' } },
    );
    const summaries = await Promise.all([
      recordsIntoDataset([{ id: 'c1', created_utc: NOVEMBER, score: 0.5 }], dir, { params: { subforum: 'widens' }, writer: 'w1' }),
      recordsIntoDataset([{ id: 'a2', created_utc: SEPTEMBER + 60, score: 4 }], dir, { params: { subforum: 'narrow' }, writer: 'w2' }),
    ]);
    expect(summaries.filter((summary) => summary.widening !== undefined)).toHaveLength(1);
    expect(arrowParts(dir).map((part) => part.type)).toEqual(['Float64', 'Float64', 'Float64']);
    const glob = sqlPath(`${dir}/forum/subforum/**/*.parquet`);
    expect(await queryJS(`SELECT id, score FROM read_parquet(${glob}, hive_partitioning = true, union_by_name = true) ORDER BY id`)).toEqual(EXPECTED);
  });
});
