/**
 * `npm run demo:cluster:s3`: `npm run demo:cluster` with no shared directory, as docs/guide/many-machines.md
 * runs it on machines without a shared disk: a redis-server, an S3 store (s3rver, on loopback), the
 * sandbox and 3 workers, each in a folder of its own with its own `--work`, one enqueue of 30 walks
 * into `s3://…` with a credit budget, the status while they work, then Polars reads the dataset
 * straight from the bucket, as docs/guide/datasets.md shows. The workers lock with Redis leases (a
 * queue's), so the store need not honour conditional writes, and s3rver does not. Everything it
 * started is stopped, and every folder it made removed, however it ends.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { startSandbox } from '../src/sandbox/index.ts';
import { BUCKET, polarsCloudOptions, startS3 } from './_s3.ts';
import { cli, haveRedis, showStatusUntilFinished, startRedis, startWorkers } from './_cluster.ts';

const WORKERS = 3;

if (!haveRedis()) {
  console.error('demo:cluster:s3 needs redis-server (apt-get install redis-server)');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'socialstream-demo-cluster-s3-'));
const [redis, s3, sandbox] = await Promise.all([startRedis(), startS3(), startSandbox({ port: 0, latencyMs: 50 })]);
try {
  // Every machine's environment: the API key and the AWS settings, never sent to Redis.
  const env = { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: sandbox.apiKey, ...s3.direct };
  const dataset = `s3://${BUCKET}/demo`;
  const inputs = join(dir, 'subforums.txt');
  writeFileSync(inputs, Array.from({ length: 30 }, (_, index) => `subforum=demo${index}-n${50 + index * 10}\n`).join(''));
  console.log(`redis ${redis.url}, sandbox ${sandbox.url}, S3 endpoint ${s3.direct.AWS_ENDPOINT_URL_S3}, dataset ${dataset}\n`);
  console.log(`$ socialstream export forum/subforum sort=new trim=true --inputs ${inputs} --dataset ${dataset} --queue ${redis.url} --max-credits 500`);
  if ((await cli(['export', 'forum/subforum', 'sort=new', 'trim=true', '--inputs', inputs, '--dataset', dataset, '--queue', redis.url, '--max-credits', '500'], env)) !== 0) throw new Error('the enqueue failed');

  // Each worker as on a machine of its own: its own folder, its staging in its own `--work` there,
  // and its own temporary folder (where a pass on a store encodes its parts), as machines have.
  const machines = Array.from({ length: WORKERS }, (_, index) => join(dir, `machine-${index + 1}`));
  for (const machine of machines) mkdirSync(join(machine, 'tmp'), { recursive: true });
  console.log(`\n$ socialstream worker --queue ${redis.url} --concurrency 2 --work ./work    # × ${WORKERS}, one a machine, each in its own folder`);
  const workers = startWorkers(redis.url, WORKERS, env, 2, true, undefined, (index) => ({ cwd: machines[index], env: { TMPDIR: join(machines[index], 'tmp') }, args: ['--work', join(machines[index], 'work')] }));
  try {
    await showStatusUntilFinished(redis.url);
  } finally {
    await workers.stop();
  }

  // Read straight from the bucket, with the dataset's whole schema from its schema file there.
  const cloudOptions = polarsCloudOptions(s3.direct);
  // Collected asynchronously: s3rver answers from this process's event loop, which `collectSync` would block.
  const schemaFile = await pl.scanParquet(`${dataset}/_dataset/forum__subforum/schema.parquet-schema`, { cloudOptions }).collect();
  const schema: unknown = schemaFile.schema;
  console.log(`\n$ polars: scan_parquet('${dataset}/forum/subforum/**/*.parquet', hive_partitioning=True, schema=…, storage_options=…)`);
  const counts = await pl
    .scanParquet(`${dataset}/forum/subforum/**/*.parquet`, { hivePartitioning: true, schema, missingColumns: 'insert', cloudOptions })
    .select(pl.len().alias('records'), pl.col('id').nUnique().alias('ids'))
    .collect();
  console.log(counts.toRecords().map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, String(value)]))));
  console.log(`sandbox: ${sandbox.requests.charged[sandbox.apiKey] ?? 0} requests charged`);
} finally {
  await sandbox.close();
  await s3.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}
