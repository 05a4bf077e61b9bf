/**
 * A checkpoint is plain JSON that says where a walk stands: the operation, its (checked) params,
 * the continuation state of the first page not yet finished, and how many records of that page were
 * already yielded. A page is finished when all its records were yielded; resuming re-reads no
 * finished page. The key is never part of it: params are the operation's query parameters only.
 */

export interface Checkpoint {
  version: 1;
  /** Operation id, e.g. `forum/subforum`. */
  operation: string;
  /** The query parameters, as sent. */
  params: Record<string, string>;
  /** Continuation state of the next page to read (strategy-specific JSON); null when the walk is complete. */
  pending: unknown;
  /** Records of that page already yielded: a resumed walk skips them (it re-reads an unfinished page). */
  skip: number;
  /** Pages finished so far, over every run of this walk. */
  pagesDone: number;
  /** Records yielded so far, over every run of this walk. */
  recordsYielded: number;
}

/** Checks the shape of a checkpoint (as parsed from JSON), throwing `TypeError` naming the bad field. */
export function checkCheckpoint(value: unknown): Checkpoint {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('a checkpoint must be an object');
  const cp = value as Record<string, unknown>;
  if (cp.version !== 1) throw new TypeError(`checkpoint.version must be 1, got ${JSON.stringify(cp.version)}`);
  if (typeof cp.operation !== 'string') throw new TypeError('checkpoint.operation must be an operation id');
  const params = cp.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params) || !Object.values(params).every((v) => typeof v === 'string')) {
    throw new TypeError('checkpoint.params must be an object of strings');
  }
  for (const name of ['skip', 'pagesDone', 'recordsYielded'] as const) {
    const count = cp[name];
    if (!Number.isSafeInteger(count) || (count as number) < 0) throw new TypeError(`checkpoint.${name} must be a non-negative integer`);
  }
  if (!('pending' in cp)) throw new TypeError('checkpoint.pending is missing');
  return cp as unknown as Checkpoint;
}
