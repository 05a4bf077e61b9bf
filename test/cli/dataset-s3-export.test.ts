/**
 * A dataset on a store (`s3://bucket/prefix`, s3rver behind the proxy that honours conditional
 * writes, so a lone writer locks it with store leases): the same rows as a local dataset fed the
 * same walks (DuckDB on the parts downloaded, and Polars straight from the bucket by the recipe of
 * docs/guide/datasets.md: every value, not only the count), and what a page costs there
 * (docs/storage.md "The staging log").
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetRoot, DatasetDestination } from '../../src/dataset/destination.ts';
import { chooseDatasetLocks } from '../../src/dataset/lock-choice.ts';
import { openStorage } from '../../src/dataset/storage/open.ts';
import type { RequestCounts } from '../../src/dataset/storage/types.ts';
import { exportInto } from '../../src/export/engine.ts';
import { checkOptions } from '../../src/export/options.ts';
import { walksOf } from '../../src/export/sources.ts';
import { toDataset } from '../../src/export/index.ts';
import { BUCKET, downloadParts, polarsCloudOptions, startS3, type S3Harness } from '../helpers/s3.ts';
import { names } from '../helpers/storage.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { closeSandboxClient, startSandboxClient, type SandboxClient } from '../export/helpers/sandbox-client.ts';

let s3: S3Harness;
let context: SandboxClient;
beforeAll(async () => {
  [s3, context] = await Promise.all([startS3(), startSandboxClient()]);
  // exportTo configures the SDK from the environment, as the AWS tools do.
  Object.assign(process.env, s3.proxied);
});
afterAll(async () => {
  await closeSandboxClient(context);
  await s3?.close();
});

const work = () => mkdtemp(join(tmpdir(), 'dataset-s3-work-'));
const bucketLocation = () => `s3://${BUCKET}/${randomUUID()}`;


/** Rows DuckDB finds in one dataset's parts and not in the other's, each way (the fetch stamps left out: each export has its own). */
async function differences(a: string, b: string): Promise<number[]> {
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  const table = (dir: string) => `(SELECT * EXCLUDE (_fetched_at) FROM read_parquet('${dir}/forum/**/*.parquet', hive_partitioning = true, union_by_name = true))`;
  try {
    const count = async (x: string, y: string) => Number((await connection.runAndReadAll(`SELECT count(*) AS n FROM (${table(x)} EXCEPT ${table(y)})`)).getRowObjectsJS()[0].n);
    const total = Number((await connection.runAndReadAll(`SELECT count(*) AS n FROM ${table(a)}`)).getRowObjectsJS()[0].n);
    expect(total).toBeGreaterThan(0);
    return [await count(a, b), await count(b, a)];
  } finally {
    connection.closeSync();
  }
}

/** The rows and distinct ids Polars reads from the dataset's parts in the bucket, with no download. */
async function polarsCounts(location: string): Promise<{ rows: number; keys: number }> {
  const env = s3.direct;
  const cloudOptions = polarsCloudOptions(env);
  // The dataset's whole schema, from the bucket too, as docs/guide/datasets.md reads it.
  const storage = await openStorage(location);
  const schemaFile = await storage.read('_dataset/forum__subforum/schema.parquet-schema');
  await storage.close();
  expect(schemaFile).toBeDefined();
  const { schema } = pl.readParquet(Buffer.from(schemaFile!));
  const frame = await pl
    .scanParquet(`${location}/forum/subforum/**/*.parquet`, { hivePartitioning: true, cloudOptions, schema, missingColumns: 'insert' })
    .select(pl.len().alias('rows'), pl.col('id').nUnique().alias('keys'))
    .collect();
  const [counts] = frame.toRecords() as { rows: number; keys: number }[];
  return { rows: Number(counts.rows), keys: Number(counts.keys) };
}

describe('a dataset on a store', () => {
  it('holds the same rows as a local dataset fed the same walks, over a first run and an incremental second', async () => {
    const local = await mkdtemp(join(tmpdir(), 'dataset-s3-local-'));
    const location = bucketLocation();
    const streams = () => ['s3-same-a-n60', 's3-same-b-n90'].map((subforum) => context.client.forum.subforum({ subforum, sort: 'new', trim: true }));
    const folder = await work();
    for (const added of [0, 40]) {
      context.sandbox.advance({ records: added });
      // By year: a few partitions (each part a pass writes costs the store several requests).
      const onDisk = await toDataset(streams(), local, { partition: 'year' });
      const onStore = await toDataset(streams(), location, { work: folder, partition: 'year' });
      expect(onStore.complete).toBe(true);
      expect({ pages: onStore.pages, records: onStore.records }).toEqual({ pages: onDisk.pages, records: onDisk.records });
    }
    expect(await differences(local, await downloadParts(location))).toEqual([0, 0]);
    // Polars reads the same rows straight from the bucket, as the docs show.
    const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM read_parquet(${sqlPath(`${local}/forum/**/*.parquet`)}, hive_partitioning = true)`);
    expect(await polarsCounts(location)).toEqual({ rows: Number(rows), keys: Number(keys) });
  });

  it('Polars reading the bucket by the guide gives every row and value DuckDB reads from a local dataset of the same walks', async () => {
    const local = await mkdtemp(join(tmpdir(), 'dataset-s3-readers-local-'));
    const bucket = `s3://${BUCKET}/${randomUUID()}`;
    const streams = () => ['s3-readers-a-n70', 's3-readers-b-n40'].map((subforum) => context.client.forum.subforum({ subforum, sort: 'new', trim: true }));
    await toDataset(streams(), local, { partition: 'year' });
    await toDataset(streams(), bucket, { partition: 'year', work: await mkdtemp(join(tmpdir(), 'dataset-s3-readers-work-')) });

    // The guide's recipe, read from s3rver itself (a reader needs no conditional writes).
    const cloudOptions = polarsCloudOptions(s3.direct);
    const { schema } = await pl.scanParquet(`${bucket}/_dataset/forum__subforum/schema.parquet-schema`, { cloudOptions }).collect();
    const fromBucket = await pl.scanParquet(`${bucket}/forum/subforum/**/*.parquet`, { hivePartitioning: true, schema, missingColumns: 'insert', cloudOptions }).collect();

    // Each export stamps its own fetch times; every other column is compared, row by row in id order.
    const columns = fromBucket.columns.filter((name) => name !== '_fetched_at');
    expect(columns).toEqual(expect.arrayContaining(['id', 'title', 'score', '_date']));
    const polarsRows = fromBucket.select(...columns.map((name) => pl.col(name).cast(pl.Utf8))).sort('id').toRecords();
    const duckRows = await query(`SELECT ${columns.map((name) => `CAST("${name}" AS VARCHAR) AS "${name}"`).join(', ')} FROM read_parquet(${sqlPath(`${local}/forum/**/*.parquet`)}, hive_partitioning = true, union_by_name = true) ORDER BY id`);
    expect(polarsRows.length).toBeGreaterThan(100);
    expect(polarsRows).toEqual(duckRows);
  });

  it('names the bucket, not the working folder standing for it, when it refuses a run that asks for another partitioning', async () => {
    const location = bucketLocation();
    const folder = await work();
    const stream = () => context.client.forum.subforum({ subforum: 's3-named-n30', sort: 'new', trim: true });
    await toDataset(stream(), location, { work: folder, partition: 'year' });
    const refusal = await toDataset(stream(), location, { work: folder, partition: 'month' }).catch((error: unknown) => error);
    expect((refusal as Error).message).toMatch(new RegExp(`^${location.replace(/[/.]/g, '\\$&')} holds forum/subforum partitioned by year`));
    expect((refusal as Error).message).not.toContain(folder);
  });

  it("publishes a writer's handed-off pages from another working folder, the pass reading its spool from its staging log", async () => {
    const location = bucketLocation();
    const walk = async (subforum: string, handOff = false) =>
      toDataset(context.client.forum.subforum({ subforum, sort: 'new', trim: true }), location, { writer: `walk-${subforum}`, runId: 'run-1', resume: true, handOff, work: await work(), partition: 'year' });
    // Record counts as the sandbox serves them now (another test of this file lets time pass).
    const seed = await walk('s3-gc-seed-n10');
    const storage = await openStorage(location);
    try {
      // The publish lock held as a live writer holds it on this store: a lease.
      const lease = await storage.lock('_dataset/forum__subforum/lock', { leaseMs: 60_000 });
      expect(lease).toBeDefined();
      const handed = await walk('s3-gca-n60', true);
      expect(handed).toMatchObject({ complete: true });
      expect(handed.dataset).toBeUndefined();
      await lease!.release();
      // Another writer, staging in another working folder, publishes every commit waiting.
      const other = await walk('s3-gcb-n40');
      expect(other.dataset?.added).toBe(other.records);
      const total = seed.records + handed.records + other.records;
      const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM read_parquet(${sqlPath(`${await downloadParts(location)}/forum/**/*.parquet`)}, hive_partitioning = true)`);
      expect({ rows: Number(rows), keys: Number(keys) }).toEqual({ rows: total, keys: total });
      // The handed-off writer's staging went with its publish.
      expect(await names(storage, '_dataset/forum__subforum/staging-walk-s3-gca-n60/')).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  /** A one-walk export of `subforum` into a new dataset on the store, with `options`: its pages, and the store's requests. */
  async function exportCounted(subforum: string, options: { maxCredits?: number } = {}): Promise<{ pages: number; requests: RequestCounts }> {
    const location = bucketLocation();
    const walks = walksOf(context.client.forum.subforum({ subforum, sort: 'new', trim: true }));
    const storage = await openStorage(location);
    const folder = await work();
    // Leases long enough that no renewal falls within the run and adds a PUT of its own.
    const locks = await chooseDatasetLocks(storage, datasetRoot(location, storage, folder), undefined, { leaseMs: 600_000 });
    const destination = new DatasetDestination(location, walks.op, { storage, work: folder, locks, walks: walks.params, partition: 'none' });
    const summary = await exportInto(walks, destination, { ...checkOptions({ dataset: location, ...options }), locks: locks.mechanism === 'folders' ? undefined : locks.locks });
    return { pages: summary.pages, requests: { ...storage.requests } };
  }

  it('is sent one PUT for each page staged (and a DELETE once its run is published), and asked no GET for it', async () => {
    const two = await exportCounted('s3-budget-n50');
    const four = await exportCounted('s3-budget-n100');
    const more = four.pages - two.pages;
    expect(more).toBeGreaterThanOrEqual(2);
    // Each page more: one PUT more (its staging-log object), and its DELETE once the published run's
    // staging goes; no GET, nothing else.
    expect(four.requests).toEqual({ ...two.requests, PUT: two.requests.PUT + more, DELETE: two.requests.DELETE + more });
  });

  it('is sent one PUT for each page under a credit cap too: the attempt counted and the page before it in one object', async () => {
    const two = await exportCounted('s3-capped-n50', { maxCredits: 100 });
    const four = await exportCounted('s3-capped-n100', { maxCredits: 100 });
    const more = four.pages - two.pages;
    expect(more).toBeGreaterThanOrEqual(2);
    expect(four.requests).toEqual({ ...two.requests, PUT: two.requests.PUT + more, DELETE: two.requests.DELETE + more });
  });
});
