/**
 * The journal of a compaction (`compact.ts`), kept apart from `dataset.ts` so that both a compaction
 * and an export's open can finish one a kill left half done: the export's open calls
 * `finishCompaction` before it reads the schema the compaction changed.
 *
 * Like a publish, a compaction writes its new parts staged (out of sight of readers), then this
 * journal naming every rename and every old part to remove, then renames and removes. Each step is
 * idempotent, so the journal is replayed from the start by whoever finds it. Paths are relative to
 * the dataset directory, so a dataset copied or moved while a compaction was pending still finishes.
 */
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { walkName } from '../operations/walk-name.ts';
import type { DatasetPaths } from './store.ts';
import type { MarksFile, WalkMark } from './marks.ts';
import { readCompactionJournal } from './state.ts';
import { objectPlace, writeObject } from './objects.ts';
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

/** Where a compaction writes its new parts before the journal names them. */
export function compactionStaging(paths: DatasetPaths): string {
  return join(paths.meta, 'compact');
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
  const journal = await readCompactionJournal(paths, `delete ${place} and ${compactionStaging(paths)}; the old parts are then the dataset again, and the new ones may show twice until removed from where the journal put them`);
  if (journal === undefined) {
    // Parts staged by a compaction killed before its journal: the dataset never saw them.
    await rm(compactionStaging(paths), { recursive: true, force: true });
    return false;
  }
  for (const [from, to] of journal.renames) {
    const target = join(paths.dir, to);
    await mkdir(dirname(target), { recursive: true });
    try {
      await rename(join(paths.dir, from), target);
    } catch (error) {
      // Renamed before a kill: the staged file is gone and the part is in place.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  for (const old of journal.removes) {
    const part = join(paths.dir, old);
    await rm(part, { force: true });
    await removeIfEmpty(dirname(part));
  }
  await writeRecordedSchema(paths, journal.schema);
  for (const walk of journal.walks ?? []) await writeObject(paths.storage, paths.names.walkMark(walkName(walk.params)), walk);
  for (const [writer, file] of Object.entries(journal.writers ?? {})) await writeObject(paths.storage, paths.ofWriter(writer).names.state, file);
  await rm(compactionStaging(paths), { recursive: true, force: true });
  await paths.storage.remove(paths.names.compactionJournal);
  return true;
}

/** A partition folder whose last part went: readers would find nothing in it. */
async function removeIfEmpty(folder: string): Promise<void> {
  const left = await readdir(folder).catch(() => undefined);
  if (left !== undefined && left.length === 0) await rmdir(folder).catch(() => undefined);
}
