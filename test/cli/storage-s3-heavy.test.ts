/**
 * The storage conformance tests (test/dataset/storage/conformance.test.ts, transfers.test.ts) that
 * take seconds on s3rver: a listing of more than one page, and multipart uploads (from memory and
 * from a file), and a move of a body that large. Both pass through the
 * conditional-write proxy unchanged, so they run against s3rver itself.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/dataset/storage/open.ts';
import { StorageError } from '../../src/errors.ts';
import { startConditionalProxy } from '../helpers/conditional-proxy.ts';
import { BUCKET, s3Env, startS3, type S3Harness } from '../helpers/s3.ts';
import { bigBody, MULTIPART_SIZES, names, requestsOf, writeMany } from '../helpers/storage.ts';

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

describe('an S3 store', () => {
  it('lists more than a thousand objects, all of them, in byte order of their names, in two LIST pages', async () => {
    const storage = await openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct });
    try {
      const written = await writeMany(storage, 1_003);
      let listed: string[] = [];
      const counted = await requestsOf(storage, async () => {
        listed = await names(storage, 'many/');
      });
      expect(listed).toEqual(written);
      expect(counted).toEqual({ LIST: 2 });
    } finally {
      await storage.close();
    }
  });

  it('stores a body past the multipart threshold in parts (create, three parts, complete), read back byte for byte', async () => {
    const storage = await openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct, ...MULTIPART_SIZES });
    try {
      const body = bigBody();
      expect(await requestsOf(storage, () => storage.write('big/part.parquet', body))).toEqual({ MULTIPART: 5 });
      const back = (await storage.read('big/part.parquet'))!;
      expect(back.length).toBe(body.length);
      expect(Buffer.compare(back, body)).toBe(0);
    } finally {
      await storage.close();
    }
  });

  it('uploads a file past the multipart threshold in parts, byte for byte, and takes the file', async () => {
    const storage = await openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct, ...MULTIPART_SIZES });
    try {
      const body = bigBody();
      await mkdir(storage.scratch, { recursive: true });
      const file = join(storage.scratch, `test-${randomUUID()}`);
      await writeFile(file, body);
      expect(await requestsOf(storage, () => storage.upload('big/part.parquet', file))).toEqual({ MULTIPART: 5 });
      expect(Buffer.compare((await storage.read('big/part.parquet'))!, body)).toBe(0);
      expect(existsSync(file)).toBe(false);
    } finally {
      await storage.close();
    }
  });

  it('moves an object past the multipart threshold in one copy and one removal, byte for byte', async () => {
    const storage = await openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct, ...MULTIPART_SIZES });
    try {
      const body = bigBody();
      await storage.write('publishing/p/big.staged', body);
      expect(await requestsOf(storage, () => storage.move('publishing/p/big.staged', 'big/part.parquet'))).toEqual({ PUT: 1, DELETE: 1 });
      expect(Buffer.compare((await storage.read('big/part.parquet'))!, body)).toBe(0);
      expect(await storage.exists('publishing/p/big.staged')).toBe(false);
    } finally {
      await storage.close();
    }
  });

  it('has at most 48 requests in flight, however many callers ask at once (the SDK queues, and warns about, what its 50 connections cannot carry)', async () => {
    const slow = await startConditionalProxy(s3.direct.AWS_ENDPOINT_URL_S3, { delayMs: 50 });
    const storage = await openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3Env(slow.url) });
    try {
      const found = await Promise.all(Array.from({ length: 200 }, (_, i) => storage.exists(`absent/${i}.json`)));
      expect(found.every((each) => !each)).toBe(true);
      expect(storage.requests.HEAD).toBe(200);
      expect(slow.mostAtOnce).toBeGreaterThanOrEqual(40);
      expect(slow.mostAtOnce).toBeLessThanOrEqual(48);
    } finally {
      await storage.close();
      await slow.close();
    }
  });

  it('aborts a multipart upload whose part is refused, and leaves no object', async () => {
    const refusing = await startConditionalProxy(s3.direct.AWS_ENDPOINT_URL_S3, { refuse: /^PUT .*[?&]partNumber=2(&|$)/ });
    const location = `s3://${BUCKET}/${randomUUID()}`;
    const storage = await openStorage(location, { env: s3Env(refusing.url), ...MULTIPART_SIZES });
    try {
      await expect(storage.write('big/part.parquet', bigBody())).rejects.toThrow(StorageError);
      // Create, three parts tried (the second refused), abort.
      expect(storage.requests.MULTIPART).toBe(5);
      const reader = await openStorage(location, { env: s3.direct });
      expect(await reader.read('big/part.parquet')).toBeUndefined();
      await reader.close();
    } finally {
      await storage.close();
      await refusing.close();
    }
  });
});
