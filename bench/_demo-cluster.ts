/**
 * `npm run demo:cluster`: the three-machine setup of docs/guide/many-machines.md on one machine, without docker-compose:
 * a redis-server, the sandbox, 3 workers (each its own process, as on its own machine), one enqueue
 * of 30 walks with a credit budget, the status while they work, then DuckDB reads the dataset.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startSandbox } from '../src/sandbox/index.ts';
import { cli, haveRedis, showStatusUntilFinished, startRedis, startWorkers } from './_cluster.ts';

if (!haveRedis()) {
  console.error('demo:cluster needs redis-server (apt-get install redis-server)');
  process.exit(2);
}
const redis = await startRedis();
const sandbox = await startSandbox({ port: 0, latencyMs: 50 });
const env = { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: sandbox.apiKey };
const dir = mkdtempSync(join(tmpdir(), 'socialstream-demo-cluster-'));
const data = join(dir, 'data');
const inputs = join(dir, 'subforums.txt');
writeFileSync(inputs, Array.from({ length: 30 }, (_, index) => `subforum=demo${index}-n${50 + index * 10}\n`).join(''));
console.log(`redis ${redis.url}, sandbox ${sandbox.url}, dataset ${data}\n`);
console.log(`$ socialstream export forum/subforum sort=new trim=true --inputs ${inputs} --dataset ${data} --queue ${redis.url} --max-credits 500`);
await cli(['export', 'forum/subforum', 'sort=new', 'trim=true', '--inputs', inputs, '--dataset', data, '--queue', redis.url, '--max-credits', '500'], env);
console.log(`\n$ socialstream worker --queue ${redis.url} --concurrency 2    # × 3, one a machine`);
const workers = startWorkers(redis.url, 3, env, 2, true);
try {
  await showStatusUntilFinished(redis.url);
} finally {
  await workers.stop();
}
const sql = `SELECT count(*) AS records, count(DISTINCT id) AS ids FROM read_parquet('${data}/**/*.parquet', hive_partitioning = true, union_by_name = true)`;
console.log(`\n$ duckdb -c "${sql}"`);
const duck = await (await DuckDBInstance.create(':memory:')).connect();
console.log((await duck.runAndReadAll(sql)).getRowObjects().map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, String(value)]))));
console.log(`sandbox: ${sandbox.requests.charged[sandbox.apiKey] ?? 0} requests charged`);
duck.closeSync();
await sandbox.close();
await redis.stop();
rmSync(dir, { recursive: true, force: true });
