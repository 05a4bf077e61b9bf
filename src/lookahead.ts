/**
 * How many pages a walk may hold bought and not yet read (`StreamOptions.lookahead`), and how many
 * records its reader still wants past the page it reads: the two numbers `PageReader.plan` is given
 * before each page is read, so a walk buys ahead only what its reader is likely to take.
 */
import type { LookaheadMode } from './stream-options.ts';

/**
 * Pages bought ahead may wait for their turn, at most this many per page in flight: enough for a tree
 * walk's top-level chain to run a few batches ahead of the records being read.
 */
const HELD_PER_REQUEST = 4;

/**
 * A cautious walk holds at most ⌊pages read / CAUTIOUS_GROWTH⌋ + CAUTIOUS_START pages bought and not
 * yet read (and no more than an eager one): a reader that stops at any record has paid for at most a
 * quarter more pages than it read, plus two, while one that reads on gets a window that grows by a
 * quarter of each round trip's pages. Its pages in flight stay within `concurrency` as ever; holding
 * only `concurrency` pages in all would cost a thread's frontier its lead (1.6-1.9x its critical path
 * rather than 1.3x in `bench/latency.ts`).
 */
const CAUTIOUS_START = 2;
const CAUTIOUS_GROWTH = 4;

/** Pages a walk may hold bought and not yet read, the page it is waiting for included. */
export function lookaheadWindow(mode: LookaheadMode, concurrency: number, pagesRead: number): number {
  const eager = concurrency * HELD_PER_REQUEST;
  return mode === 'eager' ? eager : Math.min(eager, Math.floor(pagesRead / CAUTIOUS_GROWTH) + CAUTIOUS_START);
}

/**
 * Records the reader still wants from the pages after the one it is reading (`Lookahead.wanted`):
 * `stop` is where it stops (the smaller of `limit` and what a `take(n)` below said), `out` what it
 * has taken, `leftInPage` what the current page still holds for it.
 */
export function recordsWanted(stop: number, out: number, leftInPage: number): number {
  return stop === Infinity ? Infinity : stop - out - leftInPage;
}
