/**
 * What the file system says, in the engine's words: a folder that cannot take the output is refused
 * before any request (`NOT_WRITABLE`), and a full disk wherever it surfaces is `DISK_FULL`. No raw
 * `ENOENT`, `ENOTDIR` or `ENOSPC` reaches a caller.
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DiskFullError, NotWritableError, SocialstreamError } from '../errors.ts';

/**
 * Makes `folder` (like `mkdir -p`) and checks it can be written, naming what is wrong otherwise. A
 * read-only mount makes a recursive `mkdir` report ENOENT, so the reason is read off the nearest
 * folder that exists.
 */
export async function ensureWritableFolder(folder: string, output: string): Promise<void> {
  const absolute = resolve(folder);
  try {
    await mkdir(absolute, { recursive: true });
    await access(absolute, constants.W_OK);
  } catch (error) {
    throw new NotWritableError(`${output}: cannot write there: ${await whyNotWritable(absolute, error)}`, output, { cause: error });
  }
}

async function whyNotWritable(folder: string, error: unknown): Promise<string> {
  let existing = folder;
  for (;;) {
    const info = await stat(existing).catch(() => undefined);
    if (info !== undefined) {
      if (!info.isDirectory()) return `${existing} is not a folder`;
      break;
    }
    const parent = dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  const code = await access(existing, constants.W_OK).then(
    () => (error as NodeJS.ErrnoException).code,
    (denied: NodeJS.ErrnoException) => denied.code,
  );
  switch (code) {
    case 'EROFS':
      return `${existing} is on a read-only file system`;
    case 'EACCES':
    case 'EPERM':
      return `the folder ${existing} is not writable`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `no space left on the disk holding ${existing}`;
    case 'ENOTDIR':
    case 'EEXIST':
      return `a part of ${folder} is not a folder`;
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

/** Whether `error` (or what caused it) is the disk running out of room. */
export function isDiskFull(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  }
  return false;
}

/** The file a failure of the file system names (it, or what caused it). */
function pathOf(error: unknown): string | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const path = (cause as NodeJS.ErrnoException).path;
    if (typeof path === 'string') return path;
  }
  return undefined;
}

/** `error`, naming `path` when the call that failed took a file descriptor and so named none. */
export function naming(error: unknown, path: string): unknown {
  if (error instanceof Error && (error as NodeJS.ErrnoException).path === undefined) Object.assign(error, { path });
  return error;
}

/**
 * A failure of the file system while staging or publishing, as the engine reports it: a full disk is
 * `DISK_FULL`; another I/O error is `NOT_WRITABLE`; our own errors pass unchanged.
 */
export function diskFailure(error: unknown, folder: string, output: string): unknown {
  if (error instanceof SocialstreamError && !isDiskFull(error)) return error;
  if (error instanceof DiskFullError) return error;
  if (isDiskFull(error)) {
    const writing = pathOf(error);
    return new DiskFullError(`no space left on the disk holding ${resolve(folder)}${writing === undefined ? '' : ` (writing ${writing})`}`, output, { cause: error });
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    return new NotWritableError(`${output}: the file system failed (${code}) while writing it`, output, { cause: error });
  }
  return error;
}
