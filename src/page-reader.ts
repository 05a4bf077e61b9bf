/**
 * Reads the pages of one walk, buying some ahead when its continuation rule knows them before the
 * answers come (`Strategy.ahead`: comment-tree branches, page numbers with a known end). The walk
 * still reads its pages one at a time and in its own order; a page bought ahead waits here until the
 * walk reaches it, so records come out exactly as in a walk without concurrency.
 *
 * At most `concurrency` pages are bought and not yet read (in flight or arrived), so memory stays
 * bounded by a few pages. Every purchase goes through the requester like any other: the client's
 * slots and every gate (throttle, credit caps) are asked before each attempt, and the walk's signal
 * ends the requests in flight.
 */
import type { PagesAhead, Query } from './pagination/index.ts';
import { STOPPED } from './requester.ts';

/**
 * Pages bought that the walk may not read (its caller wants only so many records, and the pages
 * before them have not answered yet) held at once: enough to keep a page in flight behind the one
 * being read, few enough that stopping where the caller said costs at most this many pages.
 */
export const SPECULATIVE_PAGES = 2;

/** Buys one page: its parsed body, `STOPPED` when a gate refused, or a rejection with the typed error. */
export type BuyPage = (query: Query) => Promise<unknown>;

/**
 * Where a walk keeps the pages it bought ahead of their turn, so that a crash never makes a later
 * run pay for a page the service already answered: the export engine stages each one durably as it
 * arrives, and hands the staged ones back to the resumed walk, which reads them instead of buying.
 */
export interface HeldPages {
  /** The body of the page at `query` that an earlier run bought and never read, if there is one. */
  take(query: Query): unknown;
  /** A page bought ahead of its turn arrived, before the walk reached it. */
  hold(query: Query, body: unknown): void;
}

interface Purchase {
  promise: Promise<unknown>;
  /** The answer came: a body, a refusal or a failure. */
  settled: boolean;
  /** The body, once it arrived (STOPPED and failures are never held). */
  body?: unknown;
  /** The walk is waiting for it: it arrives in its turn, not ahead of it. */
  awaited: boolean;
}

export class PageReader {
  readonly #buy: BuyPage;
  readonly #arrived: () => void;
  readonly #held: HeldPages | undefined;
  /** Pages bought and not yet read, by query. */
  readonly #bought = new Map<string, Purchase>();
  #inFlight = 0;
  /** False from `settle()` until the next `read()`: a walk that is stopping buys nothing new. */
  #open = true;
  /** Pages that land together are planned from once, after the last of them. */
  #planning = false;

  /**
   * `arrived` is called whenever a page bought ahead arrives, so the walk can plan further: the
   * answer may hold cursors, and a request slot is free again.
   */
  constructor(buy: BuyPage, arrived: () => void, held?: HeldPages) {
    this.#buy = buy;
    this.#arrived = arrived;
    this.#held = held;
  }

  /**
   * Starts buying `queries` (the pages the walk reads next, in its order; the first is the one it
   * reads now) that are not bought yet, keeping at most `concurrency` in flight and `window` bought and
   * unread. The page read now comes first, and one place in flight is always left for it, so it never
   * waits behind pages bought ahead. Next comes the frontier of the walk's longest chain, when the list
   * reaches it (in a comment tree, the next top-level `more`, whose answer holds the next batch's
   * cursors). The rest follow in reading order, so the pages needed soonest are bought first.
   *
   * Only the first `needed` queries are sure to be read (the caller wants only so many records); of
   * the pages bought and not among them, at most `SPECULATIVE_PAGES` are held at any moment, so a walk
   * that stops where its caller said it would has paid for at most that many pages it never read.
   */
  plan({ queries, needed, frontier }: PagesAhead, concurrency: number, window: number): void {
    if (!this.#open || queries.length === 0) return;
    const [now, ...ahead] = queries;
    const current = this.#bought.get(keyOf(now)) ?? this.#start(keyOf(now), now);
    const limit = current.settled ? concurrency - 1 : concurrency;
    const sure = ahead.slice(0, Math.max(0, needed - 1));
    const order = frontier === true && sure.length > 1 ? [sure[sure.length - 1], ...sure.slice(0, -1)] : sure;
    // Keys of the pages sure to be read, worked out only when some listed page is not.
    const sureKeys = needed < queries.length ? new Set(queries.slice(0, Math.max(1, needed)).map(keyOf)) : undefined;
    let speculative = sureKeys === undefined ? 0 : [...this.#bought.keys()].filter((key) => !sureKeys.has(key)).length;
    for (const query of [...order, ...ahead.slice(sure.length)]) {
      if (this.#inFlight >= limit || this.#bought.size >= window) return;
      const key = keyOf(query);
      if (this.#bought.has(key)) continue;
      if (sureKeys !== undefined && !sureKeys.has(key) && speculative++ >= SPECULATIVE_PAGES) return;
      this.#start(key, query);
    }
  }

  /**
   * The page at `query`: the one bought ahead, or bought now. It stays here (so it is not bought
   * twice) until it has arrived; then the walk has it, and it is no longer held here.
   */
  read(query: Query): Promise<unknown> {
    this.#open = true;
    const key = keyOf(query);
    const purchase = this.#bought.get(key) ?? this.#start(key, query);
    purchase.awaited = true;
    const taken = (): void => {
      if (this.#bought.get(key) === purchase) this.#bought.delete(key);
    };
    return purchase.promise.finally(taken);
  }

  /** The body of a page bought ahead that has arrived, by its query. */
  held(query: Query): unknown {
    return this.#bought.get(keyOf(query))?.body;
  }

  /** Waits until no purchase is in flight (each has arrived, failed or been refused). */
  async settle(): Promise<void> {
    this.#open = false;
    await Promise.allSettled([...this.#bought.values()].map((purchase) => purchase.promise));
  }

  /** Drops every page bought ahead, returning the bodies that had arrived: the walk will never read them. */
  drop(): unknown[] {
    const bodies = [...this.#bought.values()].flatMap((purchase) => (purchase.body === undefined ? [] : [purchase.body]));
    this.#bought.clear();
    return bodies;
  }

  #planSoon(): void {
    if (this.#planning) return;
    this.#planning = true;
    setImmediate(() => {
      this.#planning = false;
      if (this.#open) this.#arrived();
    });
  }

  #start(key: string, query: Query): Purchase {
    const staged = this.#held?.take(query);
    const purchase: Purchase = { promise: staged === undefined ? this.#buy(query) : Promise.resolve(staged), settled: false, awaited: false };
    this.#inFlight++;
    purchase.promise.then(
      (body) => {
        this.#inFlight--;
        purchase.settled = true;
        if (body !== STOPPED) {
          purchase.body = body;
          if (!purchase.awaited && staged === undefined) this.#held?.hold(query, body);
        }
        this.#planSoon();
      },
      // A failure is the walk's to report when it reaches that page; until then it must not go unhandled.
      () => {
        this.#inFlight--;
        purchase.settled = true;
      },
    );
    this.#bought.set(key, purchase);
    return purchase;
  }
}

function keyOf(query: Query): string {
  return JSON.stringify(Object.entries(query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
