/**
 * What every continuation strategy provides. A strategy's state is plain JSON (it goes into
 * checkpoints as it is): the continuation(s) still to fetch. `null` means the walk is over.
 * Strategies read the payload (`payloadOf`), with paths relative to it.
 */
import { stringifyExact } from '../exact-json.ts';

export { isObject } from '../operations/extract.ts';

/** Query parameters, as sent. */
export type Query = Record<string, string>;

/**
 * Reads the records of a page's payload; `null` when the payload says `null` where they go: an empty
 * page to the walk, but one that must not end it in silence when a continuation stands beside it.
 */
export type ListRecords = (payload: unknown) => unknown[] | null;

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
  /**
   * The state after a page and how many records the page yields, without building them: `read`
   * cheaply, for strategies whose look-ahead reads held pages again and again (the comment tree).
   */
  follow?(body: unknown, state: S): Followed<S>;
  /** Whether `value` (from a checkpoint) is a state of this strategy. */
  isState(value: unknown): value is S;
  /**
   * The pages the walk reads from `state` on, as far as they are known without the answers before
   * them. A walk with page concurrency buys the first few at once (`src/page-reader.ts`). Strategies
   * whose every page needs the answer before it leave this out.
   */
  ahead?(state: S, look: Lookahead): PagesAhead;
  /**
   * The state after `next` when the caller took the page's raw body (`pages()`) rather than its
   * records. Only a walk whose body holds more records than its page (the comment tree) needs it:
   * those records were handed out with the body and must not be yielded again.
   */
  bodyTaken?(next: S): S;
}

/** What `Strategy.follow` tells of a page. */
export interface Followed<S> {
  next: S | null;
  /** Records the page yields (`read(body, state).records.length`). */
  records: number;
}

/** The pages a walk reads from a state on (`Strategy.ahead`). */
export interface PagesAhead {
  /** Their continuation queries, in the order the walk reads them; the first is `query(state)`. */
  queries: Query[];
  /**
   * How many of the first `queries` the walk is sure to read, given the records its caller still
   * wants (`Lookahead.wanted`): the pages after them may prove to lie past those records, so a walk
   * risks only a few of them at a time. All of them when the caller wants every record.
   */
  needed: number;
  /**
   * The last of `queries` is the frontier of the walk's longest chain of dependent pages (a comment
   * tree's next top-level `more`: its answer holds the cursors of every page after it), so it is
   * bought right after the page read now, ahead of the pages between. Only said when the list runs
   * to it: a list cut short ends on an ordinary page.
   */
  frontier?: boolean;
}

/** What a strategy may consult to list the pages ahead of a state. */
export interface Lookahead {
  /** The body of a page already bought ahead, by its continuation query; undefined until it arrived. */
  held(query: Query): unknown;
  /** The body of the page read just before `state`'s (undefined before the first page of a run). */
  last: unknown;
  /**
   * Records the caller still wants from the pages `state` on (its `limit`, or a `take(n)` below it,
   * less what it has taken and what the page it is reading still holds); Infinity when it wants
   * them all. Always at least 1: a walk that wants none lists nothing.
   */
  wanted: number;
  /** The caller accepts buying pages past the end (`overfetch`): for walks whose end is only seen on arrival. */
  overfetch: boolean;
  /** List at most this many. */
  max: number;
  /**
   * Pages the walk may still read (its `maxPages`); Infinity when unbounded. List only pages certain to
   * be among them: a page whose place in the order depends on answers not yet come is left out.
   */
  within: number;
}

/**
 * A continuation value as the service sends it: a non-empty string, or a number other than 0 (0 asks
 * for the first page, E3), or an integer past 2^53 (a `bigint`, sent back with the same digits).
 */
export function isCursor(value: unknown): value is string | number | bigint {
  if (typeof value === 'bigint') return true;
  return typeof value === 'string' ? value !== '' : typeof value === 'number' && Number.isFinite(value) && value !== 0;
}

/** Whether `value` says there is nothing there: absent, `null`, `""`, `0` or `false` (an end, where a continuation goes). */
export function isNothing(value: unknown): boolean {
  return value === undefined || value === null || value === '' || value === 0 || value === false;
}

/**
 * Whether `value`, found where a continuation goes, is something other than a cursor or an end
 * (`isNothing`): an object, an array, `true`, a number that is no cursor. A walk cannot follow it
 * and must not take it for an end.
 */
export function isStrange(value: unknown): boolean {
  return !isNothing(value) && !isCursor(value);
}

/** `field = value`, for the report of a continuation the walk did not follow. */
export function described(field: string, value: unknown): string {
  // A cursor may echo anything (the key included) and be megabytes long: a short prefix says enough.
  const text = stringifyExact(value) ?? String(value);
  return `${field} = ${text.length <= 10 ? text : `${text.slice(0, 9)}…`}`;
}
