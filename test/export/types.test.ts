/**
 * Types decided by every value seen (docs/types.md, § 8 "Stable schema"): null, `[]`
 * and `{}` type nothing, the first real value does, in whichever run it comes; integers and doubles
 * make a double, numbers and text a string of the digits; a value no widening holds goes to `_extra`
 * by path, and strings are never JSON text. Each case is written as a Parquet file (its first value
 * after the sample) and as a dataset over several runs (served over HTTP, through the engine), and
 * read back by DuckDB, Polars and arrow-rs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, describe, expect, it } from 'vitest';
import { toParquet } from '../../sinks/index.ts';
import { describeDrift } from '../../src/export/summary.ts';
import { queryJS, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { duckType, partsOf, readThree } from './helpers/read-three.ts';
import { closeServed, recordsIntoDataset, type FlatSummary } from './helpers/served-records.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);

afterAll(closeServed);

/** The records as one Parquet file; `sampleSize` 1: its sample holds only the first run's first record. */
async function asFile(runs: ReadonlyArray<ReadonlyArray<Record<string, unknown>>>, sampleSize?: number): Promise<string> {
  const path = join(fresh('file'), 'records.parquet');
  await toParquet(runs.flat(), path, { sampleSize });
  return path;
}

/** The records as a dataset, one run each, one partition (every run merges into the part). */
async function asDataset(runs: ReadonlyArray<ReadonlyArray<Record<string, unknown>>>): Promise<{ dir: string; summaries: FlatSummary[] }> {
  const dir = fresh('dataset');
  const summaries: FlatSummary[] = [];
  for (const [i, records] of runs.entries()) summaries.push(await recordsIntoDataset(records, dir, { params: { subforum: `run${i}` }, partition: 'none' }));
  return { dir, summaries };
}

interface Case {
  name: string;
  runs: Array<Array<Record<string, unknown>>>;
  column: string;
  type: string;
  /** The column's values by id, as every reader must give them back. */
  values: unknown[];
  /**
   * The file's sample: 1 where the first real value comes after it (a field no value typed is added
   * by its first real one); the default where the widening is in the sample (widenings after it,
   * which the file fixes up as it closes: file-types.test.ts).
   */
  sampleSize?: number;
}

const CASES: Case[] = [
  {
    name: 'a field null at first, then an object, is a STRUCT of the object',
    runs: [[{ id: 'a', avatar: null }], [{ id: 'b', avatar: { url: 'https://x/b.png' } }]],
    column: 'avatar',
    sampleSize: 1,
    type: 'STRUCT(url VARCHAR)',
    values: [null, { url: 'https://x/b.png' }],
  },
  {
    name: 'a field only [] at first, then a list of strings, is a list of strings',
    runs: [[{ id: 'a', tags: [] }], [{ id: 'b', tags: ['x', 'y'] }]],
    column: 'tags',
    sampleSize: 1,
    type: 'VARCHAR[]',
    values: [null, ['x', 'y']],
  },
  {
    name: 'a field only {} at first, then an object, is a STRUCT of the object',
    runs: [[{ id: 'a', meta: {} }], [{ id: 'b', meta: { plays: 3 } }]],
    column: 'meta',
    sampleSize: 1,
    type: 'STRUCT(plays BIGINT)',
    values: [null, { plays: 3 }],
  },
  {
    name: 'a field only an object of {} and [] at first, then a list of integers, is a list of integers',
    runs: [[{ id: 'a', m: { x: {}, y: [] } }], [{ id: 'b', m: [1, 2] }]],
    column: 'm',
    sampleSize: 1,
    type: 'BIGINT[]',
    values: [null, [1, 2]],
  },
  {
    name: 'a field only a list of nulls at first, then an object, is a STRUCT of the object',
    runs: [[{ id: 'a', n: [null, []] }], [{ id: 'b', n: { k: 1 } }]],
    column: 'n',
    sampleSize: 1,
    type: 'STRUCT(k BIGINT)',
    values: [null, { k: 1 }],
  },
  {
    name: 'a ratio sent as 1.0, then 0.81, is a double',
    runs: [[{ id: 'a', upvote_ratio: 1.0 }], [{ id: 'b', upvote_ratio: 0.81 }]],
    column: 'upvote_ratio',
    type: 'DOUBLE',
    values: [1, 0.81],
  },
  {
    name: 'ids sent as numbers, then as strings, are strings of the digits',
    runs: [[{ id: 'a', ref: 17 }], [{ id: 'b', ref: 'r18' }]],
    column: 'ref',
    type: 'VARCHAR',
    values: ['17', 'r18'],
  },
];

describe.each(CASES)('$name', ({ runs, column, type, values, sampleSize }) => {
  it('in a file, as DuckDB, Polars and arrow-rs read it', async () => {
    const path = await asFile(runs, sampleSize);
    expect(await duckType(path, column)).toBe(type);
    for (const rows of await readThree(path, [column])) expect(rows.map((row) => row[column])).toEqual(values);
  });

  it('in a dataset over two runs, as DuckDB, Polars and arrow-rs read it', async () => {
    const { dir } = await asDataset(runs);
    expect(await duckType(dir, column)).toBe(type);
    for (const rows of await readThree(dir, [column])) expect(rows.map((row) => row[column])).toEqual(values);
  });
});

describe('one object id among string ids', () => {
  const runs = [[{ id: 'a', ref: 'p0' }, { id: 'b', ref: 'p1' }], [{ id: 'c', ref: { nested: 1 } }]];

  it('keeps the column text, unquoted, and puts the object in _extra by its path, in a file', async () => {
    const path = await asFile(runs);
    expect(await duckType(path, 'ref')).toBe('VARCHAR');
    for (const rows of await readThree(path, ['ref', '_extra'])) {
      expect(rows.map((row) => row.ref)).toEqual(['p0', 'p1', null]);
      expect(JSON.parse(String(rows[2]._extra))).toEqual({ ref: { nested: 1 } });
    }
    expect(await queryJS(`SELECT id FROM ${sqlPath(path)} WHERE ref = 'p0'`)).toEqual([{ id: 'a' }]);
  });

  it('keeps the column text in a dataset, and the drift line says one value went to _extra', async () => {
    const { dir, summaries } = await asDataset(runs);
    expect(summaries[1].drift.conflicting).toEqual([{ column: 'ref', recorded: 'string', seen: 'struct', values: 1 }]);
    for (const rows of await readThree(dir, ['ref', '_extra'])) {
      expect(rows.map((row) => row.ref)).toEqual(['p0', 'p1', null]);
      expect(JSON.parse(String(rows[2]._extra))).toEqual({ ref: { nested: 1 } });
    }
  });
});

describe('a dataset column a later run widens', () => {
  it('records the wider type and says so in the drift line', async () => {
    const { dir, summaries } = await asDataset([[{ id: 'a', score: 1 }], [{ id: 'b', score: 2.5 }], [{ id: 'c', score: 'n/a' }]]);
    expect(summaries[1].drift.widened).toEqual([{ column: 'score', from: 'integer', to: 'double' }]);
    expect(summaries[2].drift.widened).toEqual([{ column: 'score', from: 'double', to: 'string' }]);
    for (const rows of await readThree(dir, ['score'])) expect(rows.map((row) => row.score)).toEqual(['1', '2.5', 'n/a']);
  });

  it('never narrows or flips a kind when a later run brings fewer values of it', async () => {
    const { dir, summaries } = await asDataset([[{ id: 'a', flag: 'yes' }], [{ id: 'b', flag: true }, { id: 'c', flag: false }]]);
    expect(summaries[1].drift.conflicting).toEqual([{ column: 'flag', recorded: 'string', seen: 'boolean', values: 2 }]);
    expect(await duckType(dir, 'flag')).toBe('VARCHAR');
  });

  it('has a drift line that says what widened and how many values went to _extra, by path', async () => {
    const { summaries } = await asDataset([[{ id: 'a', score: 1, flag: 'yes' }], [{ id: 'b', score: 2.5, flag: true }, { id: 'c', score: 3, flag: false }]]);
    expect(describeDrift(summaries[1].drift)).toBe('schema drift: 1 widened (score: integer → double), 2 values to _extra (flag: string ← boolean, 2 values)');
  });
});

describe('parts written before a widening', () => {
  /** Each part's physical type of `column`, as arrow-rs reads the part alone. */
  const partTypes = (dir: string, column: string) =>
    partsOf(dir).map((part) => String(tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream()).schema.fields.find((field) => field.name === column)?.type));

  /** A dataset of two months whose second run widened `ratio`: it writes its own partition, then rewrites the first month's part. */
  async function widened(name: string): Promise<{ dir: string; summary: FlatSummary }> {
    const dir = fresh(name);
    await recordsIntoDataset([{ id: 'a', created_utc: 1_760_000_000, ratio: 1 }], dir, { params: { subforum: 'w1' } });
    const summary = await recordsIntoDataset([{ id: 'b', created_utc: 1_763_700_000, ratio: 0.81 }], dir, { params: { subforum: 'w2' } });
    return { dir, summary };
  }

  // A kill -9 in the middle of that rewrite is finished by the next run: test/cli/dataset-widen-kill.test.ts.
  it('are rewritten to the recorded type by the run that widened, which then reads as one type in DuckDB, Polars and arrow-rs', async () => {
    const { dir, summary } = await widened('widened-parts');
    expect(summary.drift.widened).toEqual([{ column: 'ratio', from: 'integer', to: 'double' }]);
    expect(partTypes(dir, 'ratio')).toEqual(['Float64', 'Float64']);
    for (const rows of await readThree(dir, ['ratio'])) expect(rows.map((row) => row.ratio)).toEqual([1, 0.81]);
    const [{ average }] = await queryJS(`SELECT avg(ratio) AS average FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`);
    expect(average).toBeCloseTo(0.905);
  });
});
