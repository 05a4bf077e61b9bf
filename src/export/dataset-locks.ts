/**
 * The locks of a dataset operation's publishes (README § 8 "Group commit"), all of one mechanism:
 * the caller's (`ExportLocks`: Redis leases in queue mode), else lock folders under `_dataset/<op>/`.
 *
 * - The publish lock (`lock/`) is held while a pass is formed: it claims the commits waiting, sorts
 *   their records by partition and takes the locks of those partitions. Only its holder takes
 *   partition locks, so no two takers ever wait on each other, in whatever order they take them.
 * - A pass's lock (`locks/pass-<id>`) is held while the pass lives; a pass folder whose lock is free
 *   is of a pass that died, and is finished or dropped by whoever forms the next pass.
 * - A partition's lock (`locks/partition-<value>`) is held by the pass rewriting its parts, from its
 *   forming to its end: passes that touch other partitions publish at once.
 * - The meta lock (`locks/meta`) is held for the moment a pass records the schema and the walk
 *   states, which passes at once share. Its holder waits for nothing else.
 *
 * Locks are taken in that order and never the other way round.
 */
import type { ExportLocks, PublishFence } from './types.ts';
import { tryLock, withLock } from './dataset-store.ts';

/** The caller's locks, when not lock folders: a queue's Redis leases. */
export type PublishLocks = Partial<Pick<ExportLocks, 'publish' | 'tryPublish'>>;

/** A lock held until released: its fence says whether it is still this holder's (a lease can run out). */
export interface Held {
  fence: PublishFence;
  release(): Promise<void>;
}

const kept: PublishFence = () => Promise.resolve(true);

export class DatasetLocks {
  constructor(readonly caller: PublishLocks) {}

  /** Whether these are Redis leases (a queue's workers), which a lock-folder writer cannot see. */
  get queue(): boolean {
    return this.caller.publish !== undefined;
  }

  /** Runs `fn` holding `lock`, waiting for it. */
  run<T>(lock: string, fn: (fence?: PublishFence) => Promise<T>): Promise<T> {
    return this.caller.publish === undefined ? withLock(lock, () => fn()) : this.caller.publish(lock, fn);
  }

  /** Runs `fn` holding `lock` if it is free; undefined when held. Without a way to try, waits for it. */
  async tryRun<T>(lock: string, fn: (fence?: PublishFence) => Promise<T>): Promise<{ value: T } | undefined> {
    if (this.caller.publish === undefined) return tryLock(lock, () => fn());
    if (this.caller.tryPublish === undefined) return { value: await this.caller.publish(lock, fn) };
    return this.caller.tryPublish(lock, fn);
  }

  /** Holds `lock` until released, waiting for it. */
  async hold(lock: string): Promise<Held> {
    return (await holding((fn) => this.run(lock, fn)))!;
  }

  /** Holds `lock` if it is free; undefined when held. */
  tryHold(lock: string): Promise<Held | undefined> {
    return holding((fn) => this.tryRun(lock, fn));
  }

  /** Holds every lock of `locks`: those free at once, then waits for the rest (only the publish lock's holder takes these). */
  async holdAll(locks: readonly string[]): Promise<Held[]> {
    const held: Held[] = [];
    try {
      const tried = await Promise.all(locks.map((lock) => this.tryHold(lock)));
      for (const each of tried) if (each !== undefined) held.push(each);
      for (const [index, lock] of locks.entries()) if (tried[index] === undefined) held.push(await this.hold(lock));
      return held;
    } catch (error) {
      await releaseAll(held);
      throw error;
    }
  }
}

/** Whether every lock of `held` is still its holder's. */
export async function allHeld(held: readonly Held[]): Promise<boolean> {
  return (await Promise.all(held.map((each) => each.fence()))).every(Boolean);
}

export async function releaseAll(held: readonly Held[]): Promise<void> {
  await Promise.all(held.map((each) => each.release()));
}

/**
 * A scoped lock (`run`: held while its function runs) as one held until released: the function
 * resolves the hold and then waits for the release. Resolves undefined when `scoped` did not take it.
 */
function holding(scoped: (fn: (fence?: PublishFence) => Promise<void>) => Promise<unknown>): Promise<Held | undefined> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let took!: (held: Held) => void;
  const taken = new Promise<Held>((resolve) => {
    took = resolve;
  });
  const ended: Promise<unknown> = scoped(async (fence) => {
    took({
      fence: fence ?? kept,
      release: async () => {
        release();
        await ended;
      },
    });
    await released;
  });
  return Promise.race([taken, ended.then(() => undefined)]);
}
