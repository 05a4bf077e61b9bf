/**
 * The journal of a compaction (`compact.ts`), kept apart from `dataset.ts` so that both a compaction
 * and an export's open can finish one a kill left half done: the export's open calls
 * `finishCompaction` before it reads the schema the compaction changed.
 *
 * Like a publish, a compaction stores its new parts staged (under `compact/`, out of sight of
 * readers), then this journal naming every move and every old part to remove, then moves and
 * removes (`Storage.move`, `removeAll`: no rename, so an object store does it too). Each step is
 * idempotent, so the journal is replayed from the start by whoever finds it. Names are relative to
 * the dataset's root, so a dataset copied or moved while a compaction was pending still finishes.
 */
import { walkName } from '../operations/walk-name.ts';
import { removeObjects, type DatasetPaths } from './store.ts';
import type { MarksFile, WalkMark } from './marks.ts';
import { readCompactionJournal } from './state.ts';
import { objectPlace, writeObject } from './objects.ts';
import { placeStaged } from './placement.ts';
import { writeRecordedSchema } from './table-schema.ts';

export interface CompactionJournal {
  version: 1;
  operation: string;
  /** Staged part → its place, both relative to the dataset directory. */
  renames: [string, string][];
  /** Old parts whose rows the new parts hold, relative to the dataset directory. */
  removes: string[];
  /** The schema file after the compaction (its partitioning may have changed). */
  schema: unknown;
  /** Walk states made of the marks writers' files held before walks had their own (a migration). */
  walks?: WalkMark[];
  /** Those writers' files afterwards, without the marks. */
  writers?: Record<string, MarksFile>;
}

/** Drops what a compaction killed before its journal staged: the next compaction does, before it stages. */
export async function dropCompactionStaging(paths: DatasetPaths): Promise<void> {
  await removeObjects(paths.storage, paths.names.compaction);
}

export async function hasPendingCompaction(paths: DatasetPaths): Promise<boolean> {
  return paths.storage.exists(paths.names.compactionJournal);
}

export async function writeCompactionJournal(paths: DatasetPaths, journal: CompactionJournal): Promise<void> {
  await writeObject(paths.storage, paths.names.compactionJournal, journal);
}

/**
 * Finishes the compaction the journal describes, if there is one; the caller holds the operation's
 * publish lock. Returns whether there was one.
 */
export async function finishCompaction(paths: DatasetPaths): Promise<boolean> {
  const place = objectPlace(paths.storage, paths.names.compactionJournal);
  const journal = await readCompactionJournal(paths, `delete ${place} and ${objectPlace(paths.storage, paths.names.compaction.slice(0, -1))}; the old parts are then the dataset again, and the new ones may show twice until removed from where the journal put them`);
  // Parts staged by a compaction killed before its journal, which the dataset never saw, are left to
  // the next compaction to drop (`dropCompactionStaging`): looking for them here would cost every pass a listing.
  if (journal === undefined) return false;
  // Every new part has a name of its own, and the old ones go after: the moves need no order.
  await placeStaged(paths.storage, journal.renames, journal.removes, journal.renames.length);
  await writeRecordedSchema(paths, journal.schema);
  for (const walk of journal.walks ?? []) await writeObject(paths.storage, paths.names.walkMark(walkName(walk.params)), walk);
  for (const [writer, file] of Object.entries(journal.writers ?? {})) await writeObject(paths.storage, paths.ofWriter(writer).names.state, file);
  await removeObjects(paths.storage, paths.names.compaction);
  await paths.storage.remove(paths.names.compactionJournal);
  return true;
}
