/**
 * A dataset in a bucket read straight from it, by the recipe docs/guide/datasets.md gives
 * (nodejs-polars `scanParquet` of the partitions' glob with `cloudOptions`: the endpoint, plain HTTP,
 * path-style; the table's schema from the dataset's schema file in the bucket), holds the rows
 * DuckDB reads from a local dataset fed the same walks: every value, not only the count.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toDataset } from '../../src/export/index.ts';
import { BUCKET, startS3, type S3Harness } from '../helpers/s3.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { closeSandboxClient, startSandboxClient, type SandboxClient } from './helpers/sandbox-client.ts';

let s3: S3Harness;
let context: SandboxClient;
beforeAll(async () => {
  [s3, context] = await Promise.all([startS3(), startSandboxClient()]);
  // A lone writer locks the bucket with store leases: the proxy honours conditional writes.
  Object.assign(process.env, s3.proxied);
});
afterAll(async () => {
  await closeSandboxClient(context);
  await s3?.close();
});

it('Polars reading the bucket by the guide gives every row and value DuckDB reads from a local dataset of the same walks', async () => {
  const local = await mkdtemp(join(tmpdir(), 'dataset-s3-readers-local-'));
  const bucket = `s3://${BUCKET}/${randomUUID()}`;
  const streams = () => ['s3-readers-a-n70', 's3-readers-b-n40'].map((subforum) => context.client.forum.subforum({ subforum, sort: 'new', trim: true }));
  await toDataset(streams(), local, { partition: 'year' });
  await toDataset(streams(), bucket, { partition: 'year', work: await mkdtemp(join(tmpdir(), 'dataset-s3-readers-work-')) });

  // The guide's recipe, read from s3rver itself (a reader needs no conditional writes).
  const cloudOptions = {
    aws_access_key_id: s3.direct.AWS_ACCESS_KEY_ID,
    aws_secret_access_key: s3.direct.AWS_SECRET_ACCESS_KEY,
    aws_region: s3.direct.AWS_REGION,
    aws_endpoint_url: s3.direct.AWS_ENDPOINT_URL_S3,
    aws_allow_http: 'true',
    aws_virtual_hosted_style_request: 'false',
  };
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
