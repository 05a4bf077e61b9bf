/**
 * The Redis behind `--queue redis://HOST:PORT/DB`: one address for the jobs (BullMQ), the runs and
 * their budgets, and the workers' reports. Every key socialstream writes starts with `socialstream:`;
 * BullMQ's own keys are `socialstream:walks:*`. None of them ever holds the API key.
 *
 * A connection is made in one place (`connectQueue`), so every command meets an address that cannot
 * work the same way: one typed error (`diagnose`) before anything is read or written, a database
 * index the server lacks included (Redis would otherwise stay in database 0 without a word).
 */
import { Redis } from 'ioredis';
import { sleep } from '../retry.ts';
import { checkQueueUrl, databaseOf, shownUrl } from './address.ts';
import { diagnose } from './diagnose.ts';
import { QueueDatabaseError, QueueUnreachableError } from './errors.ts';

/** The BullMQ queue of walks, and the prefix of every key. */
export const QUEUE_NAME = 'walks';
export const PREFIX = 'socialstream';

/** How long a worker waits between attempts while Redis cannot be reached (docs/queue.md). */
const RETRY_MS = 5_000;
/** How long an attempt waits for Redis to be ready. */
const CONNECT_MS = 5_000;

/** The socket errors of a connection to a Redis that went away (or is not there yet). */
const LOST_CONNECTION: ReadonlySet<string> = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** ioredis's (and BullMQ's) error for a command on a connection that has just closed: it carries no code. */
const CONNECTION_CLOSED = 'Connection is closed.';

/**
 * Whether `error` says only that Redis went away: a socket error (a read or a write reset, a broken pipe,
 * a refused reconnection) or a command caught on the closing connection. Which one a connection sees
 * first depends on what it was doing when Redis went, so each is told the same way.
 */
export function lostConnection(error: Error): boolean {
  return LOST_CONNECTION.has((error as NodeJS.ErrnoException).code ?? '') || error.message === CONNECTION_CLOSED;
}

export interface ConnectOptions {
  /**
   * A worker's connection: it waits for Redis (an attempt every `RETRY_MS`), and once connected
   * outlives a Redis restart (BullMQ needs `maxRetriesPerRequest: null`). A command's (enqueue,
   * status) makes one attempt: an unreachable Redis is a `QueueUnreachableError`.
   */
  persistent: boolean;
  /** Aborting ends the wait at once, with the signal's reason. */
  signal?: AbortSignal;
  /** One line per failed attempt, then one per distinct error of the connection while it lives. */
  log?: (line: string) => void;
}

/** A connected Redis, its database checked; an address that cannot work is a typed `QueueError` at once, however persistent. */
export async function connectQueue(url: string, options: ConnectOptions): Promise<Redis> {
  const { persistent, signal, log = () => undefined } = options;
  checkQueueUrl(url);
  for (;;) {
    signal?.throwIfAborted();
    try {
      const redis = await attempt(url, persistent, signal);
      reportErrors(redis, url, log);
      return redis;
    } catch (error) {
      if (!persistent || !(error instanceof QueueUnreachableError)) throw error;
      log(`${error.message}; trying again in ${RETRY_MS / 1_000} s`);
      await sleep(RETRY_MS, signal);
    }
  }
}

/** Runs `task` with a short-lived connection, closed after. */
export async function withRedis<T>(url: string, task: (redis: Redis) => Promise<T>, signal?: AbortSignal): Promise<T> {
  const redis = await connectQueue(url, { persistent: false, signal });
  try {
    return await task(redis);
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** One connection attempt: resolves once Redis is ready in the address's database. */
async function attempt(url: string, persistent: boolean, signal: AbortSignal | undefined): Promise<Redis> {
  let connected = false;
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_MS,
    // disconnect() while Redis is away (its stream already closed) leaves a timer this long behind.
    disconnectTimeout: 100,
    maxRetriesPerRequest: persistent ? null : 1,
    enableOfflineQueue: persistent,
    // Before the first connection this attempt is all (the caller decides on the next); after it, quick at first, backing off to RETRY_MS.
    retryStrategy: (times) => (persistent && connected ? Math.min(250 * 2 ** (times - 1), RETRY_MS) : null),
  });
  const errors: Error[] = [];
  redis.on('error', (error: Error) => errors.push(error));
  const abort = (): void => redis.disconnect();
  signal?.addEventListener('abort', abort, { once: true });
  // connectTimeout ends the wait for the socket; a peer that takes it and then says nothing is ended here.
  const silent = setTimeout(() => {
    errors.push(new Error(`no answer within ${CONNECT_MS / 1_000} s`));
    redis.disconnect();
  }, CONNECT_MS);
  try {
    await redis.connect();
    await checkDatabase(redis, url);
    connected = true;
    return redis;
  } catch (error) {
    if (redis.status !== 'end') redis.disconnect();
    signal?.throwIfAborted();
    if (error instanceof QueueDatabaseError) throw error;
    throw await diagnose([...errors, error as Error], url);
  } finally {
    clearTimeout(silent);
    signal?.removeEventListener('abort', abort);
    redis.removeAllListeners('error');
  }
}

/** ioredis stays in database 0 when SELECT fails; asked again, the server says whether it has the database. */
async function checkDatabase(redis: Redis, url: string): Promise<void> {
  const database = databaseOf(url);
  if (database === 0) return;
  try {
    await redis.select(database);
  } catch (error) {
    if (!/DB index is out of range/i.test((error as Error).message)) throw error;
    const count = await databaseCount(redis);
    const has = count === undefined ? '' : ` (it has ${count}: 0 to ${count - 1})`;
    throw new QueueDatabaseError(`Redis at ${shownUrl(url)} has no database ${database}${has}: pick one it has in --queue`, database);
  }
}

/** `databases` from the server's configuration, where CONFIG is allowed (managed services often refuse it). */
async function databaseCount(redis: Redis): Promise<number | undefined> {
  const reply = (await redis.config('GET', 'databases').catch(() => [])) as string[];
  const count = Number(reply[1]);
  return Number.isSafeInteger(count) && count > 0 ? count : undefined;
}

/** Logs the connection's errors, each once until it is ready again (an ioredis client without an `error` listener prints stack traces). */
function reportErrors(redis: Redis, url: string, log: (line: string) => void): void {
  let last = '';
  // Redis going away is told once: a socket reset (a command was in flight) is followed by refused
  // reconnections, which say nothing new until it is back.
  let away = false;
  redis.on('error', (error: Error) => {
    const lost = lostConnection(error);
    if (lost && away) return;
    away ||= lost;
    const line = `Redis at ${shownUrl(url)}: ${error.message}`;
    if (line !== last) log(line);
    last = line;
  });
  redis.on('ready', () => {
    last = '';
    away = false;
  });
}
