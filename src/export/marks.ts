/**
 * A dataset's high-water marks: per parameter set, the newest plausible record time it holds, and
 * the rules by which a newest-first walk of a later run knows it has reached what is held. A single
 * record never decides (a pinned post, a garbage time, one out of order): a page must end in
 * `EVIDENCE` held records in a row, a record being held by a time more than `MARK_LAG_MS` below the
 * mark or by its key already in the dataset (`heldKeys`).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FUTURE_SKEW_MS, PLAUSIBLE_FROM_MS } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import { PART_EXTENSION, type DatasetFormat } from '../../sinks/dataset-parts.ts';
import { partKeys, UNDATED, UNPARTITIONED, type DatasetPaths, type Partitioning } from './dataset-store.ts';
import type { WalkState } from './journal.ts';

/** The marks file of one writer (`_dataset/<op>/state-<writer>.json`). */
export interface MarksFile {
  version: 1;
  operation: string;
  walks: Record<string, { params: Record<string, string>; mark: number; markTime: string }>;
  /** The last run (`ExportOptions.runId`) this writer published complete. */
  completedRun?: string;
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

/**
 * The keys of the partitions a newest-first walk may meet again without a time that proves them
 * held: those from `MARK_LAG_MS` below the walks' lowest mark on, the undated one, and those
 * before `PLAUSIBLE_FROM_MS` (where garbage times such as -1 land). Every writer's parts: a record
 * is held whoever wrote it. Read once a run, before its first request.
 */
export async function heldKeys(
  paths: DatasetPaths,
  op: OperationSpec,
  marks: MarksFile,
  partitioning: Partitioning,
  format: DatasetFormat,
  stableKeyColumn: string,
): Promise<Set<string>> {
  const keys = new Set<string>();
  const now = Date.now();
  const believable = Object.values(marks.walks).flatMap((walk) => believed(walk.mark, now) ?? []);
  if (op.newestFirst === undefined || believable.length === 0) return keys;
  const from = Math.min(...believable) - MARK_LAG_MS;
  const root = join(paths.dir, ...op.id.split('/'));
  const prefix = `${partitioning.column}=`;
  const folders = await readdir(root).catch(() => [] as string[]);
  for (const folder of folders) {
    if (!folder.startsWith(prefix) || !mayHoldFrom(folder.slice(prefix.length), from)) continue;
    const files = await readdir(join(root, folder)).catch(() => [] as string[]);
    for (const file of files) {
      if (!file.startsWith('part-') || !file.endsWith(PART_EXTENSION[format])) continue;
      for (const key of await partKeys(join(root, folder, file), format, op.key, stableKeyColumn)) keys.add(key);
    }
  }
  return keys;
}

/**
 * The marks after a publish: a walk that is done moves its mark to its newest plausible record in
 * bounds (every record it covered is staged); one not done keeps its old mark (a gap would be
 * skipped). A recorded mark in the future (written before times were checked) is not kept.
 * `completedRun`: the run this publish completed, when the scheduler named it.
 */
export function nextMarks(marks: MarksFile, walks: readonly WalkState[], completedRun?: string): MarksFile {
  const next: MarksFile = { ...marks, walks: { ...marks.walks }, ...(completedRun === undefined ? {} : { completedRun }) };
  const now = Date.now();
  for (const walk of walks) {
    if (!walk.done || walk.newest === undefined) continue;
    const name = walkName(walk.params);
    const mark = Math.max(walk.newest, believed(next.walks[name]?.mark, now) ?? -Infinity);
    next.walks[name] = { params: walk.params, mark, markTime: new Date(mark).toISOString() };
  }
  return next;
}

/** Whether a partition (`2025`, `2025-11`, `2025-11-21`, or undated/all) may hold a record from `from` on, or one dated before any platform. */
function mayHoldFrom(partition: string, from: number): boolean {
  if (partition === UNDATED || partition === UNPARTITIONED) return true;
  const [year, month, day] = partition.split('-').map(Number);
  if (!Number.isInteger(year)) return true;
  const start = Date.UTC(year, (month ?? 1) - 1, day ?? 1);
  const end = day !== undefined ? Date.UTC(year, month - 1, day + 1) : month !== undefined ? Date.UTC(year, month, 1) : Date.UTC(year + 1, 0, 1);
  return end > from || start < PLAUSIBLE_FROM_MS;
}
