/**
 * A store in an S3 bucket under a prefix (`s3://bucket/prefix`): an object is the key
 * `prefix/name`. A write is one PUT, or for a body of `multipartThreshold` bytes or more a
 * multipart upload (parts of `partSize`, aborted when a part fails); either way S3 shows the old
 * object or the new one, never a part, and since 2020 reads and lists see a write as soon as it is
 * acknowledged.
 *
 * A lock's lease is the object `.<name>.lease` beside where `<name>` would be, replaced only by a
 * conditional write: created with `If-None-Match: *` (fails when it exists), taken over once run
 * out, renewed, and deleted on release with `If-Match: <its ETag>` (fails when another replaced it
 * meanwhile), so of two takers at once exactly one succeeds. A store that ignores these headers
 * (s3rver; some older S3-compatible servers) would let both succeed: `openS3Storage` probes for
 * them when locks are asked for, and refuses such a store.
 */
import { AtOnce, mapAtOnce } from '../../at-once.ts';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { ConditionalWritesError, OptionError, StorageError, StorageNameError, StorageNotFoundError } from '../../errors.ts';
import { checkLockOptions, defaultHolder, leaseBytes, leaseRanOut } from './lease.ts';
import { describeLocation, type S3Location } from './location.ts';
import { checkName, checkPrefix, isOwnName } from './names.ts';
import { clientConfig, endpointOf, loadSdk, makeClient, type Environment, type S3Sdk } from './s3-client.ts';
import { storageErrorOf } from './s3-errors.ts';
import { RequestTally } from './tally.ts';
import { checkTailBytes } from './tail.ts';
import type { Lease, LocalCopy, LockOptions, ObjectTail, RequestCounts, RequestKind, Storage, StoredObject } from './types.ts';

const MiB = 1024 * 1024;
/** S3's smallest part but the last, and its most parts in one upload. */
const MIN_PART = 5 * MiB;
const MAX_PARTS = 10_000;
/** S3's longest key, in bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;
/** Parts of one upload in flight at once. */
const PART_CONCURRENCY = 4;
/** Answers of a conditional write that did not hold (412), raced another (409), or found no object to match (404). */
const CONDITION_FAILED = [404, 409, 412];
/** The largest object one CopyObject copies (5 GiB): a larger one would need a multipart copy. */
const MAX_COPY = 5 * 1024 * MiB;
/** Removals in flight at once (`removeAll`). */
const REMOVE_CONCURRENCY = 8;
/**
 * Requests of one store in flight at once, whoever sends them. The client holds 50 connections (the
 * AWS SDK's default); a publisher of a group of walks renewing a lease for each walk and partition
 * at once, while it removes staging objects, had 265 requests out, and the SDK warned about those
 * it queued on stderr, in the middle of a command's output. Past this many, requests wait here.
 */
const REQUESTS_AT_ONCE = 48;

/**
 * The `x-amz-copy-source` of `key`: URL-encoded, as S3 asks, but leaving the characters `encodeURI`
 * leaves (`=` of a Hive partition, `+`, `,`…) as they are, which S3 reads either way and some
 * S3-compatible servers (s3rver, which decodes it with `decodeURI`) only that way; `?` and `#`, which
 * would end the path, are encoded.
 */
function copySource(bucket: string, key: string): string {
  return encodeURI(`${bucket}/${key}`).replaceAll('?', '%3F').replaceAll('#', '%23');
}

/** How an S3 store is opened (`openS3Storage`). */
export interface S3StorageOptions {
  /** Whether locks will be taken: the store is then checked to honour conditional writes, and refused if not. */
  readonly locks?: boolean;
  /**
   * Where the `AWS_*` variables of docs/storage.md are read (`process.env` by default). The SDK's
   * default chain, used when they name no key (profiles' files, a role), reads the process's own.
   */
  readonly env?: Environment;
  /** Bodies of this many bytes or more go up as multipart uploads (16 MiB by default). */
  readonly multipartThreshold?: number;
  /** The size of each part but the last (8 MiB by default; at least 5 MiB, S3's least). */
  readonly partSize?: number;
}

/**
 * Opens `location`: loads the SDK, makes the client, and checks the bucket with one LIST, so that
 * wrong credentials, a missing bucket or an unreachable endpoint are one typed error here, before
 * anything is bought. With `locks`, also checks that the store honours conditional writes.
 */
export async function openS3Storage(location: S3Location, options: S3StorageOptions = {}): Promise<S3Storage> {
  const partSize = options.partSize ?? 8 * MiB;
  const multipartThreshold = options.multipartThreshold ?? 16 * MiB;
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART) throw new OptionError([{ option: 'partSize' }, ` must be a whole number of bytes of at least 5 MiB (${MIN_PART}), not ${String(partSize)}`]);
  if (!Number.isSafeInteger(multipartThreshold) || multipartThreshold < 1) throw new OptionError([{ option: 'multipartThreshold' }, ` must be a whole number of bytes above 0, not ${String(multipartThreshold)}`]);
  const described = describeLocation(location);
  const sdk = await loadSdk(described);
  const config = clientConfig(options.env ?? process.env);
  const storage = new S3Storage(sdk, makeClient(sdk, config), location, endpointOf(config), { partSize, multipartThreshold });
  try {
    await storage.check();
    if (options.locks === true) await storage.checkConditionalWrites();
  } catch (error) {
    await storage.close();
    throw error;
  }
  return storage;
}

/** A store in an S3 bucket (`openS3Storage`). */
export class S3Storage implements Storage {
  readonly location: string;
  /** A bucket has no folder of files. */
  readonly folder = undefined;
  readonly #tally = new RequestTally();
  readonly #requests = new AtOnce(REQUESTS_AT_ONCE);
  readonly #bucket: string;
  /** The keys' common beginning: the prefix and a slash, or nothing at the bucket's root. */
  readonly #base: string;
  /** Whether the probe of `checkConditionalWrites` passed: it is not made twice. */
  #conditionalWrites = false;

  constructor(
    private readonly sdk: S3Sdk,
    private readonly client: S3Client,
    location: S3Location,
    /** The endpoint's scheme and host, for messages. */
    private readonly endpoint: string,
    private readonly sizes: { readonly partSize: number; readonly multipartThreshold: number },
  ) {
    this.location = describeLocation(location);
    this.#bucket = location.bucket;
    this.#base = location.prefix === '' ? '' : `${location.prefix}/`;
  }

  get requests(): RequestCounts {
    return this.#tally.counts;
  }

  /** One LIST of at most one key: the bucket exists, and the credentials may list it. */
  async check(): Promise<void> {
    await this.#send('LIST', 'opening the bucket', () => this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#base, MaxKeys: 1 })));
  }

  /**
   * Writes a probe object of the store's own twice with `If-None-Match: *`, then once with an
   * `If-Match` that cannot hold; a store that lets any of them through ignores conditional writes
   * and is refused, naming the Redis locks that do not need them. The probe is removed either way.
   */
  async checkConditionalWrites(): Promise<void> {
    if (this.#conditionalWrites) return;
    const key = `${this.#base}.socialstream-probe-${randomUUID()}`;
    const put = (condition: { IfNoneMatch: string } | { IfMatch: string }) =>
      this.#attempt('PUT', 'probing conditional writes', () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: new Uint8Array(0), ...condition })), CONDITION_FAILED);
    try {
      await put({ IfNoneMatch: '*' });
      const again = await put({ IfNoneMatch: '*' });
      const unmatched = typeof again === 'number' ? await put({ IfMatch: '"00000000000000000000000000000000"' }) : undefined;
      if (typeof again !== 'number' || typeof unmatched !== 'number') {
        throw new ConditionalWritesError(
          `${this.location}: ${this.endpoint} ignores conditional writes (If-None-Match, If-Match), so it cannot hold a lone writer's locks; hold them in Redis: --locks redis://HOST:PORT`,
          this.location,
        );
      }
      this.#conditionalWrites = true;
    } finally {
      await this.#send('DELETE', 'removing the probe', () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.#bucket, Key: key }))).catch(() => undefined);
    }
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    checkPrefix(prefix, this.location);
    let token: string | undefined;
    do {
      const page = await this.#send('LIST', `listing ${prefix || 'the prefix'}`, () =>
        this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: this.#bucket, Prefix: `${this.#base}${prefix}`, ...(token === undefined ? {} : { ContinuationToken: token }) })),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        const name = object.Key.slice(this.#base.length);
        if (isOwnName(name)) continue;
        yield { name, size: object.Size ?? 0, ...(object.ETag === undefined ? {} : { etag: object.ETag }), ...(object.LastModified === undefined ? {} : { modifiedMs: object.LastModified.getTime() }) };
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    return (await this.#get(this.#keyOf(name), `reading ${name}`))?.body;
  }

  async exists(name: string): Promise<boolean> {
    const key = this.#keyOf(name);
    const head = await this.#attempt('HEAD', `looking for ${name}`, () => this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.#bucket, Key: key })), [404]);
    return typeof head !== 'number';
  }

  async write(name: string, body: Uint8Array): Promise<void> {
    const key = this.#keyOf(name);
    if (body.byteLength >= this.sizes.multipartThreshold) return this.#upload(key, body.byteLength, async (start, end) => body.subarray(start, end), `writing ${name}`);
    await this.#send('PUT', `writing ${name}`, () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body })));
  }

  async remove(name: string): Promise<void> {
    const key = this.#keyOf(name);
    await this.#send('DELETE', `removing ${name}`, () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.#bucket, Key: key })));
  }

  async lock(name: string, options: LockOptions): Promise<Lease | undefined> {
    checkName(name, this.location);
    checkLockOptions(options);
    const slash = name.lastIndexOf('/');
    const key = this.#keyOf(`${name.slice(0, slash + 1)}.${name.slice(slash + 1)}.lease`, true);
    const holder = options.holder ?? defaultHolder();
    const action = `taking the lock ${name}`;
    const current = await this.#get(key, action);
    if (current !== undefined && !leaseRanOut(current.body)) return undefined;
    const taken = await this.#putLease(key, leaseBytes(holder, options.leaseMs), current === undefined ? { IfNoneMatch: '*' } : { IfMatch: current.etag }, action);
    if (taken === undefined) return undefined;
    let etag = taken;
    return {
      name,
      renew: async () => {
        // Before every request waiting for a place: a lease must not run out behind a publish's other requests.
        const renewed = await this.#putLease(key, leaseBytes(holder, options.leaseMs), { IfMatch: etag }, `renewing the lock ${name}`, true);
        if (renewed === undefined) return false;
        etag = renewed;
        return true;
      },
      release: async () => {
        await this.#attempt('DELETE', `releasing the lock ${name}`, () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.#bucket, Key: key, IfMatch: etag })), CONDITION_FAILED);
      },
    };
  }

  async close(): Promise<void> {
    this.client.destroy();
    await rm(this.scratch, { recursive: true, force: true });
  }

  /** One PUT with `If-None-Match: *`, whatever the body's size (S3 takes up to 5 GiB in one; a settings object is small). */
  async create(name: string, body: Uint8Array): Promise<string | undefined> {
    const key = this.#keyOf(name);
    const put = await this.#attempt('PUT', `creating ${name}`, () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body, IfNoneMatch: '*' })), CONDITION_FAILED);
    return typeof put === 'number' ? undefined : (put.ETag ?? '');
  }

  async version(name: string): Promise<string | undefined> {
    const key = this.#keyOf(name);
    const head = await this.#attempt('HEAD', `looking for ${name}`, () => this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.#bucket, Key: key })), [404]);
    return typeof head === 'number' ? undefined : (head.ETag ?? '');
  }

  /** The key of the object `name` (checked a stored name, unless it is the store's `own`), at most S3's 1,024 bytes. */
  #keyOf(name: string, own = false): string {
    if (!own) checkName(name, this.location);
    const key = this.#base + name;
    if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new StorageNameError(`the name ${JSON.stringify(name)} makes a key longer than S3's ${MAX_KEY_BYTES} bytes`, this.location);
    return key;
  }

  /** Puts a lease's state under `condition`: its new ETag, or undefined when the condition did not hold. */
  async #putLease(key: string, body: Uint8Array, condition: { IfNoneMatch: string } | { IfMatch: string }, action: string, urgent = false): Promise<string | undefined> {
    const put = await this.#attempt('PUT', action, () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body, ...condition })), CONDITION_FAILED, urgent);
    return typeof put === 'number' ? undefined : put.ETag;
  }

  /** The object at `key` and its ETag, or undefined when there is none. */
  async #get(key: string, action: string): Promise<{ body: Uint8Array; etag: string } | undefined> {
    const got = await this.#attempt('GET', action, () => this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.#bucket, Key: key })), [404]);
    if (typeof got === 'number' || got.Body === undefined) return undefined;
    try {
      return { body: await got.Body.transformToByteArray(), etag: got.ETag ?? '' };
    } catch (error) {
      throw storageErrorOf(error, this.location, this.endpoint, action);
    }
  }

  /** A multipart upload of `size` bytes to `key` (`bytes(start, end)` gives each part), its parts a few at a time; aborted when any request fails. */
  async #upload(key: string, size: number, bytes: (start: number, end: number) => Promise<Uint8Array>, action: string): Promise<void> {
    const created = await this.#send('MULTIPART', action, () => this.client.send(new this.sdk.CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: key })));
    const UploadId = created.UploadId;
    const partSize = Math.max(this.sizes.partSize, Math.ceil(size / MAX_PARTS));
    const count = Math.max(1, Math.ceil(size / partSize));
    const etags: string[] = [];
    try {
      let next = 0;
      let failed = false;
      const uploader = async (): Promise<void> => {
        for (let index = next++; index < count && !failed; index = next++) {
          try {
            const part = await bytes(index * partSize, Math.min(size, (index + 1) * partSize));
            const uploaded = await this.#send('MULTIPART', action, () => this.client.send(new this.sdk.UploadPartCommand({ Bucket: this.#bucket, Key: key, UploadId, PartNumber: index + 1, Body: part })));
            etags[index] = uploaded.ETag ?? '';
          } catch (error) {
            // The other uploaders stop at their next part, so that the abort below comes after every part sent.
            failed = true;
            throw error;
          }
        }
      };
      const uploaded = await Promise.allSettled(Array.from({ length: Math.min(PART_CONCURRENCY, count) }, uploader));
      const failure = uploaded.find((each) => each.status === 'rejected');
      if (failure !== undefined) throw failure.reason;
      await this.#send('MULTIPART', action, () =>
        this.client.send(new this.sdk.CompleteMultipartUploadCommand({ Bucket: this.#bucket, Key: key, UploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) } })),
      );
    } catch (error) {
      // Parts of an upload never completed are stored (and billed) until aborted.
      await this.#send('MULTIPART', action, () => this.client.send(new this.sdk.AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: key, UploadId }))).catch(() => undefined);
      throw error;
    }
  }

  /**
   * This store's own folder under the system's temporary folder, removed when it closes: processes
   * (queue workers on one machine) and stores never share one, so none removes what another is writing.
   */
  readonly scratch = join(tmpdir(), `socialstream-scratch-${randomUUID()}`);

  async upload(name: string, file: string): Promise<void> {
    const key = this.#keyOf(name);
    const action = `uploading ${name}`;
    const { size } = await stat(file);
    if (size >= this.sizes.multipartThreshold) {
      // Read a part at a time from the file: at most the parts in flight are in memory.
      const handle = await open(file, 'r');
      try {
        await this.#upload(key, size, async (start, end) => {
          const part = new Uint8Array(end - start);
          for (let read = 0; read < part.byteLength; ) {
            const { bytesRead } = await handle.read(part, read, part.byteLength - read, start + read);
            if (bytesRead === 0) throw new Error(`${file} ended early`);
            read += bytesRead;
          }
          return part;
        }, action);
      } finally {
        await handle.close();
      }
    } else {
      await this.#send('PUT', action, () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: createReadStream(file), ContentLength: size })));
    }
    await rm(file, { force: true });
  }

  async move(from: string, to: string): Promise<boolean> {
    const source = this.#keyOf(from);
    const target = this.#keyOf(to);
    const action = `moving ${from} to ${to}`;
    const copied = await this.#attempt('PUT', action, () => this.client.send(new this.sdk.CopyObjectCommand({ Bucket: this.#bucket, Key: target, CopySource: copySource(this.#bucket, source) })), [404]).catch((error: unknown) => {
      // CopyObject copies 5 GiB at most; a dataset's parts are bounded by its split size, far below.
      if ((error as StorageError).status !== 400) throw error;
      throw new StorageError(`${this.location}: ${action} failed at ${this.endpoint} (HTTP 400); CopyObject copies at most ${MAX_COPY} bytes, and a larger object cannot be moved`, this.location, { cause: error, status: 400 });
    });
    if (typeof copied === 'number') return false;
    await this.#send('DELETE', action, () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.#bucket, Key: source })));
    return true;
  }

  async download(name: string): Promise<LocalCopy | undefined> {
    const key = this.#keyOf(name);
    const action = `downloading ${name}`;
    const got = await this.#attempt('GET', action, () => this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.#bucket, Key: key })), [404]);
    if (typeof got === 'number' || got.Body === undefined) return undefined;
    await mkdir(this.scratch, { recursive: true });
    const path = join(this.scratch, `download-${randomUUID()}`);
    try {
      await pipeline(got.Body as Readable, createWriteStream(path, { flags: 'wx' }));
    } catch (error) {
      await rm(path, { force: true });
      throw storageErrorOf(error, this.location, this.endpoint, action);
    }
    return { path, discard: () => rm(path, { force: true }) };
  }

  async removeAll(names: readonly string[]): Promise<void> {
    const keys = names.map((name) => this.#keyOf(name));
    await mapAtOnce(keys, REMOVE_CONCURRENCY, (key, index) =>
      this.#send('DELETE', `removing ${names[index]}`, () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.#bucket, Key: key }))),
    );
  }

  /**
   * One ranged GET. Given the size a listing showed, the range is explicit (`bytes=990-999`), which
   * every S3-compatible store honours; else a suffix range (`bytes=-10`), which some ignore (s3rver
   * reads it as `bytes=0-10`). Either way `Content-Range` tells the whole size, and an answer that is
   * not the object's end (the object was replaced since the listing, or the suffix was ignored) is
   * asked again once by that size. An empty object has no bytes to range over: it is read whole.
   */
  async readTail(name: string, bytes: number, listedSize?: number): Promise<ObjectTail | undefined> {
    const key = this.#keyOf(name);
    checkTailBytes(bytes);
    const action = `reading the end of ${name}`;
    const read = async (size: number | undefined): Promise<{ tail: Uint8Array; range: RegExpExecArray | null } | undefined> => {
      const Range = size === undefined ? `bytes=-${bytes}` : size === 0 ? undefined : `bytes=${Math.max(0, size - bytes)}-${size - 1}`;
      const got = await this.#attempt('GET', action, () => this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.#bucket, Key: key, ...(Range === undefined ? {} : { Range }) })), [404, 416]);
      if (got === 404) return undefined;
      // 416: the range is past the end of an object that shrank (to nothing, say) since it was listed.
      if (typeof got === 'number' || got.Body === undefined) return { tail: new Uint8Array(0), range: null };
      try {
        return { tail: await got.Body.transformToByteArray(), range: /^bytes (\d+)-(\d+)\/(\d+)$/.exec(got.ContentRange ?? '') };
      } catch (error) {
        throw storageErrorOf(error, this.location, this.endpoint, action);
      }
    };
    const first = await read(listedSize);
    if (first === undefined) return undefined;
    // Without a `Content-Range`, the whole object came (a store that ignores ranges, or an empty one).
    if (first.range === null) return { bytes: first.tail.subarray(Math.max(0, first.tail.byteLength - bytes)), size: first.tail.byteLength };
    const [, from, to, total] = first.range.map(Number);
    if (to === total - 1 && from <= Math.max(0, total - bytes)) return { bytes: first.tail.subarray(Math.max(0, first.tail.byteLength - bytes)), size: total };
    const again = await read(total);
    if (again === undefined) return undefined;
    return { bytes: again.tail.subarray(Math.max(0, again.tail.byteLength - bytes)), size: again.range === null ? again.tail.byteLength : Number(again.range[3]) };
  }

  /** Sends one request of `kind` (`urgent`: before the others waiting for a place), counting it; a failure is a typed error. */
  async #send<T>(kind: RequestKind, action: string, request: () => Promise<T>, urgent = false): Promise<T> {
    this.#tally.count(kind);
    try {
      return await this.#requests.run(request, urgent);
    } catch (error) {
      throw storageErrorOf(error, this.location, this.endpoint, action);
    }
  }

  /**
   * `#send`, where a failure with a status in `expected` resolves to that status (a missing object,
   * a condition that did not hold) instead. A missing bucket is never a missing object.
   */
  async #attempt<T>(kind: RequestKind, action: string, request: () => Promise<T>, expected: readonly number[], urgent = false): Promise<T | number> {
    try {
      return await this.#send(kind, action, request, urgent);
    } catch (error) {
      const status = (error as StorageError).status;
      if (status !== undefined && expected.includes(status) && !(error instanceof StorageNotFoundError)) return status;
      throw error;
    }
  }
}
