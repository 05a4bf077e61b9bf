/**
 * The storage interface's promises (src/dataset/storage/types.ts), checked against every store the
 * same way: a local folder, s3rver behind the proxy that honours conditional writes (as AWS S3,
 * MinIO and R2 do), and s3rver itself, which ignores them and so is refused for locks.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConditionalWritesError, StorageNameError } from '../../../src/errors.ts';
import { openStorage, type OpenStorageOptions } from '../../../src/dataset/storage/open.ts';
import type { Lease, Storage } from '../../../src/dataset/storage/types.ts';
import { BUCKET, startS3, type S3Harness } from '../../helpers/s3.ts';
import { bigBody, bytes, MULTIPART_SIZES, names, requestsOf, text, writeMany } from '../../helpers/storage.ts';

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

interface StoreKind {
  name: string;
  /** Whether it is S3 (counted requests differ: opening lists once, large bodies go multipart). */
  s3: boolean;
  /** Whether it can hold locks. */
  locks: boolean;
  /** A fresh, empty store of this kind (`options` for its opening). */
  open(options?: OpenStorageOptions): Promise<Storage>;
  /** The store at `location` opened again: another writer of it. */
  at(location: string, options?: OpenStorageOptions): Promise<Storage>;
}

/** A location per test, so that tests share no objects. */
function kind(name: string, s3Kind: boolean, locks: boolean, env: () => Record<string, string> | undefined): StoreKind {
  const at = (location: string, options: OpenStorageOptions = {}) => openStorage(location, { ...(s3Kind ? { env: env(), ...MULTIPART_SIZES } : {}), ...options });
  return {
    name,
    s3: s3Kind,
    locks,
    at,
    open: async (options) => at(s3Kind ? `s3://${BUCKET}/${randomUUID()}` : await mkdtemp(join(tmpdir(), 'storage-')), options),
  };
}

const KINDS = [
  kind('a local folder', false, true, () => undefined),
  kind('s3rver behind the conditional-write proxy', true, true, () => s3.proxied),
  kind('s3rver itself', true, false, () => s3.direct),
];

const opened: Storage[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((storage) => storage.close()));
});

function kept(storage: Storage): Storage {
  opened.push(storage);
  return storage;
}

describe.each(KINDS)('$name', (store) => {
  it('gives back what was written, lists it, and forgets it once removed', async () => {
    const storage = kept(await store.open());
    await storage.write('walks/a.json', bytes('{"a":1}'));
    await storage.write('walks/b.json', bytes('{"b":2}'));
    expect(text(await storage.read('walks/a.json'))).toBe('{"a":1}');
    expect(await names(storage)).toEqual(['walks/a.json', 'walks/b.json']);
    await storage.remove('walks/a.json');
    expect(await storage.read('walks/a.json')).toBeUndefined();
    expect(await names(storage, 'walks/')).toEqual(['walks/b.json']);
  });

  it('names the folder whose files are its objects on a local folder, and none on a bucket', async () => {
    const storage = kept(await store.open());
    if (store.s3) expect(storage.folder).toBeUndefined();
    else {
      expect(storage.folder).toBe(storage.location);
      await storage.write('walks/a.json', bytes('{"a":1}'));
      expect(await readFile(join(storage.folder!, 'walks', 'a.json'), 'utf8')).toBe('{"a":1}');
    }
  });

  it('reads a name it never stored as undefined, and removes one without error', async () => {
    const storage = kept(await store.open());
    expect(await storage.read('nothing/here.json')).toBeUndefined();
    await expect(storage.remove('nothing/here.json')).resolves.toBeUndefined();
  });

  it('tells whether an object exists, in one HEAD, not a folder by its name nor a prefix of one', async () => {
    const storage = kept(await store.open());
    await storage.write('commits/walk-a.json', bytes('{}'));
    expect(await requestsOf(storage, async () => expect(await storage.exists('commits/walk-a.json')).toBe(true))).toEqual({ HEAD: 1 });
    expect(await storage.exists('commits/walk-a')).toBe(false);
    expect(await storage.exists('commits')).toBe(false);
    await storage.remove('commits/walk-a.json');
    expect(await storage.exists('commits/walk-a.json')).toBe(false);
  });

  it('keeps binary bodies byte for byte, the empty one included', async () => {
    const storage = kept(await store.open());
    const every = Uint8Array.from({ length: 512 }, (_, index) => index % 256);
    await storage.write('bin/every-byte', every);
    await storage.write('bin/empty', new Uint8Array(0));
    expect(await storage.read('bin/every-byte')).toEqual(every);
    expect(await storage.read('bin/empty')).toEqual(new Uint8Array(0));
    const sizes = [];
    for await (const object of storage.list('bin/')) sizes.push([object.name, object.size]);
    expect(sizes).toEqual([
      ['bin/empty', 0],
      ['bin/every-byte', 512],
    ]);
  });

  it('stores Hive partition names and names with spaces, and lists one partition by its prefix', async () => {
    const storage = kept(await store.open());
    await storage.write('orders/month=2024-01/part 1.parquet', bytes('january'));
    await storage.write('orders/month=2024-02/part 1.parquet', bytes('february'));
    await storage.write('orders/month=2024-01/part 2.parquet', bytes('january too'));
    expect(await names(storage, 'orders/month=2024-01/')).toEqual(['orders/month=2024-01/part 1.parquet', 'orders/month=2024-01/part 2.parquet']);
    expect(await names(storage, 'orders/month=2024-0')).toHaveLength(3);
    expect(text(await storage.read('orders/month=2024-02/part 1.parquet'))).toBe('february');
  });

  // S3 promises it of every PUT; s3rver, which rewrites an object's file in place, does not keep it.
  it.runIf(!store.s3)('replaces an object whole: a reader during the replacement sees the old body or the new one', async () => {
    const storage = kept(await store.open());
    const size = 256 * 1024;
    await storage.write('part.parquet', new Uint8Array(size).fill(1));
    const seen = new Set<string>();
    let writing = true;
    const reading = (async () => {
      while (writing) {
        const body = (await storage.read('part.parquet'))!;
        seen.add(`${body.length}:${body[0]}:${body[body.length - 1]}:${body.every((byte) => byte === body[0])}`);
      }
    })();
    for (let round = 2; round < 12; round++) await storage.write('part.parquet', new Uint8Array(size).fill(round));
    writing = false;
    await reading;
    for (const each of seen) expect(each).toMatch(new RegExp(`^${size}:(\\d+):\\1:true$`));
    expect((await storage.read('part.parquet'))![0]).toBe(11);
  });

  // Paging past 1,000 keys and multipart uploads take seconds on s3rver: for S3 they are in
  // test/cli/storage-s3-heavy.test.ts, in the slow project.
  it.runIf(!store.s3)('lists more than a thousand objects, all of them, in byte order of their names', async () => {
    const storage = kept(await store.open());
    const written = await writeMany(storage, 1_003);
    expect(await names(storage, 'many/')).toEqual(written);
  });

  it.runIf(!store.s3)('stores a body past the multipart threshold byte for byte', async () => {
    const storage = kept(await store.open());
    const body = bigBody();
    await storage.write('big/part.parquet', body);
    expect(Buffer.compare((await storage.read('big/part.parquet'))!, body)).toBe(0);
  });

  it('counts one PUT a write, one GET a read, one LIST a listing page and one DELETE a removal', async () => {
    const storage = kept(await store.open());
    expect(await requestsOf(storage, () => storage.write('a', bytes('a')))).toEqual({ PUT: 1 });
    expect(await requestsOf(storage, () => storage.read('a'))).toEqual({ GET: 1 });
    expect(await requestsOf(storage, () => names(storage))).toEqual({ LIST: 1 });
    expect(await requestsOf(storage, () => storage.remove('a'))).toEqual({ DELETE: 1 });
  });

  it('refuses a name outside its own before any request: ../, a leading dot, an empty segment', async () => {
    const storage = kept(await store.open());
    for (const name of ['../escape', 'a/../../b', '.hidden', 'walks/.lease', 'a//b', '/absolute', '']) {
      const counted = await requestsOf(storage, async () => {
        await expect(storage.write(name, bytes('x'))).rejects.toThrow(StorageNameError);
      });
      expect(counted).toEqual({});
    }
  });

  it('tells an object replaced since by its version, the same as its creation gave, in one HEAD', async () => {
    const storage = kept(await store.open());
    const created = await storage.create('_dataset/op/schema.json', bytes('{"a":1}'));
    expect(created).toBeDefined();
    expect(await requestsOf(storage, async () => expect(await storage.version('_dataset/op/schema.json')).toBe(created))).toEqual({ HEAD: 1 });
    await storage.write('_dataset/op/schema.json', bytes('{"a":2}'));
    const replaced = await storage.version('_dataset/op/schema.json');
    expect(replaced).toBeDefined();
    expect(replaced).not.toBe(created);
    await storage.remove('_dataset/op/schema.json');
    expect(await storage.version('_dataset/op/schema.json')).toBeUndefined();
  });

  it.runIf(store.locks)('creates an object for exactly one of eight writers creating it at once, and keeps its body', async () => {
    const storage = kept(await store.open({ locks: true }));
    const writers = [storage, ...(await Promise.all(Array.from({ length: 7 }, () => store.at(storage.location).then(kept))))];
    const created = await Promise.all(writers.map((writer, index) => writer.create('_dataset/op/schema.json', bytes(`writer ${index}`))));
    const winners = created.flatMap((version, index) => (version === undefined ? [] : [index]));
    expect(winners).toHaveLength(1);
    expect(text(await storage.read('_dataset/op/schema.json'))).toBe(`writer ${winners[0]}`);
    expect(await storage.version('_dataset/op/schema.json')).toBe(created[winners[0]]);
  });

  it.runIf(store.locks)('passes the check for conditional writes, and once passed (or opened for locks) makes no request for it again', async () => {
    const storage = kept(await store.open());
    await storage.checkConditionalWrites();
    expect(await requestsOf(storage, () => storage.checkConditionalWrites())).toEqual({});
    const forLocks = kept(await store.at(storage.location, { locks: true }));
    expect(await requestsOf(forLocks, () => forLocks.checkConditionalWrites())).toEqual({});
  });

  it.runIf(!store.locks)('fails the check for conditional writes in one line naming --locks', async () => {
    const storage = kept(await store.open());
    const refused = await storage.checkConditionalWrites().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConditionalWritesError);
    expect((refused as Error).message).toContain('--locks redis://');
    expect((refused as Error).message).not.toContain('\n');
  });

  describe.runIf(store.locks)('locks', () => {
    const LEASE = 30_000;
    /** Moves the clock (Date only; timers and I/O stay real) past a lease taken now. */
    function leaseRunsOut(): void {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
      vi.setSystemTime(Date.now() + LEASE + 1);
    }

    /** Another writer of the same store, with its own connection. */
    async function otherWriter(storage: Storage): Promise<Storage> {
      return kept(await store.at(storage.location, { locks: true }));
    }

    it('gives a lock to exactly one of eight writers taking it at once, in each of five trials', async () => {
      const storage = kept(await store.open({ locks: true }));
      const writers = [storage, ...(await Promise.all(Array.from({ length: 7 }, () => otherWriter(storage))))];
      for (let trial = 0; trial < 5; trial++) {
        const leases = await Promise.all(writers.map((writer) => writer.lock(`locks/trial-${trial}`, { leaseMs: LEASE })));
        expect(leases.filter((lease) => lease !== undefined)).toHaveLength(1);
      }
    });

    it('lets exactly one of eight racing writers take over a lease that ran out, and tells the old holder it lost it', async () => {
      const storage = kept(await store.open({ locks: true }));
      const writers = await Promise.all(Array.from({ length: 8 }, () => otherWriter(storage)));
      const held: Lease[] = [];
      for (let trial = 0; trial < 5; trial++) held.push((await storage.lock(`locks/trial-${trial}`, { leaseMs: LEASE }))!);
      leaseRunsOut();
      for (let trial = 0; trial < 5; trial++) {
        const leases = await Promise.all(writers.map((writer) => writer.lock(`locks/trial-${trial}`, { leaseMs: LEASE })));
        expect(leases.filter((lease) => lease !== undefined)).toHaveLength(1);
        expect(await held[trial].renew()).toBe(false);
      }
    });

    it('keeps a renewed lease from others past the end of its first lease', async () => {
      const storage = kept(await store.open({ locks: true }));
      const other = await otherWriter(storage);
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
      const lease = (await storage.lock('locks/publish', { leaseMs: LEASE }))!;
      vi.setSystemTime(Date.now() + LEASE / 2);
      expect(await lease.renew()).toBe(true);
      vi.setSystemTime(Date.now() + LEASE / 2 + 1);
      expect(await other.lock('locks/publish', { leaseMs: LEASE })).toBeUndefined();
      vi.setSystemTime(Date.now() + LEASE / 2);
      expect(await other.lock('locks/publish', { leaseMs: LEASE })).toBeDefined();
    });

    it('frees a released lock for the next writer at once, and a later release by the old holder leaves the new one be', async () => {
      const storage = kept(await store.open({ locks: true }));
      const other = await otherWriter(storage);
      const first = (await storage.lock('locks/publish', { leaseMs: LEASE }))!;
      expect(await other.lock('locks/publish', { leaseMs: LEASE })).toBeUndefined();
      await first.release();
      const second = await other.lock('locks/publish', { leaseMs: LEASE });
      expect(second).toBeDefined();
      await first.release();
      expect(await storage.lock('locks/publish', { leaseMs: LEASE })).toBeUndefined();
      expect(await second!.renew()).toBe(true);
    });

    it('keeps a lock out of its listing', async () => {
      const storage = kept(await store.open({ locks: true }));
      await storage.write('locks/readme', bytes('data'));
      await storage.lock('locks/publish', { leaseMs: LEASE });
      await storage.lock('publish', { leaseMs: LEASE });
      expect(await names(storage)).toEqual(['locks/readme']);
    });
  });

  it.runIf(!store.locks)('refuses to open for locks, in one line naming --locks, since it ignores conditional writes', async () => {
    const refused = await store.open({ locks: true }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConditionalWritesError);
    expect((refused as ConditionalWritesError).code).toBe('STORAGE_NO_CONDITIONAL_WRITES');
    expect((refused as Error).message).toContain('--locks redis://');
    expect((refused as Error).message).not.toContain('\n');
  });
});
