/**
 * An object keyed by data (dates) in a nested dataset (docs/types.md "Objects keyed by data"): once
 * it has more distinct keys than `MAP_THRESHOLD` over every record the dataset has seen, its column
 * is a MAP in the schema and in every part, whichever run passed the threshold, so it does not grow
 * a field per date. Read back by DuckDB (`element_at`, `map_keys`), Polars and arrow-rs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, describe, expect, it } from 'vitest';
import { compactDataset, datasetInfo, describeDatasetInfo } from '../../src/export/index.ts';
import { localPaths } from '../../src/dataset/store.ts';
import { mergeSchemas, type SchemaColumn } from '../../src/dataset/schema.ts';
import { MAP_THRESHOLD } from '../../sinks/rows.ts';
import { queryJS, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { datasetParts } from './helpers/dataset-parts.ts';
import { closeServed, recordsIntoDataset, type FlatSummary } from './helpers/served-records.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);

afterAll(closeServed);

type Daily = Record<string, number>;
type Post = { id: string; created_utc: number; views_by_day: Daily };

const day = (d: number) => new Date(Date.UTC(2024, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);

/** Run `run`'s posts: `records` of them in month `run`, each with `perRecord` dates no earlier post had. */
function postsOf(run: number, records: number, perRecord: number, firstDay: number): Post[] {
  return Array.from({ length: records }, (_, i) => ({
    id: `r${run}-${i}`,
    created_utc: 1_760_000_000 + run * 32 * 86_400,
    views_by_day: Object.fromEntries(Array.from({ length: perRecord }, (_, d) => [day(firstDay + i * perRecord + d), run * 1000 + i * 10 + d])),
  }));
}

/** Each part's type of `views_by_day`, as arrow-rs reads the part alone. */
const partTypes = (dir: string) =>
  datasetParts(dir).map((part) => String(tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream()).schema.fields.find((field) => field.name === 'views_by_day')?.type));

const glob = (dir: string) => sqlPath(`${dir}/**/*.parquet`);

/** `views_by_day` by id as DuckDB (the documented read), Polars (every part) and arrow-rs (part by part) give it back. */
async function mapsOfThree(dir: string): Promise<Array<Record<string, Daily>>> {
  const duck = await queryJS(
    `SELECT id, map_keys(views_by_day) AS k, map_values(views_by_day) AS v FROM read_parquet(${glob(dir)}, hive_partitioning = true, union_by_name = true)`,
  );
  const fromDuck = Object.fromEntries(duck.map((row) => [row.id, Object.fromEntries((row.k as string[]).map((key, i) => [key, Number((row.v as bigint[])[i])]))]));
  const fromPolars: Record<string, Daily> = {};
  for (const part of datasetParts(dir)) {
    const frame = pl.readParquet(part);
    const ids = frame.getColumn('id').toArray() as string[];
    const entries = frame.getColumn('views_by_day').toArray() as unknown as Array<Array<{ key: string; value: number }>>;
    ids.forEach((id, i) => (fromPolars[id] = Object.fromEntries(entries[i].map(({ key, value }) => [key, Number(value)]))));
  }
  const fromArrow: Record<string, Daily> = {};
  for (const part of datasetParts(dir)) {
    const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream());
    const maps = table.getChild('views_by_day')!;
    table.getChild('id')!.toArray().forEach((id: string, i: number) => {
      const map = (maps.get(i) as { toJSON(): Record<string, bigint> }).toJSON();
      fromArrow[id] = Object.fromEntries(Object.entries(map).map(([key, value]) => [key, Number(value)]));
    });
  }
  return [fromDuck, fromPolars, fromArrow];
}

const byId = (posts: readonly Post[]) => Object.fromEntries(posts.map((post) => [post.id, post.views_by_day]));

describe('an object keyed by date in a nested dataset', () => {
  it('is a MAP in the schema and in every part over several runs, each bringing new dates', async () => {
    const dir = fresh('map-runs');
    // Run 0 passes the threshold alone; runs 1 and 2 each bring 100 dates no run had, in a month of their own.
    const runs = [postsOf(0, 5, 50, 0), postsOf(1, 4, 25, 250), postsOf(2, 4, 25, 350)];
    const summaries: FlatSummary[] = [];
    for (const [i, posts] of runs.entries()) summaries.push(await recordsIntoDataset(posts, dir, { params: { subforum: `run${i}` } }));
    const paths = localPaths(dir, 'forum/subforum', 'all');
    const schema = JSON.parse(readFileSync(paths.file(paths.names.schema), 'utf8')) as { columns: Array<{ name: string }> };
    expect(schema.columns.find((column) => column.name === 'views_by_day')).toEqual({ name: 'views_by_day', kind: 'map', value: { kind: 'integer' } });
    // The schema as a Parquet file of no rows, which a reader that takes its schema from one file reads (`table-schema.ts`).
    const [described] = await queryJS(`SELECT column_type FROM (DESCRIBE SELECT * FROM read_parquet(${sqlPath(paths.tableSchema)})) WHERE column_name = 'views_by_day'`);
    expect(described.column_type).toBe('MAP(VARCHAR, BIGINT)');
    expect(describeDatasetInfo(await datasetInfo(dir))).toContain('views_by_day map<string, integer>');
    expect(summaries[2].drift.added).toEqual([]);
    expect(partTypes(dir)).toHaveLength(3);
    for (const type of partTypes(dir)) expect(type).toMatch(/^Map<\{?key/i);
    const [{ type }] = await queryJS(`SELECT typeof(views_by_day) AS type FROM read_parquet(${glob(dir)}, hive_partitioning = true, union_by_name = true) LIMIT 1`);
    expect(type).toBe('MAP(VARCHAR, BIGINT)');
    const [{ views }] = await queryJS(
      `SELECT element_at(views_by_day, '${day(351)}')[1] AS views FROM read_parquet(${glob(dir)}, hive_partitioning = true, union_by_name = true) WHERE id = 'r2-0'`,
    );
    expect(views).toBe(2001n);
    for (const maps of await mapsOfThree(dir)) expect(maps).toEqual(byId(runs.flat()));
  });

  it('turns from a STRUCT into a MAP once a later run passes the threshold, and the STRUCT parts are rewritten to the MAP', async () => {
    const dir = fresh('struct-to-map');
    const early = postsOf(0, 2, 5, 0);
    await recordsIntoDataset(early, dir, { params: { subforum: 'early' } });
    expect(partTypes(dir)).toEqual([expect.stringMatching(/^Struct</)]);
    const late = postsOf(1, 4, (MAP_THRESHOLD + 40) / 4, 10);
    const summary = await recordsIntoDataset(late, dir, { params: { subforum: 'late' } });
    expect(summary.drift.widened).toEqual([{ column: 'views_by_day', from: 'struct', to: 'map' }]);
    // The early month's part still holds the STRUCT until the widening rewrite, which `dataset compact` does.
    await compactDataset(dir);
    expect(partTypes(dir)).toHaveLength(2);
    for (const type of partTypes(dir)) expect(type).toMatch(/^Map<\{?key/i);
    for (const maps of await mapsOfThree(dir)) expect(maps).toEqual(byId([...early, ...late]));
  });

  it('is a MAP when two writers each add a share of its keys and together pass the threshold', () => {
    const struct = (from: number, kind: 'integer' | 'double'): SchemaColumn[] => [
      { name: 'views_by_day', kind: 'struct', fields: Array.from({ length: 150 }, (_, d) => ({ name: day(from + d), kind })) },
    ];
    // What a publish does under the lock: the recorded schema (another writer's) merged with this run's.
    expect(mergeSchemas(struct(0, 'integer'), struct(150, 'double'))).toEqual([{ name: 'views_by_day', kind: 'map', value: { kind: 'double' } }]);
  });

  it('keeps every key and value when a later run merges into a part that holds the MAP', async () => {
    const dir = fresh('map-merge');
    const first = postsOf(0, 5, 50, 0);
    await recordsIntoDataset(first, dir, { params: { subforum: 'first' } });
    // The same month again: two posts change, one is new, each with dates of its own.
    const again = postsOf(0, 6, 10, 400).slice(3);
    await recordsIntoDataset(again, dir, { params: { subforum: 'again' } });
    expect(partTypes(dir)).toEqual([expect.stringMatching(/^Map<\{?key/i)]);
    for (const maps of await mapsOfThree(dir)) expect(maps).toEqual(byId([...first.slice(0, 3), ...again]));
  });

  it('is one MAP column after compaction to the flat layout, never a column per date, and a MAP again back in the nested one', async () => {
    const dir = fresh('map-flat');
    const posts = postsOf(0, 5, 50, 0);
    await recordsIntoDataset(posts, dir, { params: { subforum: 'flat' } });
    await compactDataset(dir, { layout: 'flat' });
    const columns = await queryJS(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${glob(dir)}, hive_partitioning = true, union_by_name = true))`);
    expect(columns.filter((column) => String(column.column_name).startsWith('views_by_day'))).toEqual([{ column_name: 'views_by_day', column_type: 'MAP(VARCHAR, BIGINT)' }]);
    for (const maps of await mapsOfThree(dir)) expect(maps).toEqual(byId(posts));
    await compactDataset(dir, { layout: 'nested' });
    for (const type of partTypes(dir)) expect(type).toMatch(/^Map<\{?key/i);
    for (const maps of await mapsOfThree(dir)) expect(maps).toEqual(byId(posts));
  });
});

describe('an object keyed by date in a flat dataset', () => {
  /** The recipe of docs/datasets.md for Polars: every part as one table, its schema from the dataset's schema file. */
  function polarsMaps(dir: string): Record<string, Daily> {
    const schema = pl.readParquet(readFileSync(localPaths(dir, 'forum/subforum', 'all').tableSchema)).schema;
    const frame = pl
      .scanParquet(`${dir}/forum/subforum/**/*.parquet`, { hivePartitioning: true, schema, missingColumns: 'insert', castOptions: { missingStructFields: 'insert' } })
      .collectSync();
    const ids = frame.getColumn('id').toArray() as string[];
    const entries = frame.getColumn('views_by_day').toArray() as unknown as Array<Array<{ key: string; value: number }>>;
    return Object.fromEntries(ids.map((id, i) => [id, Object.fromEntries(entries[i].map(({ key, value }) => [key, Number(value)]))]));
  }

  it('folds its date columns into one MAP once the dates of every run pass the threshold, every value in it for DuckDB, Polars and arrow-rs', async () => {
    const dir = fresh('flat-map-runs');
    // Each run brings 80 dates no run had, in a month of its own: none passes the threshold alone, the third run's passes it over all.
    const runs = [0, 1, 2, 3].map((run) => postsOf(run, 4, 20, run * 80));
    for (const [i, posts] of runs.entries()) await recordsIntoDataset(posts, dir, { layout: 'flat', params: { subforum: `run${i}` } });
    const columns = await queryJS(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${glob(dir)}, hive_partitioning = true, union_by_name = true))`);
    expect(columns.filter((column) => String(column.column_name).startsWith('views_by_day'))).toEqual([{ column_name: 'views_by_day', column_type: 'MAP(VARCHAR, BIGINT)' }]);
    expect(partTypes(dir)).toHaveLength(4);
    for (const type of partTypes(dir)) expect(type).toMatch(/^Map<\{?key/i);
    const [fromDuck, , fromArrow] = await mapsOfThree(dir);
    const all = byId(runs.flat());
    expect(fromDuck).toEqual(all);
    expect(polarsMaps(dir)).toEqual(all);
    expect(fromArrow).toEqual(all);
  });

  it('says in the drift of the run that passes the threshold that the object widened to a MAP, and rewrites the earlier runs\' parts', async () => {
    const dir = fresh('flat-map-drift');
    const runs = [0, 1, 2].map((run) => postsOf(run, 4, 20, run * 80));
    const summaries: FlatSummary[] = [];
    for (const [i, posts] of runs.entries()) summaries.push(await recordsIntoDataset(posts, dir, { layout: 'flat', params: { subforum: `run${i}` } }));
    expect(summaries[1].drift.widened).toBeUndefined();
    expect(summaries[2].drift.widened).toEqual([{ column: 'views_by_day', from: 'struct', to: 'map' }]);
    expect(summaries[2].drift.added).toEqual([]);
    expect(summaries[2].widening?.partitions).toBe(2);
  });

  it('is one MAP from the first run when one page alone passes the threshold', async () => {
    const dir = fresh('flat-map-first');
    const posts = postsOf(0, 5, 50, 0);
    await recordsIntoDataset(posts, dir, { layout: 'flat', params: { subforum: 'first' } });
    const paths = localPaths(dir, 'forum/subforum', 'all');
    const schema = JSON.parse(readFileSync(paths.file(paths.names.schema), 'utf8')) as { columns: Array<{ name: string }> };
    expect(schema.columns.filter((column) => column.name.startsWith('views_by_day'))).toEqual([{ name: 'views_by_day', kind: 'map', value: { kind: 'integer' } }]);
    for (const maps of await mapsOfThree(dir)) expect(maps).toEqual(byId(posts));
  });
});
