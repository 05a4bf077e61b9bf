/**
 * `export --dataset s3://…` as a user runs it, against s3rver (the proxy in front of it honours
 * conditional writes, so a lone writer locks with store leases): a store that cannot be used is one
 * line and exit 2 before any request, and a writer killed -9 mid-walk is resumed from a fresh
 * working folder (`--work`) from its staging log on the store, nothing lost, nothing doubled.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { BUCKET, downloadParts, s3Env, startS3, type S3Harness } from '../helpers/s3.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, type CliResult } from './helpers.ts';

const KEYS = Array.from({ length: 5 }, (_, index) => `sk_live_sandbox_s3_${index}`);
let sandbox: Sandbox;
let s3: S3Harness;
let used = 0;
beforeAll(async () => {
  [sandbox, s3] = await Promise.all([startSandbox({ port: 0, latencyMs: 40, accounts: KEYS.map((apiKey) => ({ apiKey, credits: 1_000 })) }), startS3()]);
});
afterAll(async () => {
  await sandbox?.close();
  await s3?.close();
});

/** A key of its own, with the AWS environment `aws`: the sandbox's count of its charges is one test's. */
function account(aws: Record<string, string>): { env: NodeJS.ProcessEnv; charged: () => number } {
  const key = KEYS[used++];
  return { env: { ...sandboxEnv(sandbox, key), ...aws }, charged: () => sandbox.requests.charged[key] ?? 0 };
}

// By year: a few partitions (each part a pass writes costs the store several requests).
const exportArgs = (location: string, ...flags: string[]) => ['export', 'forum/subforum', 'subforum=s3-cli-n300', 'sort=new', 'trim=true', '--dataset', location, '--partition', 'year', ...flags];

/** The one line a refused export wrote, and its exit code. */
function refusal(result: CliResult): { code: number | null; lines: string[] } {
  return { code: result.code, lines: result.stderr.trim().split('\n') };
}

describe('export --dataset s3://… to a store that cannot be used', () => {
  it('exits 2 with one line for an unknown bucket, and buys nothing', async () => {
    const { env, charged } = account(s3.proxied);
    const { code, lines } = refusal(await runCli(exportArgs('s3://no-such-bucket/posts'), env));
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^socialstream: s3:\/\/no-such-bucket\/posts: .* has no such bucket$/);
    expect(charged()).toBe(0);
  });

  it('exits 2 with one line for a wrong credential, which it never shows, and buys nothing', async () => {
    const { env, charged } = account(s3Env(s3.proxied.AWS_ENDPOINT_URL_S3, { accessKey: 'WRONG', secretKey: 'not-the-secret' }));
    const result = await runCli(exportArgs(`s3://${BUCKET}/posts`), env);
    const { code, lines } = refusal(result);
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/refused the credentials/);
    expect(result.stderr + result.stdout).not.toContain('not-the-secret');
    expect(charged()).toBe(0);
  });

  it('exits 2 with one line naming --locks for a lone writer on a store that ignores conditional writes, and buys nothing', async () => {
    const { env, charged } = account(s3.direct);
    const { code, lines } = refusal(await runCli(exportArgs(`s3://${BUCKET}/posts`), env));
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('--locks');
    expect(charged()).toBe(0);
  });
});

describe('export --dataset s3://… killed -9 mid-walk', () => {
  it('is resumed from a fresh --work folder with nothing lost, nothing doubled, and credits of its pages and those in flight', async () => {
    const location = `s3://${BUCKET}/${randomUUID()}`;
    const { env, charged } = account(s3.proxied);
    const child = startCli(exportArgs(location, '--work', tempDir(), '--json'), env);
    const ended = finished(child);
    // Killed once it has bought some of its 12 pages.
    while (charged() < 5 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(child.exitCode).toBeNull();
    child.kill('SIGKILL');
    await ended;
    const spentKilled = charged();
    // The store lease of the killed writer's lock frees itself after a lease (30 s): until then the resume is refused, buying nothing.
    let resumed: CliResult;
    for (;;) {
      resumed = await runCli(exportArgs(location, '--work', tempDir(), '--resume', '--json'), env);
      if (!/another export is writing/.test(resumed.stderr)) break;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ complete: true, resumed: true });
    // Every page of the walk once, and the one in flight at the kill (a cursor walk has one at a
    // time, and its next is bought only once the page before is on the store): bought again.
    expect(spentKilled).toBeLessThan(12);
    expect(charged()).toBeGreaterThanOrEqual(12);
    expect(charged()).toBeLessThanOrEqual(13);
    const parts = await downloadParts(location, s3.proxied);
    const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM read_parquet(${sqlPath(`${parts}/**/*.parquet`)}, hive_partitioning = true)`);
    expect({ rows: Number(rows), keys: Number(keys) }).toEqual({ rows: 300, keys: 300 });
  }, 90_000);
});

