/**
 * The partitionings of a dataset (docs/datasets.md, "Hive layout, record time"), finest first: the one
 * list that the options, the CLI's help, compaction and `dataset info` read.
 */

/** How finely a dataset's part files split by their records' own time. */
export type PartitionBy = 'day' | 'month' | 'year' | 'none';

/** Finest first. (The type spells the same values, so the API docs show them.) */
export const PARTITION_BYS: readonly PartitionBy[] = ['day', 'month', 'year', 'none'];

/**
 * By month: a feed of a few posts a day makes a part file a month instead of one per post-day (a
 * subforum whose 988 posts span five years was 972 files by day, 60 by month), and a run merges
 * into one month's part, not a year's.
 */
export const DEFAULT_PARTITION_BY: PartitionBy = 'month';

export function isPartitionBy(value: unknown): value is PartitionBy {
  return (PARTITION_BYS as readonly unknown[]).includes(value);
}

/** The next coarser partitioning (`day` → `month`), or undefined after `none`. */
export function coarserThan(by: PartitionBy): PartitionBy | undefined {
  return PARTITION_BYS[PARTITION_BYS.indexOf(by) + 1];
}

/** Whether `by` puts together what `than` keeps apart, or keeps it as `than` does: compaction can only merge. */
export function atLeastAsCoarse(by: PartitionBy, than: PartitionBy): boolean {
  return PARTITION_BYS.indexOf(by) >= PARTITION_BYS.indexOf(than);
}
