/**
 * What a dataset's part files need of its store (src/dataset/storage/types.ts): a local file
 * uploaded whole (`upload`), an object given another name without a rename (`move`), an object
 * read back as a local file (`download`) or only its end (`readTail`, for footer checks), many removed at once (`removeAll`), and when each was
 * written (`StoredObject.modifiedMs`). Checked the same way on a local folder and on s3rver (these
 * calls need no conditional write, so s3rver is asked directly); an upload and a move of a body past
 * the multipart threshold take seconds, and are in test/cli/storage-s3-heavy.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../../src/dataset/storage/open.ts';
import type { Storage, StoredObject } from '../../../src/dataset/storage/types.ts';
import { BUCKET, startS3, type S3Harness } from '../../helpers/s3.ts';
import { bytes, MULTIPART_SIZES, names, requestsOf, text } from '../../helpers/storage.ts';

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

const KINDS = [
  { name: 'a local folder', s3: false, open: async () => openStorage(await mkdtemp(join(tmpdir(), 'transfers-'))) },
  { name: 's3rver', s3: true, open: () => openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct, ...MULTIPART_SIZES }) },
];

const opened: Storage[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((storage) => storage.close()));
});

/** A local file in the store's scratch folder holding `body`, as a pass encodes a part there. */
async function scratchFile(storage: Storage, body: Uint8Array): Promise<string> {
  await mkdir(storage.scratch, { recursive: true });
  const file = join(storage.scratch, `test-${randomUUID()}`);
  await writeFile(file, body);
  return file;
}

describe.each(KINDS)('$name', (store) => {
  const open = async () => {
    const storage = await store.open();
    opened.push(storage);
    return storage;
  };

  it('uploads a local file whole under a name, in one PUT, and takes the file', async () => {
    const storage = await open();
    const file = await scratchFile(storage, bytes('part one'));
    expect(await requestsOf(storage, () => storage.upload('publishing/p/2024-01-b0-of-1.staged', file))).toEqual({ PUT: 1 });
    expect(text(await storage.read('publishing/p/2024-01-b0-of-1.staged'))).toBe('part one');
    expect(existsSync(file)).toBe(false);
  });

  it('moves an object over another, leaving nothing under its old name, and tells a second move it is gone', async () => {
    const storage = await open();
    // A Hive partition's `=` and a space in the staged name: S3 takes the copy's source URL-encoded.
    const staged = 'publishing/p/_date=2024-01 b0+1.staged';
    await storage.write(staged, bytes('new'));
    await storage.write('orders/_date=2024-01/part-b0-of-1.parquet', bytes('old'));
    expect(await storage.move(staged, 'orders/_date=2024-01/part-b0-of-1.parquet')).toBe(true);
    expect(text(await storage.read('orders/_date=2024-01/part-b0-of-1.parquet'))).toBe('new');
    expect(await names(storage)).toEqual(['orders/_date=2024-01/part-b0-of-1.parquet']);
    // A journal replayed after a kill: the staged object was moved before.
    expect(await storage.move(staged, 'orders/_date=2024-01/part-b0-of-1.parquet')).toBe(false);
    expect(text(await storage.read('orders/_date=2024-01/part-b0-of-1.parquet'))).toBe('new');
  });

  it('downloads an object into a local file in one GET, and a missing one as undefined', async () => {
    const storage = await open();
    await storage.write('orders/part.ndjson', bytes('{"a":1}\n'));
    const copy = await storage.download('orders/part.ndjson');
    expect(new TextDecoder().decode(await readFile(copy!.path))).toBe('{"a":1}\n');
    await copy!.discard();
    // A local store gives the object's own file, which discarding leaves be; S3's download goes.
    expect(existsSync(copy!.path)).toBe(!store.s3);
    expect(await requestsOf(storage, async () => expect(await storage.download('orders/none.ndjson')).toBeUndefined())).toEqual({ GET: 1 });
  });

  it('removes many objects at once, a missing one among them, and lists the rest', async () => {
    const storage = await open();
    for (const name of ['p/claim.json', 'p/keys/2024-01/pass.keys', 'p/keys/2024-02/pass.keys', 'q/claim.json']) await storage.write(name, bytes(name));
    await storage.removeAll(['p/claim.json', 'p/keys/2024-01/pass.keys', 'p/keys/2024-02/pass.keys', 'p/never.json']);
    expect(await names(storage)).toEqual(['q/claim.json']);
  });

  it('reads the last bytes of an object and its whole size in one GET, given the size its listing showed', async () => {
    const storage = await open();
    await storage.write('orders/part.parquet', bytes('0123456789'));
    let tail;
    expect(await requestsOf(storage, async () => (tail = await storage.readTail('orders/part.parquet', 4, 10)))).toEqual({ GET: 1 });
    expect({ bytes: text(tail!.bytes), size: tail!.size }).toEqual({ bytes: '6789', size: 10 });
  });

  it('reads the last bytes of an object without its size, and of one replaced by a longer since its listing', async () => {
    const storage = await open();
    await storage.write('orders/part.parquet', bytes('0123456789'));
    const unsized = await storage.readTail('orders/part.parquet', 4);
    expect({ bytes: text(unsized!.bytes), size: unsized!.size }).toEqual({ bytes: '6789', size: 10 });
    const stale = await storage.readTail('orders/part.parquet', 4, 6);
    expect({ bytes: text(stale!.bytes), size: stale!.size }).toEqual({ bytes: '6789', size: 10 });
  });

  it('reads the whole of an object shorter than the tail asked for, an empty one as no bytes, and a missing one as undefined', async () => {
    const storage = await open();
    await storage.write('orders/short.ndjson', bytes('{}\n'));
    await storage.write('orders/empty.ndjson', bytes(''));
    const short = await storage.readTail('orders/short.ndjson', 1024, 3);
    expect({ bytes: text(short!.bytes), size: short!.size }).toEqual({ bytes: '{}\n', size: 3 });
    const empty = await storage.readTail('orders/empty.ndjson', 1024, 0);
    expect({ bytes: empty!.bytes.byteLength, size: empty!.size }).toEqual({ bytes: 0, size: 0 });
    expect(await storage.readTail('orders/none.ndjson', 1024, 10)).toBeUndefined();
  });

  it('lists when each object was last written', async () => {
    const storage = await open();
    const before = Date.now();
    await storage.write('orders/part.ndjson', bytes('x'));
    const listed: StoredObject[] = [];
    for await (const object of storage.list('orders/')) listed.push(object);
    // S3 keeps whole seconds.
    expect(listed[0].modifiedMs).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(listed[0].modifiedMs).toBeLessThanOrEqual(Date.now() + 1000);
  });
});

describe('a local folder', () => {
  it('drops the folders that removing their last objects left empty, up to the one that held them all', async () => {
    const root = await mkdtemp(join(tmpdir(), 'transfers-'));
    const storage = await openStorage(root);
    opened.push(storage);
    for (const name of ['meta/publishing/p/claim.json', 'meta/publishing/p/keys/2024-01/pass.keys', 'meta/publishing/q/claim.json']) await storage.write(name, bytes(name));
    await storage.removeAll(['meta/publishing/p/claim.json', 'meta/publishing/p/keys/2024-01/pass.keys']);
    expect(existsSync(join(root, 'meta/publishing/p'))).toBe(false);
    expect(existsSync(join(root, 'meta/publishing/q/claim.json'))).toBe(true);
    // The last object of `q` goes: its folder with it, never the folder above it.
    await storage.removeAll(['meta/publishing/q/claim.json']);
    expect(existsSync(join(root, 'meta/publishing/q'))).toBe(false);
    expect(existsSync(join(root, 'meta/publishing'))).toBe(true);
  });

  it('keeps its scratch folder out of its listing', async () => {
    const storage = await openStorage(await mkdtemp(join(tmpdir(), 'transfers-')));
    opened.push(storage);
    await scratchFile(storage, bytes('scratch'));
    await storage.write('a.json', bytes('{}'));
    expect(await names(storage)).toEqual(['a.json']);
  });
});

describe('s3rver', () => {
  it('gives each store a scratch folder of its own, removed when it closes, so that two processes on one machine never remove what the other writes', async () => {
    const [one, two] = await Promise.all([1, 2].map(() => openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct })));
    expect(one.scratch).not.toBe(two.scratch);
    const file = await scratchFile(one, bytes('a part on its way'));
    await two.close();
    expect(existsSync(file)).toBe(true);
    await one.close();
    expect(existsSync(one.scratch)).toBe(false);
  });
});
