/**
 * What a caller may ask of one walk (`StreamOptions`), checked once when the stream is made: a bad
 * value is a `TypeError` naming it, before any request.
 */
import { refuseUnknownOptions, type KnownOptions } from './known-options.ts';

/** What a caller may ask of one walk: a limit on its records or pages, a signal, and how its pages are fetched. */
export interface StreamOptions {
  /** Yield at most this many records (pages stop being read once it is reached). */
  limit?: number;
  /** Read at most this many pages. */
  maxPages?: number;
  /** Aborting ends the walk at once, with the signal's reason, and every request of it in flight. */
  signal?: AbortSignal;
  /**
   * Pages of this walk in flight at once, where its continuation rule knows them before the answers
   * come: comment-tree branches, page numbers once a page tells the total. Records still come in the
   * walk's order, and the client's `maxConcurrentRequests` still caps all requests. 1 reads one page
   * at a time. Default 16 (`DEFAULT_PAGE_CONCURRENCY`).
   */
  concurrency?: number;
  /**
   * Web search (page numbers whose end shows only as an empty page): buy pages ahead up to the rule's
   * last page anyway, paying for up to `concurrency - 1` empty pages past the end (`stats.overfetched`).
   * Default false: one page at a time, no waste.
   */
  overfetch?: boolean;
  /**
   * How far ahead of its reader the walk buys the pages it knows. A page bought and never read is a
   * credit paid for nothing (`stats.overfetchedPages`, the `overfetch` event). Pages in flight stay
   * within `concurrency` either way.
   * - `'cautious'` (default): for a `for await` loop, which may stop at any record. What is at risk
   *   grows with what the reader has taken: pages bought and not yet read stay at most
   *   ⌊pages read / 4⌋ + 2 (2 at the start, 4 after 8 pages read, 10 after 32; never more than
   *   `'eager'` holds), so a `break` costs at most a quarter more pages than were read, plus 2. A
   *   2,000-comment thread read to its end takes about 1.3× its critical path (eager: 1.1×).
   * - `'eager'`: for readers that read every page (an export): up to `concurrency` pages in flight
   *   from the first answer on, and up to 4 × `concurrency` bought and waiting to be read.
   *
   * Either way, `limit` and a `take(n)` below the stream tell the walk how many records will be
   * read: it buys no page it knows to lie past them, and holds at most 2 that may.
   * @example client.forum.postComments({ url }, { lookahead: 'eager' }) // read to the end, as fast as it goes
   */
  lookahead?: LookaheadMode;
}

/** How far ahead of its reader a walk buys pages (`StreamOptions.lookahead`). */
export type LookaheadMode = 'eager' | 'cautious';

/**
 * A forum thread's longest chain of dependent requests is about a tenth of all its requests (its
 * top-level `more` cursors, one after another), so a walk needs about ten pages in flight to go at
 * the speed of that chain rather than of its total; 16 leaves headroom, and reads a known-total walk
 * of up to 17 pages in two round trips. Pages of one walk never take more than the client's
 * `maxConcurrentRequests` (default 8) anyway; raise that to let a single walk use all 16.
 */
const DEFAULT_PAGE_CONCURRENCY = 16;

/** `StreamOptions` checked, with their defaults (the signal travels separately, combined with the client's). */
export interface WalkSettings {
  limit: number;
  maxPages: number;
  concurrency: number;
  overfetch: boolean;
  lookahead: LookaheadMode;
}

const STREAM_OPTIONS = { limit: true, maxPages: true, signal: true, concurrency: true, overfetch: true, lookahead: true } as const satisfies KnownOptions<StreamOptions>;

export function checkStreamOptions(options: StreamOptions): WalkSettings {
  refuseUnknownOptions(options, STREAM_OPTIONS, 'a walk (client.<group>.<operation>)');
  const { limit = Infinity, maxPages = Infinity, concurrency = DEFAULT_PAGE_CONCURRENCY, overfetch = false, lookahead = 'cautious' } = options;
  checkCount('limit', limit);
  checkCount('maxPages', maxPages);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError(`concurrency must be a positive integer, got ${String(concurrency)}`);
  if (typeof overfetch !== 'boolean') throw new TypeError(`overfetch must be a boolean, got ${String(overfetch)}`);
  if (lookahead !== 'eager' && lookahead !== 'cautious') throw new TypeError(`lookahead must be 'eager' or 'cautious', got ${String(lookahead)}`);
  return { limit, maxPages, concurrency, overfetch, lookahead };
}

function checkCount(name: string, value: number): void {
  if (value !== Infinity && (!Number.isSafeInteger(value) || value < 0)) {
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
}
