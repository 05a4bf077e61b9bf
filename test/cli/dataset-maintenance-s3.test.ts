/**
 * `socialstream dataset info|compact s3://bucket/prefix` as subprocesses, against s3rver behind the
 * proxy that honours conditional writes (as AWS S3, MinIO and R2 do), on a dataset `export --dataset`
 * wrote locally against the sandbox and the AWS SDK put in the bucket (exports do not write to S3
 * yet). What they leave is fetched back with the SDK and read by DuckDB, next to the same command's
 * result on a local copy.
 */
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { BUCKET, startS3, type S3Harness } from '../helpers/s3.ts';
import { runCli, sandboxEnv, tempDir } from './helpers.ts';
import { downloadDataset, keysUnder, readJson, s3Client, uploadDataset, writeJson } from './helpers/s3-dataset.ts';

const SCHEMA = '_dataset/forum__subforum/schema.json';
const PARAMS = ['subforum=s3-tools-n150', 'sort=new', 'trim=true'];

let sandbox: Sandbox;
let s3: S3Harness;
let client: S3Client;
/** The dataset the export wrote (by month, flat Parquet), never changed: each test copies or uploads it. */
let template: string;

beforeAll(async () => {
  [sandbox, s3] = await Promise.all([startSandbox({ port: 0 }), startS3()]);
  client = s3Client(s3.direct);
  template = join(tempDir(), 'ds');
  const run = await runCli(['export', 'forum/subforum', ...PARAMS, '--dataset', template, '--partition', 'month', '--layout', 'flat'], sandboxEnv(sandbox));
  expect(run.code, run.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  client?.destroy();
  await Promise.all([sandbox?.close(), s3?.close()]);
});

/** The template put under a prefix of its own: the dataset's location. */
async function uploaded(): Promise<{ prefix: string; location: string }> {
  const prefix = randomUUID();
  await uploadDataset(client, template, prefix);
  return { prefix, location: `s3://${BUCKET}/${prefix}` };
}

function localCopy(): string {
  const dir = join(tempDir(), 'ds');
  cpSync(template, dir, { recursive: true });
  return dir;
}

/** The bucket's dataset at `prefix`, fetched into a folder of its own. */
async function fetched(prefix: string): Promise<string> {
  const dir = join(tempDir(), 'fetched');
  await downloadDataset(client, prefix, dir);
  return dir;
}

/** The CLI with the AWS settings of s3rver behind the proxy (`proxied`) or of s3rver itself. */
function cli(args: string[], env: 'proxied' | 'direct' = 'proxied') {
  return runCli(args, { ...process.env, ...s3[env] });
}

function table(dir: string): string {
  return `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;
}

/** Rows either dataset has that the other lacks, the partition column left out. */
async function difference(a: string, b: string): Promise<unknown> {
  const [{ n }] = await query(
    `SELECT (SELECT count(*) FROM (SELECT * EXCLUDE (_date) FROM ${table(a)} EXCEPT ALL SELECT * EXCLUDE (_date) FROM ${table(b)})) + ` +
      `(SELECT count(*) FROM (SELECT * EXCLUDE (_date) FROM ${table(b)} EXCEPT ALL SELECT * EXCLUDE (_date) FROM ${table(a)})) AS n`,
  );
  return n;
}

/** The part files of a local dataset, by name under it. */
function partFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.parquet') && !name.startsWith('_dataset')).sort();
}

describe('socialstream dataset info s3://…', () => {
  it('says what a local copy of the same dataset says, on a store that ignores conditional writes too (it takes no lock)', async () => {
    const { location } = await uploaded();
    const local = await runCli(['dataset', 'info', template, '--json'], process.env);
    const remote = await cli(['dataset', 'info', location, '--json'], 'direct');
    expect(remote.code, remote.stderr).toBe(0);
    // The same JSON but for where the dataset is (named in the advice to compact it, too).
    expect(remote.stdout.replaceAll(location, template)).toBe(local.stdout);
    expect(JSON.parse(remote.stdout)).toMatchObject({ dir: location, rows: 150 });
  });

  it("reports a writer's staging on the store as staged, with its objects counted", async () => {
    const { prefix, location } = await uploaded();
    // What a writer killed mid-run leaves on a store: pages staged as objects, not yet published.
    for (const page of ['1', '2', '3']) await writeJson(client, prefix, `_dataset/forum__subforum/staging-shard-1-of-2/log/${page}.ndjson`, {});
    const run = await cli(['dataset', 'info', location]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/writer shard-1-of-2: 0 rows in 0 parts \(0 bytes\)\n {4}staged on the store, not published: 3 objects/);
  });
});

describe('socialstream dataset compact s3://…', () => {
  it('merges the parts by month into one a year under store leases, as it does in a local copy', async () => {
    const { prefix, location } = await uploaded();
    // As a lone writer's export to the bucket records it: locked with leases on the store.
    await writeJson(client, prefix, SCHEMA, { ...(await readJson(client, prefix, SCHEMA)), locks: 'leases' });
    const local = localCopy();
    expect((await runCli(['dataset', 'compact', local, '--partition', 'year'], process.env)).code).toBe(0);
    const run = await cli(['dataset', 'compact', location, '--partition', 'year']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^forum\/subforum: \d+ part files → \d+, 150 rows, partitioned by month → year/);
    const after = await fetched(prefix);
    expect(partFiles(after)).toEqual(partFiles(local));
    expect(await difference(after, local)).toBe(0);
    expect(await difference(after, template)).toBe(0);
    expect(await readJson(client, prefix, SCHEMA)).toMatchObject({ partitioning: { by: 'year' }, locks: 'leases' });
    // Nothing of the compaction's staging or locks is left for a reader to find.
    expect((await keysUnder(client, prefix)).filter((name) => name.includes('/compact') || name.includes('/publishing/'))).toEqual([]);
  });

  it('converts the parts flat → nested → flat, as it does in a local copy, and back to the rows it began with', async () => {
    const { prefix, location } = await uploaded();
    const local = localCopy();
    for (const layout of ['nested', 'flat']) {
      expect((await runCli(['dataset', 'compact', local, '--layout', layout], process.env)).code).toBe(0);
      const run = await cli(['dataset', 'compact', location, '--layout', layout]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`${layout === 'nested' ? 'flat → nested' : 'nested → flat'} layout`));
      const after = await fetched(prefix);
      expect(await difference(after, local)).toBe(0);
      expect(await readJson(client, prefix, SCHEMA)).toMatchObject({ parquetLayout: layout });
    }
    expect(await difference(await fetched(prefix), template)).toBe(0);
  });

  it('is refused in one line naming --locks on a store that ignores conditional writes, and changes nothing', async () => {
    const { prefix, location } = await uploaded();
    const before = await keysUnder(client, prefix);
    const run = await cli(['dataset', 'compact', location, '--partition', 'year'], 'direct');
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/ignores conditional writes .*--locks redis:\/\//);
    expect(await keysUnder(client, prefix)).toEqual(before);
  });
});
