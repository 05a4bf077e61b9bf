/**
 * A dataset's locks as leases on its own store (`Storage.lock`): the third mechanism of `locks.ts`,
 * for a lone writer of a bucket with no shared disk for lock folders and no Redis. It offers what
 * the caller's Redis locks offer (`ExportLocks`), so the engine's writer lock and the publishes take
 * it the same way. A lock is named by its lock folder's path relative to the dataset's root
 * (`_dataset/<op>/lock`, `_dataset/<op>/locks/partition-2024-01`, `_dataset/<op>/writer-all.lock`).
 *
 * A lease held is renewed every third of it. Its fence says false once a renewal found the lock
 * taken over, and also once a whole lease has passed since the last renewal was sent: a holder that
 * stalled (a long synchronous stretch blocks its timer) may have lost it before it can tell. Either
 * way the lease is lost for good: a holder whose lease ran out does not renew it even when nobody
 * took it meanwhile, since its fence may have said false already and its work stopped. A killed
 * holder renews nothing, so its locks free themselves after a lease.
 */
import { relative, resolve, sep } from 'node:path';
import { LockedError } from '../errors.ts';
import { takeWhenFree } from '../export/lock-wait.ts';
import type { ExportLocks, HeldLocks, PublishFence } from '../export/types.ts';
import { objectPlace } from './objects.ts';
import { defaultHolder } from './storage/lease.ts';
import type { Lease, Storage } from './storage/types.ts';

/** How long a store lease lasts without renewal by default: as the queue's Redis leases, a publish's slowest step between renewals. */
export const STORE_LEASE_MS = 30_000;

/** How store leases are taken (`StoreLocks`). */
export interface StoreLockOptions {
  /** How long a lease lasts unless renewed, in milliseconds (30 s by default). */
  readonly leaseMs?: number;
  /** Who holds them, shown to whoever finds one held: the host and pid by default. */
  readonly holder?: string;
}

/** A dataset's locks as leases on `storage`, its locks named by their paths under the dataset's folder `root`. */
export class StoreLocks implements ExportLocks {
  /** How long each lease lasts unless renewed. */
  readonly leaseMs: number;
  readonly #holder: string;

  constructor(
    readonly storage: Storage,
    readonly root: string,
    options: StoreLockOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? STORE_LEASE_MS;
    this.#holder = options.holder ?? defaultHolder();
  }

  async output(output: string, path: string): Promise<{ release(): Promise<void> }> {
    const held = await this.take(path);
    if (held !== undefined) return held;
    const place = objectPlace(this.storage, this.#nameOf(path));
    throw new LockedError(`another export is writing ${output} (its lock ${place} is a lease on the store, which frees itself ${this.leaseMs / 1000} s after its holder ends)`, output, 0);
  }

  async publish<T>(path: string, fn: (fence: PublishFence) => Promise<T>): Promise<T> {
    return (await takeWhenFree(() => this.take(path), path, 'writer')).during(fn);
  }

  async tryPublish<T>(path: string, fn: (fence: PublishFence) => Promise<T>): Promise<{ value: T } | undefined> {
    const held = await this.take(path);
    return held === undefined ? undefined : { value: await held.during(fn) };
  }

  /**
   * Takes every free lock of `paths` at once (a publish pass's own, partitions' and walks' locks): a
   * lease is an object of its own, so each still costs its GET and PUT, but they go out together,
   * one round trip for them all rather than one a lock. Each held lease is renewed until released.
   */
  async tryHold(paths: readonly string[]): Promise<HeldLocks> {
    const tried = await Promise.allSettled(paths.map((path) => this.take(path)));
    const held = tried.flatMap((each) => (each.status === 'fulfilled' && each.value !== undefined ? [each.value] : []));
    const release = async () => {
      await Promise.all(held.map((lease) => lease.release()));
    };
    const failed = tried.find((each) => each.status === 'rejected');
    if (failed !== undefined) {
      await release();
      throw failed.reason;
    }
    return {
      taken: tried.map((each) => each.status === 'fulfilled' && each.value !== undefined),
      fence: async () => (await Promise.all(held.map((lease) => lease.fence()))).every(Boolean),
      release,
    };
  }

  /** Takes the lock at `path` if nobody holds it (or its lease ran out), renewing its lease until released. */
  async take(path: string): Promise<HeldLease | undefined> {
    const sent = Date.now();
    const lease = await this.storage.lock(this.#nameOf(path), { leaseMs: this.leaseMs, holder: this.#holder });
    return lease === undefined ? undefined : new HeldLease(lease, this.leaseMs, sent);
  }

  /** The lock's name in the store: its path under the dataset's folder, `/`-joined. */
  #nameOf(path: string): string {
    const name = relative(resolve(this.root), resolve(path));
    if (name === '' || name.startsWith('..')) throw new Error(`${path} is no lock of the dataset at ${this.root}`);
    return name.split(sep).join('/');
  }
}

/** A store lease held: renewed every third of it until released; its fence says whether it is still this holder's. */
export class HeldLease {
  #lost = false;
  /** When the last renewal that held was sent: the lease runs out a whole lease after it. */
  #renewedAt: number;
  #renewing: Promise<void> | undefined;
  readonly #renewal: NodeJS.Timeout;

  constructor(
    private readonly lease: Lease,
    private readonly leaseMs: number,
    takenAt: number,
  ) {
    this.#renewedAt = takenAt;
    this.#renewal = setInterval(() => {
      this.#renewing ??= this.#renew().finally(() => {
        this.#renewing = undefined;
      });
    }, Math.max(10, Math.floor(leaseMs / 3)));
    this.#renewal.unref();
  }

  /** Whether the lock is still this holder's: no renewal found it taken over, and its lease has not run out since the last. */
  readonly fence: PublishFence = () => Promise.resolve(this.#held());

  /** Runs `fn` with the fence, then lets the lock go however it ended. */
  async during<T>(fn: (fence: PublishFence) => Promise<T>): Promise<T> {
    try {
      return await fn(this.fence);
    } finally {
      await this.release();
    }
  }

  /** Stops renewing and lets the lock go, unless another took it over meanwhile. */
  async release(): Promise<void> {
    clearInterval(this.#renewal);
    await this.#renewing;
    // A store away: the lease runs out by itself.
    if (!this.#lost) await this.lease.release().catch(() => undefined);
  }

  /** Whether the lease is still held, as far as this holder can tell without a request; once not, never again. */
  #held(): boolean {
    if (!this.#lost && Date.now() >= this.#renewedAt + this.leaseMs) this.#lose();
    return !this.#lost;
  }

  #lose(): void {
    this.#lost = true;
    clearInterval(this.#renewal);
  }

  async #renew(): Promise<void> {
    if (!this.#held()) return;
    const sent = Date.now();
    try {
      if (await this.lease.renew()) this.#renewedAt = sent;
      else this.#lose();
    } catch {
      // A store away: the next renewal tries again; the lease says how long that may last.
    }
  }
}
