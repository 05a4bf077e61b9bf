/**
 * A local dataset put on s3rver, and a bucket's dataset fetched back, with the AWS SDK itself (not
 * our storage): what a user's `aws s3 sync` would do, so that the tests of `dataset info|compact
 * s3://…` start from a dataset our storage did not write, and read the result as any reader would.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BUCKET } from '../../helpers/s3.ts';

/** An SDK client for the endpoint and credentials of `env` (`S3Harness.direct`), path-style as s3rver wants. */
export function s3Client(env: Record<string, string>): S3Client {
  return new S3Client({
    endpoint: env.AWS_ENDPOINT_URL_S3,
    region: env.AWS_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
  });
}

/** Puts every file of the dataset folder `dir` under `prefix` (its own scratch and temporary files, whose names begin with `.`, left out). */
export async function uploadDataset(client: S3Client, dir: string, prefix: string): Promise<void> {
  const files = (readdirSync(dir, { recursive: true, withFileTypes: true }) as { name: string; parentPath: string; isFile(): boolean }[]).filter((entry) => entry.isFile());
  for (const file of files) {
    const name = join(file.parentPath, file.name).slice(dir.length + 1).split(sep).join('/');
    if (name.split('/').some((segment) => segment.startsWith('.'))) continue;
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}/${name}`, Body: readFileSync(join(dir, ...name.split('/'))) }));
  }
}

/** The names under `prefix` (relative to it), the store's own (`.…`) left out. */
export async function keysUnder(client: S3Client, prefix: string): Promise<string[]> {
  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${prefix}/`, ...(token === undefined ? {} : { ContinuationToken: token }) }));
    for (const { Key } of page.Contents ?? []) if (Key !== undefined && !Key.slice(prefix.length + 1).split('/').some((segment) => segment.startsWith('.'))) names.push(Key.slice(prefix.length + 1));
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return names.sort();
}

/** Writes every object under `prefix` into the folder `dir`, by its name. */
export async function downloadDataset(client: S3Client, prefix: string, dir: string): Promise<void> {
  for (const name of await keysUnder(client, prefix)) {
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${prefix}/${name}` }));
    const path = join(dir, ...name.split('/'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, await got.Body!.transformToByteArray());
  }
}

/** Reads the JSON object `name` under `prefix`. */
export async function readJson(client: S3Client, prefix: string, name: string): Promise<Record<string, unknown>> {
  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${prefix}/${name}` }));
  return JSON.parse(await got.Body!.transformToString()) as Record<string, unknown>;
}

/** Replaces the JSON object `name` under `prefix` with `value`. */
export async function writeJson(client: S3Client, prefix: string, name: string, value: unknown): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}/${name}`, Body: JSON.stringify(value) }));
}
