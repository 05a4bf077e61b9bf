/**
 * An export's locks as Redis leases (`ExportOptions.locks`), for queue workers on many machines,
 * where the engine's pid files mean nothing. A lock is a key, set only when absent, holding its
 * holder's name and a fencing token (a counter that only grows), with a lease renewed every third
 * of it while held. A holder that dies stops renewing: the lease runs out and the next taker gets a
 * higher token. A holder whose renewal finds the key no longer its own (it stalled past its lease and
 * another took over) has lost it and is told (`onLost`): the worker then ends that walk before it
 * stages another page, so the later token is the one that goes on.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { LockedError } from '../errors.ts';
import { takeWhenFree } from '../export/lock-wait.ts';
import type { ExportLocks, HeldLocks, PublishFence } from '../export/types.ts';
import { PREFIX } from './connection.ts';

/** KEYS[1] the lock, KEYS[2] its fencing counter; ARGV[1] the holder, ARGV[2] the lease (ms). Returns the token, or 0 when held. */
const TAKE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. token, 'PX', ARGV[2])
return token`;
/** Renews (ARGV[2] ms) or releases (ARGV[2] = 0) a lock only while it holds this holder's value (ARGV[1]). */
const KEEP = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(ARGV[2]) == 0 then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`;

/** TAKE for many locks at once: KEYS the N locks, then their N fencing counters. Returns per lock its token, or 0 when held. */
const TAKE_ALL = `
local n = #KEYS / 2
local tokens = {}
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    tokens[i] = 0
  else
    local token = redis.call('INCR', KEYS[n + i])
    redis.call('SET', KEYS[i], ARGV[1] .. '#' .. token, 'PX', ARGV[2])
    tokens[i] = token
  end
end
return tokens`;
/** KEEP for many locks: renews (ARGV[1] ms) or releases (ARGV[1] = 0) each that holds its value (ARGV[1 + i]). Returns how many did. */
const KEEP_ALL = `
local kept = 0
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    kept = kept + 1
    if tonumber(ARGV[1]) == 0 then redis.call('DEL', key) else redis.call('PEXPIRE', key, ARGV[1]) end
  end
end
return kept`;

/** A lock taken: its fencing token, whether it is still held, and how to give it back. */
export interface Lease {
  token: number;
  /** Whether the key still holds this lease's value (not when it ran out and another took it). */
  held(): Promise<boolean>;
  release(): Promise<void>;
}

export class RedisLocks implements ExportLocks {
  constructor(
    private readonly redis: Redis,
    /** The holder's name, shown to whoever finds the lock held: the worker's id. */
    private readonly holder: string,
    private readonly leaseMs: number,
    /** Told when a lease renewal finds the lock taken over (`path` as the engine named it). */
    private readonly onLost: (path: string) => void,
  ) {}

  async output(output: string, path: string): Promise<{ release(): Promise<void> }> {
    const lease = await this.take(path);
    if (lease !== undefined) return lease;
    const value = (await this.redis.get(lockKey(path))) ?? 'another worker';
    throw new LockedError(`another worker (${value.replace(/#\d+$/, '')}) is writing ${output}; its walk goes on where it left off once its lease ends`, output, 0);
  }

  async publish<T>(path: string, fn: (fence: PublishFence) => Promise<T>): Promise<T> {
    const lease = await takeWhenFree(() => this.take(path), path, 'worker');
    try {
      return await fn(() => lease.held());
    } finally {
      await lease.release();
    }
  }

  async tryPublish<T>(path: string, fn: (fence: PublishFence) => Promise<T>): Promise<{ value: T } | undefined> {
    const lease = await this.take(path);
    if (lease === undefined) return undefined;
    try {
      return { value: await fn(() => lease.held()) };
    } finally {
      await lease.release();
    }
  }

  /**
   * Takes every free lock of `paths` in one round trip, and keeps their leases with one renewal for
   * them all: a publish pass's partitions, however many they are.
   */
  async tryHold(paths: readonly string[]): Promise<HeldLocks> {
    const keys = paths.map(lockKey);
    const tokens = (await this.redis.eval(TAKE_ALL, keys.length * 2, ...keys, ...keys.map((key) => `${key}:fence`), this.holder, this.leaseMs)) as number[];
    const taken = tokens.map((token) => Number(token) > 0);
    const mine = keys.flatMap((key, index) => (taken[index] ? [{ key, value: `${this.holder}#${tokens[index]}`, path: paths[index] }] : []));
    const keep = (leaseMs: number) => this.redis.eval(KEEP_ALL, mine.length, ...mine.map((lock) => lock.key), leaseMs, ...mine.map((lock) => lock.value));
    const renewal = setInterval(() => {
      keep(this.leaseMs)
        .then((kept) => {
          if (Number(kept) < mine.length) {
            clearInterval(renewal);
            this.onLost(mine[0].path);
          }
        })
        // Redis away: the next renewal tries again; the lease says how long that may last.
        .catch(() => undefined);
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    renewal.unref();
    if (mine.length === 0) clearInterval(renewal);
    return {
      taken,
      fence: () => this.#holds(mine.map((lock) => lock.key), mine.map((lock) => lock.value)),
      release: async () => {
        clearInterval(renewal);
        if (mine.length > 0) await keep(0).catch(() => undefined);
      },
    };
  }

  /**
   * Whether each of `keys` still holds its value of `values`. Redis away past a whole lease means
   * the lease ran out meanwhile: the answer is then no, rather than a wait as long as Redis stays away.
   */
  async #holds(keys: readonly string[], values: readonly string[]): Promise<boolean> {
    if (keys.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.leaseMs);
    });
    try {
      return await Promise.race([this.redis.mget(...keys).then((held) => held.every((value, index) => value === values[index])), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Takes the lock at `path` if nobody holds it, renewing its lease until released. */
  async take(path: string): Promise<Lease | undefined> {
    const key = lockKey(path);
    const token = Number(await this.redis.eval(TAKE, 2, key, `${key}:fence`, this.holder, this.leaseMs));
    if (token === 0) return undefined;
    const value = `${this.holder}#${token}`;
    const renewal = setInterval(() => {
      this.redis
        .eval(KEEP, 1, key, value, this.leaseMs)
        .then((kept) => {
          if (Number(kept) === 0) {
            clearInterval(renewal);
            this.onLost(path);
          }
        })
        // Redis away: the next renewal tries again; the lease says how long that may last.
        .catch(() => undefined);
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    renewal.unref();
    return {
      token,
      held: () => this.#holds([key], [value]),
      release: async () => {
        clearInterval(renewal);
        await this.redis.eval(KEEP, 1, key, value, 0).catch(() => undefined);
      },
    };
  }
}

/** Lock keys name a path by its hash: a path may hold anything, a key should not. */
export function lockKey(path: string): string {
  // A dataset on a store names its locks by its location (`s3://…`), the same on every machine.
  const name = /^[a-z][a-z0-9+.-]*:\/\//i.test(path) ? path : resolve(path);
  return `${PREFIX}:lock:${createHash('sha256').update(name).digest('hex').slice(0, 24)}`;
}
