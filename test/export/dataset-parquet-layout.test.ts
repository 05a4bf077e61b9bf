/**
 * A dataset's Parquet layout through the library (docs/datasets.md "Parquet layout"): recorded by the first
 * run, kept by every later one; a dataset recorded before layouts is flat and stays so; a run asking
 * for another layout is a `DatasetLayoutError` before any request; `compactDataset(dir, { layout })`
 * converts either way.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { compactDataset, datasetInfo, DatasetLayoutError, describeDatasetInfo, toDataset } from '../../src/export/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);
const SCHEMA = '_dataset/shortvideo__videos/schema.json';

let sandbox: Sandbox;
let client: Client;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;
const videos = (handle = 'layout-lib-n30') => client.shortvideo.videos({ handle });

function schemaOf(dir: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, SCHEMA), 'utf8')) as Record<string, unknown>;
}

/** DuckDB's type of `author` over the whole dataset: a STRUCT when nested; absent (dotted columns instead) when flat. */
async function authorType(dir: string): Promise<string | undefined> {
  const columns = await query(`DESCRIBE SELECT * FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`);
  return columns.find((column) => column.column_name === 'author')?.column_type as string | undefined;
}

beforeAll(async () => ({ sandbox, client } = await startSandboxClient({ slowMs: 0 })));
afterAll(() => closeSandboxClient({ sandbox, client }));

describe('a Parquet dataset', () => {
  it('is nested when new, and records it', async () => {
    const dir = fresh('new');
    await toDataset(videos(), dir);
    expect(schemaOf(dir).parquetLayout).toBe('nested');
    expect(await authorType(dir)).toMatch(/^STRUCT\(/);
  });

  it('shows its struct and list columns by their shapes in dataset info', async () => {
    const dir = fresh('info');
    await toDataset(videos(), dir);
    const text = describeDatasetInfo(await datasetInfo(dir));
    expect(text).toMatch(/author struct<uid: string, .*avatar_thumb: struct<uri: string, url_list: list<string>/);
    expect(text).not.toContain('[object Object]');
  });

  it('keeps the flat layout of its first run when later runs do not name one', async () => {
    const dir = fresh('flat');
    await toDataset(videos(), dir, { layout: 'flat' });
    await toDataset(videos('layout-lib-later-n10'), dir);
    expect(schemaOf(dir).parquetLayout).toBe('flat');
    expect(await authorType(dir)).toBeUndefined();
  });

  it('recorded before layouts is flat, and stays flat', async () => {
    const dir = fresh('legacy');
    await toDataset(videos(), dir, { layout: 'flat' });
    const { parquetLayout: _, ...legacy } = schemaOf(dir);
    writeFileSync(join(dir, SCHEMA), JSON.stringify(legacy));
    await toDataset(videos('layout-lib-later-n10'), dir);
    expect(schemaOf(dir).parquetLayout).toBe('flat');
    expect(await authorType(dir)).toBeUndefined();
    const error = await toDataset(videos(), dir, { layout: 'nested' }).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ code: 'DATASET_LAYOUT', recorded: 'flat', asked: 'nested' });
  });

  it('refuses a run asking for another layout with a DatasetLayoutError before any request, naming the compaction that converts it', async () => {
    const dir = fresh('refused');
    await toDataset(videos(), dir);
    const before = charged();
    const error = await toDataset(videos(), dir, { layout: 'flat' }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(DatasetLayoutError);
    expect(error).toMatchObject({ code: 'DATASET_LAYOUT', path: dir, recorded: 'nested', asked: 'flat' });
    expect((error as Error).message).toMatch(/compactDataset\(dir, \{ layout: 'flat' \}\)\)\. Nothing was requested\./);
    expect(charged()).toBe(before);
  });

  it('is converted by compactDataset to flat and back, its rows each kept once', async () => {
    const dir = fresh('convert');
    await toDataset(videos(), dir);
    const count = async () => (await query(`SELECT count(*) AS n, count(DISTINCT aweme_id) AS k FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, union_by_name = true)`))[0];
    const rows = await count();
    expect(rows).toEqual({ n: 30, k: 30 });
    const toFlat = await compactDataset(dir, { layout: 'flat' });
    expect(toFlat.operations[0]).toMatchObject({ layout: { before: 'nested', after: 'flat' }, rows: 30 });
    expect(await authorType(dir)).toBeUndefined();
    expect(await count()).toEqual(rows);
    await compactDataset(dir, { layout: 'nested' });
    expect(await authorType(dir)).toMatch(/^STRUCT\(/);
    expect(await count()).toEqual(rows);
    const again = await compactDataset(dir, { layout: 'nested' });
    expect(again.operations[0]).toMatchObject({ layout: { before: 'nested', after: 'nested' }, rows: 0 });
  });
});

describe('a dataset of NDJSON parts', () => {
  it('has no Parquet layout: asking for one with its format is a TypeError, and without it a DatasetLayoutError', async () => {
    const dir = fresh('ndjson');
    await expect(toDataset(videos(), dir, { format: 'ndjson', layout: 'nested' })).rejects.toThrow(/layout 'nested' applies to Parquet, not to ndjson/);
    await toDataset(videos(), dir, { format: 'ndjson' });
    expect(schemaOf(dir).parquetLayout).toBeUndefined();
    const error = await toDataset(videos(), dir, { layout: 'nested' }).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ code: 'DATASET_LAYOUT', recorded: undefined, asked: 'nested' });
    await expect(compactDataset(dir, { layout: 'nested' })).rejects.toThrow(/ndjson part files, which have no Parquet layout to convert/);
  });
});
