/**
 * The locks of a dataset operation's publishes (docs/datasets.md "Crash safety, and writers that publish
 * together"), all of one mechanism (`LockMechanism`, chosen when the dataset opens: `lock-choice.ts`):
 * the caller's (`ExportLocks`: Redis leases in queue mode or with `--locks`), leases on the dataset's
 * store (`store-locks.ts`, offered the same way), else lock folders under `_dataset/<op>/`.
 *
 * - The publish lock (`lock/`) is held while a pass is formed: it claims the commits waiting, sorts
 *   their records by partition and takes the locks below. Only its holder takes them, so no two
 *   takers ever wait on each other, in whatever order they take them.
 * - A pass's lock (`locks/pass-<id>`) is held while the pass lives; a pass folder whose lock is free
 *   is of a pass that died, and is finished or dropped by whoever forms the next pass.
 * - A partition's lock (`locks/partition-<value>`) is held by the pass rewriting its parts, from its
 *   forming to its end: passes that touch other partitions publish at once.
 * - A walk's lock (`locks/walk-<walkName>`) is held by the pass that writes its state, so two passes
 *   with pages of the same walk take turns.
 * - The meta lock (`locks/meta`) is held for the moment a pass records a schema its records changed
 *   (passes at once may each add columns). Its holder waits for nothing else.
 * - The widen lock (`locks/widen`) is held by the writer rewriting parts to a widened type
 *   (`widen.ts`), before it takes the locks above; others only try it, and leave the work to its holder.
 *
 * A pass's own, partition and walk locks are taken together (`holdAll`: one round trip with the
 * caller's `tryHold`), after the publish lock and before the meta lock, never the other way round.
 */
import { LockedError } from '../errors.ts';
import type { ExportLocks, PublishFence } from '../export/types.ts';
import { tryLock, withLock } from './lock-folder.ts';

/**
 * How a dataset's writers lock it: `folders` (lock folders, `lock-folder.ts`), `queue` (the caller's
 * Redis leases, which a lock-folder writer cannot see) or `leases` (leases on the dataset's store).
 * A dataset records the last two in its settings (`schema.locks`), and refuses writers of another.
 */
export type LockMechanism = 'folders' | 'queue' | 'leases';

/** The mechanisms a dataset records in its settings (`schema.locks`); without one, lock folders. */
export const RECORDED_LOCKS = ['queue', 'leases'] as const satisfies readonly LockMechanism[];
/** A mechanism a dataset records: `queue` (Redis leases) or `leases` (on its store). */
export type RecordedLocks = (typeof RECORDED_LOCKS)[number];

/** The locks taken instead of lock folders (Redis leases, or store leases: `mechanism`, `queue` when absent). */
export type PublishLocks = Partial<Pick<ExportLocks, 'publish' | 'tryPublish' | 'tryHold'>> & { readonly mechanism?: RecordedLocks };

/** A lock held until released: its fence says whether it is still this holder's (a lease can run out). */
export interface Held {
  fence: PublishFence;
  release(): Promise<void>;
}

const kept: PublishFence = () => Promise.resolve(true);

export class DatasetLocks {
  constructor(readonly caller: PublishLocks) {}

  /** Which mechanism these locks are. */
  get mechanism(): LockMechanism {
    return this.caller.publish === undefined ? 'folders' : (this.caller.mechanism ?? 'queue');
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

  /** Holds every lock of `locks` if all are free; none, and undefined, when another holds one. */
  async tryHoldAll(locks: readonly string[]): Promise<Held[] | undefined> {
    let held: Held[];
    if (this.caller.tryHold !== undefined) {
      const taken = await this.caller.tryHold(locks);
      held = [{ fence: taken.fence, release: () => taken.release() }];
      if (taken.taken.every(Boolean)) return held;
    } else {
      const tried = await Promise.all(locks.map((lock) => this.tryHold(lock)));
      held = tried.filter((each) => each !== undefined);
      if (held.length === locks.length) return held;
    }
    await releaseAll(held);
    return undefined;
  }

  /**
   * Holds every lock of `locks`: those free at once, then the rest as they come free (only the
   * publish lock's holder takes these, so the wait is for passes that end without waiting in turn).
   * Between tries it waits for `freed`, which resolves when a holder may have let go (a pass's folder
   * gone, say), so that waiting costs no round trips to Redis while nothing changes.
   */
  async holdAll(locks: readonly string[], freed: () => Promise<void> = () => sleep(HOLD_WAIT_MS)): Promise<Held[]> {
    if (this.caller.tryHold !== undefined) return this.#holdTogether(this.caller.tryHold.bind(this.caller), locks, freed);
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

  /**
   * `holdAll` through the caller's `tryHold`: a round trip for all that are free, then again for those
   * that were not once `freed` says a holder may have let go, and twice more shortly after (its
   * release may land just after the sign).
   */
  async #holdTogether(tryHold: NonNullable<PublishLocks['tryHold']>, locks: readonly string[], freed: () => Promise<void>): Promise<Held[]> {
    const held: Held[] = [];
    const deadline = Date.now() + HOLD_PATIENCE_MS;
    try {
      for (let waiting = [...locks], tries = 0; ; tries++) {
        const taken = await tryHold(waiting);
        if (taken.taken.some(Boolean)) held.push({ fence: taken.fence, release: () => taken.release() });
        else await taken.release();
        waiting = waiting.filter((_, index) => !taken.taken[index]);
        if (waiting.length === 0) return held;
        if (Date.now() > deadline) throw new LockedError(`${waiting[0]}: another worker has been publishing into this partition for two minutes`, waiting[0], 0);
        await (tries % 3 === 0 ? freed() : sleep(HOLD_WAIT_MS / 5));
      }
    } catch (error) {
      await releaseAll(held);
      throw error;
    }
  }
}

/** How often `holdAll` tries again for locks held by another, without a sign of their release, and for how long. */
const HOLD_WAIT_MS = 50;
const HOLD_PATIENCE_MS = 120_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
