/**
 * A dataset's JSON objects (its schema, walk states, writers' states and drift, commits, receipts,
 * claims, journals: `DatasetNames` in `store.ts`) as its `Storage` holds them, by a name relative to
 * the dataset's root. Each is written whole and read whole: `Storage.write` replaces an object
 * atomically and durably (on a local folder, a fsynced file renamed into place, as before the
 * storage seam), so a kill leaves the old object or the new one. What an object must hold is
 * checked by `state.ts`; this module only turns bytes into JSON and JSON into bytes, and names an
 * object in a message as a user finds it (`objectPlace`).
 */
import { join } from 'node:path';
import { StateDamagedError } from '../errors.ts';
import type { Storage } from './storage/types.ts';

/** Where a user finds the object `name`: the file's path in a local folder, `s3://bucket/prefix/name` in a bucket. */
export function objectPlace(storage: Storage, name: string): string {
  return storage.folder !== undefined ? join(storage.folder, ...name.split('/')) : `${storage.location}/${name}`;
}

/**
 * The JSON of the object `name`, or undefined when there is none. An object that is not JSON was
 * cut short or edited, and a local file that is a symbolic link was not written by us (a local
 * store never reads through one): `STATE_DAMAGED`, naming the object and `remedy`.
 */
export async function readObject(storage: Storage, name: string, remedy: string): Promise<unknown> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await storage.read(name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') throw error;
    const place = objectPlace(storage, name);
    throw new StateDamagedError(`${place} is a symbolic link, not a file this program wrote; ${remedy}`, place);
  }
  if (bytes === undefined) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  } catch {
    const place = objectPlace(storage, name);
    throw new StateDamagedError(`${place} is not valid JSON (cut short or edited); ${remedy}`, place);
  }
}

/** Stores `value` as the JSON object `name`, whole (see the top of this file). */
export async function writeObject(storage: Storage, name: string, value: unknown): Promise<void> {
  await storage.write(name, new TextEncoder().encode(JSON.stringify(value, null, 1)));
}

/**
 * The names of the objects that begin with `prefix` and hold no `/` after it (those in a folder,
 * `walks/`, or beside each other, `state-`), whose rest after `prefix` passes `keep`, in byte order.
 * One listing, of that prefix alone.
 */
export async function objectsIn(storage: Storage, prefix: string, keep: (rest: string) => boolean): Promise<string[]> {
  const names: string[] = [];
  for await (const { name } of storage.list(prefix)) {
    const rest = name.slice(prefix.length);
    if (!rest.includes('/') && keep(rest)) names.push(name);
  }
  return names;
}
