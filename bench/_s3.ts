/**
 * The tests' S3 (`test/helpers/s3.ts`: s3rver on loopback, and the proxy that honours conditional
 * writes) for the benches and demos, which put dozens of requests to it at once. s3rver removes a
 * deleted object's folders once empty, and two deletes in one folder, or a delete and a put there,
 * race on that clean-up (a folder read or removed under the other): answered 500, which the store
 * reports. Real stores have no folders; here a deleted object's empty folders are left instead,
 * which s3rver's listings do not show. And s3rver writes an object's bytes in place, so a read
 * meanwhile gets a part of them (a JSON object cut short), where a real store shows the old object
 * or the new one: here the bytes are written beside it and renamed over it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { buffer } from 'node:stream/consumers';
import FilesystemStore, { type S3rverObject } from 's3rver/lib/stores/filesystem.js';

FilesystemStore.prototype.deleteObject = async function (this: FilesystemStore, bucket: string, key: string): Promise<void> {
  await Promise.all(
    (['object', 'object.md5', 'metadata.json'] as const).map((resource) =>
      unlink(this.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      }),
    ),
  );
};

FilesystemStore.prototype.putObject = async function (this: FilesystemStore, object: S3rverObject): Promise<{ size: number; md5: string }> {
  const content = Buffer.isBuffer(object.content) ? object.content : await buffer(object.content);
  const path = this.getResourcePath(object.bucket, object.key, 'object');
  await mkdir(dirname(path), { recursive: true });
  // Under a name no listing shows (it does not end as an object's), then renamed over the object.
  const aside = `${path}.${randomUUID()}.tmp`;
  await writeFile(aside, content);
  await rename(aside, path);
  const md5 = createHash('md5').update(content).digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, md5);
  return { size: content.length, md5 };
};

export { BUCKET, polarsCloudOptions, startS3, type S3Harness } from '../test/helpers/s3.ts';
