/**
 * How a journal's staged parts take their places (a publish pass's, `rewrite.ts`, and a
 * compaction's, `compaction-journal.ts`): each staged object is moved to its target, then the parts
 * it replaces are removed, by names relative to the dataset's root. There is no rename: `Storage.move`
 * is a rename on a local folder and a copy then a removal on S3. Every step is idempotent, so a
 * journal is replayed from the start after a kill: a staged object that is gone was moved.
 */
import { mapAtOnce } from '../at-once.ts';
import type { Storage } from './storage/types.ts';

/** Moves under way at once: on S3 each is a copy and a removal, two round trips. */
const MOVES_AT_ONCE = 8;

/**
 * Moves each staged object to its place, then removes the objects `removes` names. `after` is where
 * the moves that wait for every one before them begin (a publish's partitions that only lose
 * records that moved, placed after those that gain them, so that a reader never misses a moved
 * record); on either side of it the moves go `MOVES_AT_ONCE` at a time. Without it (the journal of
 * an earlier version, which did not record it) they go one at a time, in their order.
 */
export async function placeStaged(storage: Storage, moves: readonly (readonly [string, string])[], removes: readonly string[], after?: number): Promise<void> {
  if (after === undefined) for (const [from, to] of moves) await storage.move(from, to);
  else for (const wave of [moves.slice(0, after), moves.slice(after)]) await mapAtOnce(wave, MOVES_AT_ONCE, ([from, to]) => storage.move(from, to));
  // One at a time: a local store then drops each partition folder its last part left, as before the storage seam.
  for (const old of removes) await storage.removeAll([old]);
}
