/**
 * How a journal's staged parts take their places (a publish pass's, `rewrite.ts`, and a
 * compaction's, `compaction-journal.ts`): each staged object is moved to its target, then the parts
 * it replaces are removed, by names relative to the dataset's root. There is no rename: `Storage.move`
 * is a rename on a local folder and a copy then a removal on S3. Every step is idempotent, so a
 * journal is replayed from the start after a kill: a staged object that is gone was moved.
 */
import type { Storage } from './storage/types.ts';

/** Moves each staged object to its place, then removes the objects `removes` names. */
export async function placeStaged(storage: Storage, moves: readonly (readonly [string, string])[], removes: readonly string[]): Promise<void> {
  for (const [from, to] of moves) await storage.move(from, to);
  // One at a time: a local store then drops each partition folder its last part left, as before the storage seam.
  for (const old of removes) await storage.removeAll([old]);
}
