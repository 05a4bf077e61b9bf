/**
 * One writer per output: a lock file (`<out>.lock` beside a file, `writer-<name>.lock` in a dataset's
 * state folder) holds the pid of the export writing it. It is written whole
 * under a name of its own and then hard-linked into place, which fails when the name exists: of two
 * runs started together exactly one gets it, and nobody ever reads a lock half written. A lock whose
 * process is gone (killed, crashed) is stale: it is first renamed to a name of its own, so that two
 * runs breaking the same stale lock cannot both go on to take the new one.
 */
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { LockedError } from '../errors.ts';
import { isAlive, OPEN, temporaryName } from './durable.ts';

function locked(output: string, path: string, pid: number): LockedError {
  return new LockedError(`another export (pid ${pid}) is writing ${output}; wait for it to end, or stop it (if no such export runs, delete ${path})`, output, pid);
}

export interface OutputLock {
  release(): Promise<void>;
}

/** Takes the lock at `path` for `output` (named in the refusal), or throws `LOCKED` naming the live holder. */
export async function lockOutput(output: string, path: string): Promise<OutputLock> {
  // Two tries: the second follows the removal of a stale lock.
  for (let attempt = 0; ; attempt++) {
    // Written whole under a name of its own, then linked into place: the lock is never seen empty.
    const draft = temporaryName(path);
    const handle = await open(draft, OPEN.create, 0o644);
    try {
      await handle.writeFile(`${process.pid}\n`);
    } finally {
      await handle.close();
    }
    try {
      await link(draft, path);
      return { release: () => unlink(path).catch(() => undefined) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    } finally {
      await unlink(draft).catch(() => undefined);
    }
    const holder = await pidIn(path);
    if (holder !== undefined && isAlive(holder)) throw locked(output, path, holder);
    await breakStaleLock(path, output, holder);
  }
}

async function breakStaleLock(path: string, output: string, stale: number | undefined): Promise<void> {
  const aside = temporaryName(path);
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await pidIn(aside);
  if (moved !== stale && moved !== undefined && isAlive(moved)) {
    // Another run took the lock between our read and our rename: give it back, and yield.
    await link(aside, path).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
    throw locked(output, path, moved);
  }
  await unlink(aside).catch(() => undefined);
}

async function pidIn(path: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(path, { encoding: 'utf8', flag: OPEN.read })).trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

