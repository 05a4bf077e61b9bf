/**
 * A dataset's high-water marks: per parameter set (walk), the newest plausible record time it
 * holds, and the rules by which a newest-first walk of a later run knows it has reached what is
 * held. A single record never decides (a pinned post, a garbage time, one out of order): a page
 * must end in `EVIDENCE` held records in a row, a record being held by a time more than
 * `MARK_LAG_MS` below the mark or by its key among the keys the walk met near its mark.
 *
 * Each walk keeps its own state file (`_dataset/<op>/walks/<walkName>.json`: its mark and those
 * keys), read alone before its first request: what a walk reads costs the same in a dataset of 20
 * walks or 20,000 (docs/datasets.md "Only new pages"), never a scan of part files.
 */
import { FUTURE_SKEW_MS, keyOf, plausibleTimeOf, stableKeyOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import type { DatasetPaths } from './store.ts';
import { readWalkMarkFile } from './state.ts';
import { objectsIn } from './objects.ts';
import type { WalkState } from '../export/journal.ts';

/** A key the walk met near its mark, and that record's believable time (null: none). */
export type NearKey = [key: string, time: number | null];

/** A walk's state file (`DatasetNames.walkMark`). */
export interface WalkMark {
  version: 1;
  params: Record<string, string>;
  /** Unix ms. */
  mark: number;
  markTime: string;
  /** Keys of the records from `MARK_LAG_MS` below the mark on, and of those without a believable time. */
  near: NearKey[];
}

/**
 * At most this many keys a walk keeps near its mark, the newest: a later run meets the newest held
 * records first, so these are the ones that stop it (40 pages of 25). Kept small because the
 * walk's checkpoint carries them on every staged page. Fewer would never miss a record, only buy
 * pages until times prove them held.
 */
export const MAX_NEAR = 1_000;

/**
 * A writer's file (`_dataset/<op>/state-<writer>.json`): the last run it published complete. Its
 * `walks` held every walk's mark before walks kept their own (they are moved out when the dataset
 * is migrated, `rewrite.ts`); it is written empty now.
 */
export interface MarksFile {
  version: 1;
  operation: string;
  walks: Record<string, { params: Record<string, string>; mark: number; markTime: string }>;
  /** The last run (`ExportOptions.runId`) this writer published complete. */
  completedRun?: string;
  /** That run's records and pages, whoever staged them (a queue walk's total, however many workers it took). */
  completedTotals?: RunTotals;
}

/** What a writer's staging held in all when it was published complete: its records and pages over every attempt. */
export interface RunTotals {
  records: number;
  pages: number;
}

/**
 * How far below its mark a record's time is no proof by itself that the record is held: a post that
 * appears late (a moderation queue, a scheduled post, a clock a little behind) may carry a time just
 * under the mark. Such records count as held only when their key is in the dataset. A day covers the
 * clock skew `FUTURE_SKEW_MS` lets into a mark many times over.
 */
export const MARK_LAG_MS = 24 * 60 * 60 * 1000;

/**
 * How many records in a row at the end of a page prove a newest-first walk has crossed into what is
 * held (or older than `since`). One would let a single odd record decide; a whole page would buy a
 * page more on nearly every run (new posts seldom end at a page boundary). Five held records in a row
 * do not happen by chance among new posts: pinned posts sit at the top, and out-of-order ones are rare.
 */
export const EVIDENCE = 5;

/** Whether a page ends in `EVIDENCE` true flags in a row, or is all true when it is shorter (never when empty). */
export function endsIn(flags: readonly boolean[]): boolean {
  const needed = Math.min(EVIDENCE, flags.length);
  return needed > 0 && flags.slice(-needed).every(Boolean);
}

/** A recorded mark, unless it stands in the future: one record's bad time must not hide every later post. */
export function believed(mark: number | undefined, now: number): number | undefined {
  return mark !== undefined && mark <= now + FUTURE_SKEW_MS ? mark : undefined;
}

/** The state files of `walks` that have one (read one by one: each walk's alone). */
export async function readWalkMarks(paths: DatasetPaths, walks: readonly Readonly<Record<string, string>>[]): Promise<Map<string, WalkMark>> {
  const marks = new Map<string, WalkMark>();
  for (const params of walks) {
    const name = walkName(params);
    const mark = await readWalkMarkFile(paths, name);
    if (mark !== undefined) marks.set(name, mark);
  }
  return marks;
}

/** Every walk state file of the operation (for `dataset info`). */
export async function allWalkMarks(paths: DatasetPaths): Promise<WalkMark[]> {
  const folder = paths.names.walks;
  const names = await objectsIn(paths.storage, folder, (last) => last.endsWith('.json'));
  const marks: WalkMark[] = [];
  for (const name of names) {
    // `dataset info` names a damaged one rather than leaving its walk out.
    const mark = await readWalkMarkFile(paths, name.slice(folder.length, -'.json'.length));
    if (mark !== undefined) marks.push(mark);
  }
  return marks;
}

/**
 * Notes the keys of a page a newest-first walk met near its newest record (`walk.near`, kept in
 * its checkpoint so a resumed walk still has them), dropping those a day below it.
 */
export function noteNear(op: OperationSpec, walk: WalkState, records: readonly unknown[], now: number): void {
  const near = walk.near ?? [];
  for (const record of records) {
    const key = keyOf(op, record) ?? stableKeyOf(op, record, walk.params);
    if (key !== undefined) near.push([key, plausibleTimeOf(op, record, now) ?? null]);
  }
  walk.near = nearOf(near, walk.newest);
}

/** The keys from `MARK_LAG_MS` below `newest` on and those without a time, once each, newest first, at most `MAX_NEAR`. */
function nearOf(keys: readonly NearKey[], newest: number | undefined): NearKey[] {
  const from = newest === undefined ? -Infinity : newest - MARK_LAG_MS;
  const byKey = new Map<string, number | null>();
  for (const [key, time] of keys) if (time === null || time > from) byKey.set(key, time);
  const kept = [...byKey];
  if (kept.length <= MAX_NEAR) return kept;
  const rank = (time: number | null): number => time ?? Infinity;
  return kept.sort((a, b) => rank(b[1]) - rank(a[1])).slice(0, MAX_NEAR);
}

/**
 * A walk's state after a publish: a walk that is done moves its mark to its newest plausible
 * record in bounds (every record it covered is staged) and keeps the keys near it; one not done
 * keeps its old state (a gap would be skipped). A recorded mark in the future (written before times
 * were checked) is not kept. Undefined: nothing to record.
 */
export function nextWalkMark(old: WalkMark | undefined, walk: WalkState, now = Date.now()): WalkMark | undefined {
  if (!walk.done || walk.newest === undefined) return undefined;
  const mark = Math.max(walk.newest, believed(old?.mark, now) ?? -Infinity);
  return { version: 1, params: walk.params, mark, markTime: new Date(mark).toISOString(), near: nearOf([...(walk.near ?? []), ...(old?.near ?? [])], mark) };
}

/** The later of two states of one walk (two writers of one walk in one publish). */
export function laterMark(a: WalkMark | undefined, b: WalkMark): WalkMark {
  if (a === undefined) return b;
  const [later, other] = a.mark >= b.mark ? [a, b] : [b, a];
  return { ...later, near: nearOf([...later.near, ...other.near], later.mark) };
}
