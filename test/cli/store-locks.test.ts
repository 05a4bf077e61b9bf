/**
 * A dataset's locks as leases on its store (`src/dataset/store-locks.ts`) and the choice among the
 * three mechanisms (`src/dataset/lock-choice.ts`), against s3rver itself (which ignores conditional
 * writes), s3rver behind the proxy that honours them (as AWS S3, MinIO and R2 do) and a local folder.
 * Leases here last 400 ms, so that one running out takes a moment.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { compactDataset } from '../../src/dataset/compact.ts';
import { DatasetDestination } from '../../src/dataset/destination.ts';
import { chooseDatasetLocks, publishLocksOf, type DatasetLockChoice } from '../../src/dataset/lock-choice.ts';
import { DatasetLocks } from '../../src/dataset/locks.ts';
import { openStorage } from '../../src/dataset/storage/open.ts';
import { LocalStorage } from '../../src/dataset/storage/local.ts';
import type { Storage } from '../../src/dataset/storage/types.ts';
import { localPaths } from '../../src/dataset/store.ts';
import { StoreLocks } from '../../src/dataset/store-locks.ts';
import { ConditionalWritesError, DatasetError, LockedError } from '../../src/errors.ts';
import { exportInto } from '../../src/export/engine.ts';
import { checkOptions } from '../../src/export/options.ts';
import { walksOf } from '../../src/export/sources.ts';
import type { ExportLocks } from '../../src/export/types.ts';
import { toDataset } from '../../src/export-to.ts';
import { BUCKET, startS3, type S3Harness } from '../helpers/s3.ts';
import { requestsOf } from '../helpers/storage.ts';
import { closeSandboxClient, startSandboxClient, type SandboxClient } from '../export/helpers/sandbox-client.ts';

const LEASE_MS = 400;
/** The dataset's folder its locks are named under (a bucket's dataset has no folder: any root names them). */
const ROOT = '/datasets/forum';
const PUBLISH_LOCK = localPaths(ROOT, 'forum/subforum', 'all').lock;

let s3: S3Harness;
let context: SandboxClient;
beforeAll(async () => {
  [s3, context] = await Promise.all([startS3(), startSandboxClient()]);
});
afterAll(async () => {
  await Promise.all([s3?.close(), closeSandboxClient(context ?? {})]);
});

const opened: Storage[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((storage) => storage.close()));
});

/** The store at `location` (a fresh prefix of the bucket when none), through the proxy unless `direct`. */
async function bucket(location = `s3://${BUCKET}/${randomUUID()}`, direct = false): Promise<Storage> {
  const storage = await openStorage(location, { env: direct ? s3.direct : s3.proxied });
  opened.push(storage);
  return storage;
}

/** The publish locks one writer of `storage` takes without Redis. */
async function leasesOf(storage: Storage): Promise<DatasetLocks> {
  return new DatasetLocks(publishLocksOf(await chooseDatasetLocks(storage, ROOT, undefined, { leaseMs: LEASE_MS })));
}

/** Blocks this process for `ms`, its timers too: a writer that stalls (or was stopped) renews nothing meanwhile. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Redis locks as a caller gives them (`ExportLocks`); the choice only passes them on. */
const callerLocks: ExportLocks = {
  output: () => Promise.resolve({ release: () => Promise.resolve() }),
  publish: (_path, fn) => fn(),
};

describe('choosing the locks when a dataset opens', () => {
  it('refuses a bucket that ignores conditional writes without Redis locks, in one line naming --locks', async () => {
    const storage = await bucket(undefined, true);
    const refused = await chooseDatasetLocks(storage, ROOT, undefined).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConditionalWritesError);
    expect((refused as ConditionalWritesError).code).toBe('STORAGE_NO_CONDITIONAL_WRITES');
    expect((refused as Error).message).toContain('--locks redis://');
    expect((refused as Error).message).not.toContain('\n');
  });

  it("takes the caller's Redis locks on a bucket that ignores conditional writes, without probing it, naming each lock by the bucket's location", async () => {
    const storage = await bucket(undefined, true);
    const taken: string[] = [];
    const locks: ExportLocks = { ...callerLocks, publish: (path, fn) => (taken.push(path), fn()) };
    let choice: DatasetLockChoice | undefined;
    expect(await requestsOf(storage, async () => (choice = await chooseDatasetLocks(storage, ROOT, locks)))).toEqual({});
    expect(choice?.mechanism).toBe('queue');
    // Not by the working folder that stands for the dataset, which differs from one machine to the next.
    await (choice as Extract<DatasetLockChoice, { locks: ExportLocks }>).locks.publish(PUBLISH_LOCK, () => Promise.resolve());
    expect(taken).toEqual([`${storage.location}/_dataset/forum__subforum/lock`]);
  });

  it('keeps lock folders on a local folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'store-locks-'));
    expect(await chooseDatasetLocks(new LocalStorage(dir), dir, undefined)).toEqual({ mechanism: 'folders' });
  });

  it('takes leases on a bucket that honours conditional writes', async () => {
    const locks = await leasesOf(await bucket());
    expect(locks.mechanism).toBe('leases');
  });
});

describe('leases on a bucket that honours conditional writes', () => {
  it('give the publish lock to exactly one of two writers taking it at once, and to the other once released', async () => {
    const first = await bucket();
    const [one, two] = await Promise.all([leasesOf(first), bucket(first.location).then(leasesOf)]);
    const held = await Promise.all([one.tryHold(PUBLISH_LOCK), two.tryHold(PUBLISH_LOCK)]);
    expect(held.filter((each) => each !== undefined)).toHaveLength(1);
    const holder = held.findIndex((each) => each !== undefined);
    await held[holder]!.release();
    expect(await [one, two][1 - holder].tryHold(PUBLISH_LOCK)).toBeDefined();
  });

  it('keep a held lock from another writer for three leases, renewed while held', async () => {
    const first = await bucket();
    const [one, two] = await Promise.all([leasesOf(first), bucket(first.location).then(leasesOf)]);
    const held = (await one.tryHold(PUBLISH_LOCK))!;
    for (let waited = 0; waited < 3 * LEASE_MS; waited += LEASE_MS / 2) {
      await sleep(LEASE_MS / 2);
      expect(await two.tryHold(PUBLISH_LOCK)).toBeUndefined();
    }
    expect(await held.fence()).toBe(true);
  });

  it('free the lock of a writer killed holding it once its lease ran out', async () => {
    const first = await bucket();
    // A lease taken and never renewed: its holder was killed.
    expect(await first.lock('_dataset/forum__subforum/lock', { leaseMs: LEASE_MS })).toBeDefined();
    const other = await bucket(first.location).then(leasesOf);
    expect(await other.tryHold(PUBLISH_LOCK)).toBeUndefined();
    await sleep(LEASE_MS + 50);
    expect(await other.tryHold(PUBLISH_LOCK)).toBeDefined();
  });

  it('let another writer take the lock of one that stalled past its lease, whose fence then says false', async () => {
    const first = await bucket();
    const [one, two] = await Promise.all([leasesOf(first), bucket(first.location).then(leasesOf)]);
    const stalled = (await one.tryHold(PUBLISH_LOCK))!;
    stall(LEASE_MS + 50);
    const taker = await two.tryHold(PUBLISH_LOCK);
    expect(taker).toBeDefined();
    expect(await stalled.fence()).toBe(false);
    // Its next renewal finds the lease another's: it stays lost, and the taker keeps it.
    await sleep(LEASE_MS);
    expect(await stalled.fence()).toBe(false);
    expect(await taker!.fence()).toBe(true);
  });

  it("refuse a second writer of one output its writer lock, naming the output, until the first lets it go", async () => {
    const first = await bucket();
    const second = await bucket(first.location);
    const lockFile = join(localPaths(ROOT, 'forum/subforum', 'all').meta, 'writer-all.lock');
    const one = new StoreLocks(first, ROOT, { leaseMs: LEASE_MS });
    const held = await one.output(first.location, lockFile);
    const refused = await new StoreLocks(second, ROOT, { leaseMs: LEASE_MS }).output(second.location, lockFile).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LockedError);
    expect((refused as Error).message).toContain(`another export is writing ${first.location}`);
    await held.release();
    await expect(new StoreLocks(second, ROOT, { leaseMs: LEASE_MS }).output(second.location, lockFile)).resolves.toBeDefined();
  });
});

describe('a dataset written under store leases', () => {
  it('records them in its settings, and refuses a writer with lock files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'store-locks-'));
    const storage = new LocalStorage(dir);
    const leases = new StoreLocks(storage, dir, { leaseMs: 5_000 });
    const walks = walksOf(context.client.forum.subforum({ subforum: 'leased', sort: 'new', trim: true }));
    const destination = new DatasetDestination(dir, walks.op, { storage, locks: { mechanism: 'leases', locks: leases }, walks: walks.params });
    const summary = await exportInto(walks, destination, checkOptions({ dataset: dir, locks: leases }));
    expect(summary.records).toBeGreaterThan(0);
    const schema = JSON.parse(await readFile(join(dir, '_dataset', 'forum__subforum', 'schema.json'), 'utf8')) as { locks?: string };
    expect(schema.locks).toBe('leases');
    const refusal = await toDataset(context.client.forum.subforum({ subforum: 'leased', sort: 'new', trim: true }), dir).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DatasetError);
    expect((refusal as Error).message).toMatch(/is locked with leases on its store .*which this run's lock files cannot see/);
    // `dataset compact` of a local folder takes lock folders, which its writers' leases do not see: refused, nothing rewritten.
    const compaction = await compactDataset(dir, { operation: 'forum/subforum' }).catch((error: unknown) => error);
    expect(compaction).toBeInstanceOf(DatasetError);
    expect((compaction as Error).message).toMatch(/locked with leases on its store, which `dataset compact` takes only on that store \(s3:\/\/…\) without --locks; here it would take lock files/);
  });
});

describe("binding a new dataset's settings", () => {
  it("holds the meta lock for a writer locked by the caller's Redis locks, whose store is never probed for conditional writes", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'store-locks-'));
    const taken: string[] = [];
    const locks: ExportLocks = { ...callerLocks, publish: (path, fn) => (taken.push(path), fn()) };
    await toDataset(context.client.forum.subforum({ subforum: 'bound', sort: 'new', trim: true }), dir, { locks });
    expect(taken[0]).toBe(localPaths(dir, 'forum/subforum', 'all').metaLock);
  });
});
