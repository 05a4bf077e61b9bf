/**
 * What every continuation strategy provides. A strategy's state is plain JSON (it goes into
 * checkpoints as it is): the continuation(s) still to fetch. `null` means the walk is over.
 * Strategies read the payload (`payloadOf`), with paths relative to it.
 */

/** Query parameters, as sent. */
export type Query = Record<string, string>;

/** Reads the records of a page's payload. */
export type ListRecords = (payload: unknown) => unknown[];

export interface PageRead<S> {
  records: unknown[];
  /** The state of the next page, or null when the walk ends with this page. */
  next: S | null;
  /**
   * A continuation the page offered that the rule does not follow and no end signal explains
   * (`cursor = "abc"`): the walk reports it rather than end short in silence.
   */
  ignored?: string;
  /**
   * `next` was chosen without the flag the rule reads (a trimmed body): follow it only if this walk
   * has not spent its value yet; one that came back ends the walk, reported, where a flag that says
   * more would make it a `PaginationLoopError`.
   */
  followIfNew?: boolean;
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
  /**
   * The state after `next` when the caller took the page's raw body (`pages()`) rather than its
   * records. Only a walk whose body holds more records than its page (the comment tree) needs it:
   * those records were handed out with the body and must not be yielded again.
   */
  bodyTaken?(next: S): S;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A continuation value as the service sends it: a non-empty string, or a number other than 0 (0 asks for the first page, E3). */
export function isCursor(value: unknown): value is string | number {
  return typeof value === 'string' ? value !== '' : typeof value === 'number' && Number.isFinite(value) && value !== 0;
}

/** `field = value`, for the report of a continuation the walk did not follow. */
export function described(field: string, value: unknown): string {
  return `${field} = ${JSON.stringify(value)?.slice(0, 80)}`;
}
