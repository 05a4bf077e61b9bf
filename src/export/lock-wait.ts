/**
 * Waiting for a lease lock another holds, for the `ExportLocks` held as leases: the queue's in Redis
 * (`src/queue/lease-lock.ts`) and a dataset's on its own store (`src/dataset/store-locks.ts`). Neither
 * store can wake a waiter when a lease is let go or runs out, so the taker asks again every
 * `WAIT_MS`, and gives up naming the lock once it has waited `PATIENCE_MS`.
 */
import { LockedError } from '../errors.ts';

const WAIT_MS = 50;
const PATIENCE_MS = 120_000;

/** What `take` gives once the lock at `path` is free; `holder` says who else may hold it ("worker", "writer"). */
export async function takeWhenFree<T>(take: () => Promise<T | undefined>, path: string, holder: string): Promise<T> {
  const deadline = Date.now() + PATIENCE_MS;
  for (let taken = await take(); ; taken = await take()) {
    if (taken !== undefined) return taken;
    if (Date.now() > deadline) throw new LockedError(`${path}: another ${holder} has been publishing for two minutes`, path, 0);
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  }
}
