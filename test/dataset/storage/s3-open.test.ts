/**
 * Opening an S3 store that cannot be used: one line, a typed error with a code, and never a
 * credential in it. Against s3rver on 127.0.0.1 (test/helpers/s3.ts).
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionError, StorageAccessError, StorageError, StorageNameError, StorageNotFoundError, StorageUnreachableError } from '../../../src/errors.ts';
import { openStorage } from '../../../src/dataset/storage/open.ts';
import { BUCKET, s3Env, startS3, type S3Harness } from '../../helpers/s3.ts';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz-secret-never-shown';
const ACCESS_KEY = 'AKIAWRONGKEYNEVERSHOWN';

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

async function refusal(location: string, env: Record<string, string>, options = {}): Promise<StorageError> {
  const error = await openStorage(location, { env, ...options }).then(
    async (storage) => {
      await storage.close();
      throw new Error(`${location} opened`);
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(StorageError);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  expect(message).not.toContain(SECRET);
  expect(message).not.toContain(ACCESS_KEY);
  return error as StorageError;
}

/** A port of 127.0.0.1 nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('opening an S3 store', () => {
  it('refuses a wrong credential in one line (STORAGE_ACCESS), with neither the secret nor the key in it', async () => {
    const error = await refusal(`s3://${BUCKET}/data`, { ...s3.direct, AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET });
    expect(error).toBeInstanceOf(StorageAccessError);
    expect(error.code).toBe('STORAGE_ACCESS');
    expect(error.message).toContain('refused the credentials');
    expect(error.message).toContain(`s3://${BUCKET}/data`);
  });

  it('refuses a bucket the store does not have in one line (STORAGE_NOT_FOUND), naming it', async () => {
    const error = await refusal('s3://no-such-bucket-here/data', { ...s3.direct, AWS_SECRET_ACCESS_KEY: SECRET });
    expect(error).toBeInstanceOf(StorageNotFoundError);
    expect(error.code).toBe('STORAGE_NOT_FOUND');
    expect(error.message).toContain('s3://no-such-bucket-here/data');
    expect(error.message).toContain('no such bucket');
  });

  it('refuses an endpoint nothing answers at in one line (STORAGE_UNREACHABLE), naming its host', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const error = await refusal(`s3://${BUCKET}/data`, s3Env(url, { accessKey: ACCESS_KEY, secretKey: SECRET }));
    expect(error).toBeInstanceOf(StorageUnreachableError);
    expect(error.code).toBe('STORAGE_UNREACHABLE');
    expect(error.message).toContain(url);
  });

  it('refuses parts smaller than S3 takes before any request', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    await expect(openStorage(`s3://${BUCKET}/data`, { env: s3Env(url), partSize: 1024 })).rejects.toThrow(OptionError);
  });

  it('refuses a name whose key would be longer than S3 takes (1,024 bytes) before any request', async () => {
    const storage = await openStorage(`s3://${BUCKET}/data`, { env: s3.direct });
    try {
      const before = storage.requests;
      await expect(storage.write(`${'é/'.repeat(340)}part`, new Uint8Array(1))).rejects.toThrow(StorageNameError);
      expect(storage.requests).toEqual(before);
    } finally {
      await storage.close();
    }
  });
});
