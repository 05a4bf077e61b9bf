/**
 * `StoreLocks.tryHold`: a publish pass takes its own, its partitions' and its walks' store leases
 * together (`DatasetLocks.tryHoldAll`, `holdAll`), as it does Redis leases, rather than one at a time.
 * On a local folder, whose leases are the same mechanism as a bucket's (docs/storage.md).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreLocks } from '../../src/dataset/store-locks.ts';
import { LocalStorage } from '../../src/dataset/storage/local.ts';

describe('store leases taken together', () => {
  it('take every free lock asked for, leave the one another holds, and let them all go at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'store-locks-hold-'));
    const lock = (name: string) => join(dir, '_dataset', 'forum__subforum', 'locks', name);
    const ours = new StoreLocks(new LocalStorage(dir), dir, { leaseMs: 10_000, holder: 'ours' });
    const theirs = new StoreLocks(new LocalStorage(dir), dir, { leaseMs: 10_000, holder: 'theirs' });
    const held = await theirs.take(lock('partition-2024-02'));
    const taken = await ours.tryHold([lock('pass-p'), lock('partition-2024-02'), lock('partition-2024-01')]);
    expect(taken.taken).toEqual([true, false, true]);
    expect(await taken.fence()).toBe(true);
    await taken.release();
    // Let go: another takes them now, and the one still held stays its holder's.
    const after = await theirs.tryHold([lock('pass-p'), lock('partition-2024-01'), lock('partition-2024-02')]);
    expect(after.taken).toEqual([true, true, false]);
    await after.release();
    await held!.release();
  });
});
