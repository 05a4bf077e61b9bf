/**
 * The AWS SDK is an optional dependency: a local store never loads it, an `s3://` one without it
 * installed says how to install it, and with it, a command's output holds none of the SDK's warnings.
 * Each case is its own node process (test/cli/fixtures/storage-open.ts).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished, tempDir } from './helpers.ts';
import { BUCKET, startS3, type S3Harness } from '../helpers/s3.ts';

const OPEN = resolve(import.meta.dirname, 'fixtures/storage-open.ts');

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

async function open(location: string, options: { withoutSdk?: boolean; env?: Record<string, string> } = {}): Promise<{ result: Record<string, unknown>; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', OPEN, location, ...(options.withoutSdk === true ? ['--without-sdk'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
    timeout: 60_000,
  });
  const { stdout, stderr } = await finished(child);
  return { result: JSON.parse(stdout.trim().split('\n').at(-1)!), stderr };
}

describe('the AWS SDK', () => {
  it('is never imported for a local store: one works where the SDK cannot be found', async () => {
    expect((await open(tempDir(), { withoutSdk: true })).result).toEqual({ ok: true });
  });

  it('missing, makes an s3:// store a typed error of one line naming npm install @aws-sdk/client-s3', async () => {
    const { result } = await open(`s3://${BUCKET}/data`, { withoutSdk: true, env: s3.proxied });
    expect(result.code).toBe('STORAGE_SDK_MISSING');
    expect(result.message).toContain('npm install @aws-sdk/client-s3');
    expect(result.message).not.toContain('\n');
  });

  it('prints no warning of its own when an s3:// store is opened on Node 20', async () => {
    const { result, stderr } = await open(`s3://${BUCKET}/data`, { env: s3.proxied });
    expect(result).toEqual({ ok: true });
    expect(stderr).not.toContain('NodeVersionSupportWarning');
    expect(stderr).not.toContain('Warning');
  });
});
