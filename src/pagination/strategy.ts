/**
 * What every continuation strategy provides. A strategy's state is plain JSON (it goes into
 * checkpoints as it is): the continuation(s) still to fetch. `null` means the walk is over.
 */

/** Query parameters, as sent. */
export type Query = Record<string, string>;

/** Reads the records of a page. */
export type ListRecords = (body: unknown) => unknown[];

export interface PageRead<S> {
  records: unknown[];
  /** The state of the next page, or null when the walk ends with this page. */
  next: S | null;
}

export interface Strategy<S> {
  /** The state before the first page, from the checked query of the operation. */
  start(query: Query): S;
  /** The continuation parameters of the page `state` points at (none for the first page). */
  query(state: S): Query;
  /** The continuation value that page spends, for loop detection; undefined when it spends none. */
  spends(state: S): string | undefined;
  /** The records of a page and the state after it. */
  read(body: unknown, state: S): PageRead<S>;
  /** Whether `value` (from a checkpoint) is a state of this strategy. */
  isState(value: unknown): value is S;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
