/**
 * The Redis behind `--queue redis://HOST:PORT/DB`: one address for the jobs (BullMQ), the runs and
 * their budgets, and the workers' reports. Every key socialstream writes starts with `socialstream:`;
 * BullMQ's own keys are `socialstream:walks:*`. None of them ever holds the API key.
 */
import { Redis } from 'ioredis';
import { QueueError } from './errors.ts';

/** The BullMQ queue of walks, and the prefix of every key. */
export const QUEUE_NAME = 'walks';
export const PREFIX = 'socialstream';

/** Checks a queue address: `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS). */
export function checkQueueUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QueueError(`--queue must be an address like redis://HOST:6379/0, got "${url}"`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new QueueError(`--queue must start with redis:// or rediss://, got "${url}"`);
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new QueueError(`--queue: the database is a number (redis://HOST:PORT/0), got "/${db}"`);
  return url;
}

/** The address without its password, for messages. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

export interface RedisOptions {
  /**
   * A worker's connection waits through a Redis restart (BullMQ needs `maxRetriesPerRequest: null`);
   * a command's (enqueue, status) fails at once when Redis cannot be reached.
   */
  persistent: boolean;
  /** Told once per distinct connection error, as one line (an ioredis client without an `error` listener prints stack traces). */
  onError?: (message: string) => void;
}

export function openRedis(url: string, options: RedisOptions): Redis {
  const redis = new Redis(checkQueueUrl(url), {
    maxRetriesPerRequest: options.persistent ? null : 1,
    enableOfflineQueue: options.persistent,
    lazyConnect: !options.persistent,
    connectTimeout: 5_000,
    retryStrategy: options.persistent ? (times) => Math.min(100 * times, 2_000) : () => null,
  });
  let last = '';
  redis.on('error', (error: Error) => {
    const message = `Redis at ${shownUrl(url)}: ${error.message}`;
    if (message !== last) options.onError?.(message);
    last = message;
  });
  redis.on('ready', () => (last = ''));
  return redis;
}

/** Runs `task` with a short-lived connection, closed after; an unreachable Redis is a `QueueError` naming it. */
export async function withRedis<T>(url: string, task: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = openRedis(url, { persistent: false });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new QueueError(`cannot reach Redis at ${shownUrl(url)}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return await task(redis);
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
