/**
 * An export into an `s3://` dataset whose store cannot be used (an unknown bucket, a refused
 * credential, a lone writer on a store that ignores conditional writes) is refused before anything
 * is read, written or bought. (`dataset info` and `compact` on a bucket: test/cli/dataset-maintenance-s3.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.ts';
import { exportTo } from '../../src/export/index.ts';
import { createClient } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { BUCKET, s3Env, startS3, type S3Harness } from '../helpers/s3.ts';

describe('an export into an s3:// dataset whose store cannot be used', () => {
  let sandbox: Sandbox;
  let s3: S3Harness;
  beforeAll(async () => {
    [sandbox, s3] = await Promise.all([startSandbox({ port: 0 }), startS3()]);
  });
  afterAll(async () => {
    await sandbox?.close();
    await s3?.close();
  });

  /** What `exportTo` into `location` throws with the AWS environment `env`, and the credits the sandbox charged. */
  async function refusal(location: string, env: Record<string, string>): Promise<{ error: unknown; charged: number }> {
    const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const error = await exportTo(client.forum.subforum({ subforum: 'refused' }), { dataset: location }).catch((caught: unknown) => caught);
      return { error, charged: sandbox.requests.charged[sandbox.apiKey] ?? 0 };
    } finally {
      process.env = saved;
      await client.close();
    }
  }

  it('is refused as an unknown bucket (STORAGE_NOT_FOUND), naming it, before any request', async () => {
    const { error, charged } = await refusal('s3://no-such-bucket/posts', s3.direct);
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'STORAGE_NOT_FOUND' });
    expect((error as Error).message).toContain('s3://no-such-bucket/posts');
    expect(charged).toBe(0);
  });

  it('is refused for a wrong credential (STORAGE_ACCESS), never showing it, before any request', async () => {
    const { error, charged } = await refusal(`s3://${BUCKET}/posts`, s3Env(s3.direct.AWS_ENDPOINT_URL_S3, { accessKey: 'WRONG', secretKey: 'not-the-secret' }));
    expect(error).toMatchObject({ code: 'STORAGE_ACCESS' });
    expect((error as Error).message).not.toContain('not-the-secret');
    expect(charged).toBe(0);
  });

  it('is refused to a lone writer when the store ignores conditional writes, naming --locks, before any request', async () => {
    const { error, charged } = await refusal(`s3://${BUCKET}/posts`, s3.direct);
    expect(error).toMatchObject({ code: 'STORAGE_NO_CONDITIONAL_WRITES' });
    expect((error as Error).message).toContain('--locks');
    expect(charged).toBe(0);
  });
});
