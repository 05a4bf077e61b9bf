/**
 * What the dataset says of a walk's run: whether the walk's writer (`walk-<walkName>`) published the
 * queue run complete, and its records and pages over every worker that staged them. The dataset is
 * the truth a walk's end is counted by: a walk whose run is published is done, whoever published it
 * and whatever error a worker met after; only one whose run is not in the dataset can fail.
 */
import { readMarksFile } from '../dataset/state.ts';
import type { DatasetStores } from '../dataset/stores.ts';
import type { RunTotals } from '../dataset/marks.ts';
import { runIdOf, type WalkJob } from './runs.ts';

export interface PublishedWalk {
  /** Absent when the run was recorded by a version that did not keep them. */
  totals?: RunTotals;
}

/** The walk's run as the dataset recorded it published complete; undefined while it is not (or its record cannot be read). */
export async function publishedWalk(job: WalkJob, stores: DatasetStores): Promise<PublishedWalk | undefined> {
  const paths = await stores.paths(job.dataset, job.op, `walk-${job.walk}`);
  const recorded = await readMarksFile(paths).catch(() => undefined);
  // The engine records a run as its id and a digest of its walks (`<runId>#<digest>`).
  if (recorded?.completedRun?.startsWith(`${runIdOf(job)}#`) !== true) return undefined;
  return recorded.completedTotals === undefined ? {} : { totals: recorded.completedTotals };
}
