/**
 * Which of the three lock mechanisms of `locks.ts` a dataset's writer uses, decided from the
 * dataset's store when it opens, before anything is bought:
 *
 * - the caller's Redis locks (`ExportLocks`: queue mode, or `--locks redis://…`) whenever it has
 *   them: they hold across machines on any store, and need nothing of it. On a store they are named
 *   by the dataset's location (`s3://bucket/prefix/_dataset/…`), never by the working folder that
 *   stands for it, which differs from one machine (one `--work`) to the next;
 * - lock folders on a local folder (or one a fleet mounts), as always;
 * - else leases on the store itself (`store-locks.ts`), when it honours conditional writes
 *   (`Storage.checkConditionalWrites`: a bucket is probed, once); a store that ignores them is
 *   refused in one line naming `--locks redis://…` (`STORAGE_NO_CONDITIONAL_WRITES`).
 */
import { relative, resolve, sep } from 'node:path';
import type { Storage } from './storage/types.ts';
import { StoreLocks, type StoreLockOptions } from './store-locks.ts';
import type { PublishLocks, RecordedLocks } from './locks.ts';
import type { ExportLocks } from '../export/types.ts';

/** The locks a dataset's writer takes: lock folders (the engine's and `locks.ts`'s own), or `locks`. */
export type DatasetLockChoice = { readonly mechanism: 'folders' } | { readonly mechanism: RecordedLocks; readonly locks: ExportLocks };

/**
 * The locks of the dataset at `root` (its folder, by which its locks are named) held in `storage`,
 * for a writer given `caller`'s locks or none. Refuses a bucket that cannot hold store leases.
 */
export async function chooseDatasetLocks(storage: Storage, root: string, caller: ExportLocks | undefined, options: StoreLockOptions = {}): Promise<DatasetLockChoice> {
  const local = storage.folder !== undefined;
  if (caller !== undefined) return { mechanism: 'queue', locks: local ? caller : namedByLocation(caller, storage.location, root) };
  if (local) return { mechanism: 'folders' };
  await storage.checkConditionalWrites();
  return { mechanism: 'leases', locks: new StoreLocks(storage, root, options) };
}

/** The locks a dataset's publishes take (`DatasetLocks`) for `choice`: lock folders when it names none. */
export function publishLocksOf(choice: DatasetLockChoice | undefined): PublishLocks {
  if (choice === undefined || choice.mechanism === 'folders') return {};
  const { locks, mechanism } = choice;
  return { mechanism, publish: locks.publish.bind(locks), tryPublish: locks.tryPublish?.bind(locks), tryHold: locks.tryHold?.bind(locks) };
}

/**
 * `locks` with each lock's path under `root` (the working folder standing for a dataset on a store)
 * renamed into the dataset's `location`, so that writers on every machine name a lock alike.
 */
function namedByLocation(locks: ExportLocks, location: string, root: string): ExportLocks {
  const name = (path: string): string => {
    const under = relative(resolve(root), resolve(path));
    if (under === '' || under.startsWith('..')) throw new Error(`${path} is no lock of the dataset at ${root}`);
    return `${location}/${under.split(sep).join('/')}`;
  };
  return {
    output: (output, path) => locks.output(output, name(path)),
    publish: (path, fn) => locks.publish(name(path), fn),
    ...(locks.tryPublish === undefined ? {} : { tryPublish: (path, fn) => locks.tryPublish!(name(path), fn) }),
    ...(locks.tryHold === undefined ? {} : { tryHold: (paths) => locks.tryHold!(paths.map(name)) }),
  };
}
