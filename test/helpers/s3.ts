/**
 * A real S3 API for tests: s3rver on 127.0.0.1 (a free port) in a temporary folder with one bucket,
 * and the conditional-write proxy in front of it (`conditional-proxy.ts`). Each gives the
 * environment the AWS SDK is configured by, as a user's shell would hold it.
 */
import crypto from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import S3rver from 's3rver';
import { openStorage } from '../../src/dataset/storage/open.ts';
import { startConditionalProxy } from './conditional-proxy.ts';

/** The bucket every harness holds. */
export const BUCKET = 'socialstream-test';
/** s3rver's one pair of credentials. */
export const ACCESS_KEY = 'S3RVER';
export const SECRET_KEY = 'S3RVER';

/** A running s3rver and its proxy. */
export interface S3Harness {
  /** The environment for s3rver itself (which ignores conditional writes). */
  readonly direct: Record<string, string>;
  /** The environment for s3rver behind the proxy that honours them. */
  readonly proxied: Record<string, string>;
  close(): Promise<void>;
}

/** The SDK's environment for an S3 endpoint at `url`, with s3rver's credentials unless others are given. */
export function s3Env(url: string, credentials: { accessKey: string; secretKey: string } = { accessKey: ACCESS_KEY, secretKey: SECRET_KEY }): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: credentials.accessKey, AWS_SECRET_ACCESS_KEY: credentials.secretKey, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_S3: url };
}

/**
 * s3rver makes the continuation token of a listing cut at 1,000 keys with DES, which OpenSSL 3
 * (Node 17 and later) refuses without `--openssl-legacy-provider`: every listing of more keys
 * failed with 500. Its token only has to come back to it, so DES, which nothing else in a test
 * process uses, becomes the identity here: the token is the IV and the plain text.
 */
function letS3rverPaginate(): void {
  const { createCipheriv, createDecipheriv } = crypto;
  const identity = { update: (data: string | Buffer, encoding?: BufferEncoding) => (typeof data === 'string' ? Buffer.from(data, encoding) : data), final: () => Buffer.alloc(0) };
  const patched = crypto as unknown as Record<string, unknown>;
  if ((patched.createCipheriv as { desIdentity?: true }).desIdentity) return;
  patched.createCipheriv = Object.assign((algorithm: string, ...rest: unknown[]) => (algorithm === 'des' ? identity : (createCipheriv as (...args: unknown[]) => unknown)(algorithm, ...rest)), { desIdentity: true });
  patched.createDecipheriv = (algorithm: string, ...rest: unknown[]) => (algorithm === 'des' ? identity : (createDecipheriv as (...args: unknown[]) => unknown)(algorithm, ...rest));
}

/** Starts s3rver with `BUCKET`, and the proxy in front of it. */
export async function startS3(): Promise<S3Harness> {
  letS3rverPaginate();
  const directory = await mkdtemp(join(tmpdir(), 'socialstream-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: BUCKET }] });
  const { port } = await server.run();
  const url = `http://127.0.0.1:${port}`;
  const proxy = await startConditionalProxy(url);
  return {
    direct: s3Env(url),
    proxied: s3Env(proxy.url),
    async close() {
      await proxy.close();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Downloads every Parquet part of the dataset at `location` (the AWS settings of `env`, else the
 * process's) into a new local folder, by the same names, for DuckDB to read.
 */
export async function downloadParts(location: string, env?: Record<string, string>): Promise<string> {
  const storage = await openStorage(location, env === undefined ? {} : { env });
  const folder = await mkdtemp(join(tmpdir(), 'dataset-s3-parts-'));
  try {
    for await (const { name } of storage.list('forum/')) {
      if (!name.endsWith('.parquet')) continue;
      await mkdir(dirname(join(folder, name)), { recursive: true });
      await writeFile(join(folder, name), (await storage.read(name))!);
    }
  } finally {
    await storage.close();
  }
  return folder;
}

/** The `cloudOptions` nodejs-polars reads a bucket on the store of `env` with: its endpoint, plain HTTP, path-style (docs/guide/datasets.md). */
export function polarsCloudOptions(env: Record<string, string>): Record<string, string> {
  return {
    aws_access_key_id: env.AWS_ACCESS_KEY_ID,
    aws_secret_access_key: env.AWS_SECRET_ACCESS_KEY,
    aws_region: env.AWS_REGION,
    aws_endpoint_url: env.AWS_ENDPOINT_URL_S3,
    aws_allow_http: 'true',
    aws_virtual_hosted_style_request: 'false',
  };
}
