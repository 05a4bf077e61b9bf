/** A queue's address, `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS): checked, and shown without its password. */
import { QueueError } from './errors.ts';

/** Checks a queue address; returns it unchanged. */
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

/** The database index the address names (0 when it names none). */
export function databaseOf(url: string): number {
  return Number(new URL(url).pathname.replace(/^\//, '') || 0);
}

/** The address without its password, for messages. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}
