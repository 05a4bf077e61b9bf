/**
 * Names for files written whole and then renamed into place: fresh and unguessable, beside the file
 * they will replace, and recognisable, so a run can sweep the ones a killed run left behind.
 */
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

/** A fresh, unguessable name beside `path`, for a file that is renamed over `path` once complete. */
export function temporaryName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Whether `name`, a file in `path`'s folder, is one of `path`'s temporary names (left behind by a crash). */
export function isTemporaryNameOf(name: string, path: string): boolean {
  const prefix = `.${basename(path)}.`;
  return name.startsWith(prefix) && /^[0-9a-f]{12}\.tmp$/.test(name.slice(prefix.length));
}
