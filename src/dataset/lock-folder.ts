/**
 * The lock folders of a dataset on the local store (`_dataset/<op>/lock/` and `locks/*`,
 * `locks.ts`). A lock folder is born signed: its `owner.json` (pid, host and a token of its
 * own) is written in a folder of the taker's and renamed into place, which fails when the name
 * holds a lock, so nobody ever sees a lock half made. A lock whose process died on this host is
 * stale: it is first renamed aside to a name made of its token (`<lock>.stale-<token>`), so of the
 * processes that judged it stale exactly one moves it, and the others' renames fail on the aside
 * that is there; the mover checks that what it moved is the owner it judged, and gives back a live
 * one. A lock held from another host is never broken (its pid says nothing here): it is waited for,
 * and named when the wait ends.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { DatasetError } from '../errors.ts';
import { isAlive } from '../export/durable.ts';

const LOCK_WAIT_MS = 50;
const LOCK_TRIES = 2_400;
/** A folder made but never signed is a lock of an older version killed in that instant, once this old. */
const UNSIGNED_STALE_MS = 10_000;
/** Asides of broken locks are kept this long: a taker that judged the same lock stale meanwhile fails on them. */
const ASIDE_KEPT_MS = 60_000;

/** Who holds a lock folder, as its `owner.json` says (older versions wrote no token). */
interface Owner {
  pid?: unknown;
  host?: unknown;
  token?: unknown;
}

/**
 * Runs `fn` holding the lock folder `lock`. A lock left by a process that died on this host is
 * taken over; one held by a live process is waited for, up to two minutes.
 */
export async function withLock<T>(lock: string, fn: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    const held = await tryLock(lock, fn);
    if (held !== undefined) return held.value;
    if (tries >= LOCK_TRIES) throw new DatasetError(`${lock} is held by ${await holderOf(lock)}, which has been publishing for two minutes`, dirname(lock));
    await new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_MS));
  }
}

/** Runs `fn` holding the lock folder `lock` if nobody else holds it (a stale lock is taken over); undefined when held. */
export async function tryLock<T>(lock: string, fn: () => Promise<T>): Promise<{ value: T } | undefined> {
  await mkdir(dirname(lock), { recursive: true });
  const token = randomUUID();
  // Two tries: the second follows the move of a stale lock aside.
  for (let attempt = 0; ; attempt++) {
    if (await place(lock, token)) break;
    if (attempt > 0) return undefined;
    const stale = await staleIdentity(lock);
    if (stale === undefined) return undefined;
    await moveAside(lock, stale);
  }
  try {
    return { value: await fn() };
  } finally {
    await release(lock, token);
  }
}

/** Puts a lock folder signed with `token` at `lock`; false when a lock is there. */
async function place(lock: string, token: string): Promise<boolean> {
  const draft = `${lock}.taking-${token}`;
  try {
    await mkdir(draft);
    // A full disk refuses this file here, in the draft: no lock is left unsigned.
    await writeFile(join(draft, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname(), token }));
    await rename(draft, lock);
    return true;
  } catch (error) {
    if (!isTaken(error)) throw error;
    return false;
  } finally {
    await rm(draft, { recursive: true, force: true });
  }
}

/** A rename onto a lock folder fails with one of these (Linux says ENOTEMPTY, others EEXIST or EPERM on a folder). */
function isTaken(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EPERM';
}

/** Lets `lock` go: moved aside whole first, so that no taker ever finds it half removed. */
async function release(lock: string, token: string): Promise<void> {
  const leaving = `${lock}.released-${token}`;
  try {
    await rename(lock, leaving);
  } catch {
    return;
  }
  const moved = await identityOf(leaving);
  // Never so while locks are judged as they are: a lock not its holder's is given back all the same.
  if (moved !== token) await rename(leaving, lock).catch(() => undefined);
  await rm(leaving, { recursive: true, force: true });
}

/** The identity of the lock at `lock` if its owner is gone (a dead process of this host, or unsigned for long); undefined when held or gone. */
async function staleIdentity(lock: string): Promise<string | undefined> {
  const before = await stat(lock).catch(() => undefined);
  if (before === undefined) return undefined;
  const owner = await ownerOf(lock);
  if (typeof owner?.token !== 'string') {
    // An older version's lock is known by its inode: one replaced while its owner was read is another's.
    if ((await stat(lock).catch(() => undefined))?.ino !== before.ino) return undefined;
    if (owner === undefined) return Date.now() - before.mtimeMs > UNSIGNED_STALE_MS ? `ino-${before.ino}` : undefined;
  }
  if (owner.host !== hostname() || typeof owner.pid !== 'number' || isAlive(owner.pid)) return undefined;
  return typeof owner.token === 'string' ? owner.token : `ino-${before.ino}`;
}

/**
 * Moves the lock judged stale (`stale`, its identity) aside to a name made of it. Of several that
 * judged it, one moves it; the rename of every other fails on the aside (or finds no lock). One
 * that finds a live lock moved (the aside swept meanwhile) gives it back.
 */
async function moveAside(lock: string, stale: string): Promise<void> {
  await sweepAsides(lock);
  const aside = `${lock}.stale-${stale}`;
  try {
    await rename(lock, aside);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || isTaken(error)) return;
    throw error;
  }
  if ((await identityOf(aside)) !== stale) await rename(aside, lock).catch(() => undefined);
}

/** Removes the asides of locks broken long ago, and drafts and releases their takers died with. */
async function sweepAsides(lock: string): Promise<void> {
  const folder = dirname(lock);
  const prefix = `${basename(lock)}.`;
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^(?:stale|taking|released)-[\w-]+$/.test(name.slice(prefix.length))) continue;
    const changed = await stat(join(folder, name)).catch(() => undefined);
    if (changed !== undefined && Date.now() - changed.ctimeMs > ASIDE_KEPT_MS) await rm(join(folder, name), { recursive: true, force: true });
  }
}

/** A lock folder's identity: its owner's token, or for a lock of an older version (no token), its inode. */
async function identityOf(folder: string): Promise<string | undefined> {
  const owner = await ownerOf(folder);
  if (typeof owner?.token === 'string') return owner.token;
  const made = await stat(folder).catch(() => undefined);
  return made === undefined ? undefined : `ino-${made.ino}`;
}

async function ownerOf(folder: string): Promise<Owner | undefined> {
  try {
    const owner = JSON.parse(await readFile(join(folder, 'owner.json'), 'utf8')) as unknown;
    return typeof owner === 'object' && owner !== null ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** The holder of `lock` in words, for a wait that ran out. */
async function holderOf(lock: string): Promise<string> {
  const owner = await ownerOf(lock);
  if (owner === undefined) return 'another run';
  const pid = typeof owner.pid === 'number' ? `pid ${owner.pid}` : 'a process';
  return owner.host === hostname() ? `${pid} on this host` : `${pid} on host ${String(owner.host)} (a lock from another host is never broken: stop that run, or delete ${lock} if none runs there)`;
}
