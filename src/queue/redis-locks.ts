/**
 * A dataset's locks as Redis leases for writers that are not queue workers: shards run at once on
 * several machines, or a scheduled run that may overlap the last one (`--locks redis://…`). Pid
 * files mean nothing across machines, and a lock folder on a disk that is not shared guards nothing;
 * a lease in one Redis does, and one whose holder died runs out by itself. The leases are the queue
 * workers' own (`lease-lock.ts`), so such runs and a queue's workers may write one dataset together.
 *
 * ```ts
 * const session = await openRedisLocks('redis://10.0.0.5:6379/0');
 * try {
 *   await toDataset(stream, '/data/posts', { locks: session.locks, signal: session.lost });
 * } finally {
 *   await session.close();
 * }
 * ```
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { LockLostError } from '../errors.ts';
import type { ExportLocks } from '../export/types.ts';
import { option, optionError } from '../export/option-message.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';
import { connectQueue } from './connection.ts';
import { RedisLocks } from './lease-lock.ts';

/** Options of `openRedisLocks`. */
export interface RedisLockOptions {
  /**
   * How long a lease lasts without renewal, in ms (renewed every third of it while held): a killed
   * writer's locks free themselves after it. Default 30,000.
   */
  leaseMs?: number;
  /** Aborting ends the wait for Redis at once. */
  signal?: AbortSignal;
}

const REDIS_LOCK_OPTIONS = { leaseMs: true, signal: true } as const satisfies KnownOptions<RedisLockOptions>;

/** Default `leaseMs`: long enough for a publish's slowest step between renewals on a loaded machine. */
const DEFAULT_LEASE_MS = 30_000;

/** Locks held as Redis leases (`openRedisLocks`): pass `locks` to an export, `lost` as (or with) its signal. */
export interface RedisLockSession {
  /** The export's locks (`ExportOptions.locks`). */
  readonly locks: ExportLocks;
  /**
   * Aborted, with a `LockLostError`, when a lease this writer held was taken over by another (it
   * stalled past its lease): the export must stop before it stages or publishes again.
   */
  readonly lost: AbortSignal;
  /** Lets the connection go (the leases still held are released by the export that holds them). */
  close(): Promise<void>;
}

/**
 * Connects to the Redis at `url` (`redis://HOST:PORT/DB`, as `--queue` takes it) and returns locks
 * held there as leases. An address that cannot work is a typed `QueueError` here, before any request.
 */
export async function openRedisLocks(url: string, options: RedisLockOptions = {}): Promise<RedisLockSession> {
  refuseUnknownOptions(options, REDIS_LOCK_OPTIONS, 'openRedisLocks');
  const { leaseMs = DEFAULT_LEASE_MS, signal } = options;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw optionError`${option('leaseMs')} must be a whole number of at least 1, got ${String(leaseMs)}`;
  const redis: Redis = await connectQueue(url, { persistent: false, ...(signal === undefined ? {} : { signal }) });
  const lost = new AbortController();
  const holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const locks = new RedisLocks(redis, holder, leaseMs, (path) => {
    lost.abort(new LockLostError(`another writer took over the lock ${path} after this one stalled past its lease of ${leaseMs} ms`, path));
  });
  return {
    locks,
    lost: lost.signal,
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
