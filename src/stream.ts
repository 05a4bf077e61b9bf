/**
 * The record stream an operation returns. `for await` yields records across every page;
 * `pages()` yields the raw bodies; `checkpoint()` says where the walk stands at any moment.
 * Iterating again continues where the last iteration stopped. The stream carries a
 * `StreamControl`, so operators can put gates (throttle, credit caps) in front of its requests.
 */
import type { Observable } from 'rxjs';
import type { Checkpoint } from './checkpoint.ts';
import { type Controlled, type RequestGate, STREAM_CONTROL, type StreamControl } from './control.ts';
import { PaginationLoopError, ResponseFormatError, SocialstreamError, StreamUsedError } from './errors.ts';
import type { ClientEvent, Meter } from './metering.ts';
import type { OperationSpec } from './operations/spec.ts';
import { keyOf } from './operations/record-meta.ts';
import { PageReader, type HeldPages } from './page-reader.ts';
import type { Query, Strategy } from './pagination/index.ts';
import { keptOrDigest, REPEATED_PAGES_LIMIT, RepeatedPages } from './pagination/repeats.ts';
import { creditsOf, type Requester, STOPPED } from './requester.ts';

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

/** Where a walk starts: the beginning, or a checkpoint's position. */
export interface WalkStart {
  pending: unknown;
  skip: number;
  pagesDone: number;
  recordsYielded: number;
}

interface Page {
  /** The state that fetched it. */
  state: unknown;
  body: unknown;
  records: unknown[];
  next: unknown;
}

export interface StreamParts {
  op: OperationSpec;
  /**
   * Opens another walk of the same operation and params (or `query`, params another stream of the
   * client already checked), from `start` (the beginning when undefined).
   */
  reopen(start: Checkpoint | undefined, options: StreamOptions, held?: HeldPages, query?: Record<string, string>): RecordStream<unknown>;
  /** Pages an earlier run bought ahead and staged, and where this walk stages the ones it buys ahead. */
  held?: HeldPages;
  /** The client's key out of a text, in every form a service might echo it in (`keyScrubber`). */
  readonly scrub: (text: string) => string;
  query: Record<string, string>;
  strategy: Strategy<unknown>;
  requester: Requester;
  meter: Meter;
  /** The client's signal and the stream's, already combined. */
  signal: AbortSignal | undefined;
}

/** One page of a walk as records, with where the walk stands once they are kept (`RecordStream.pageBatches`). */
export interface PageBatch<R> {
  /** The page's records not handed out before (all of them, unless a resumed walk had taken some). */
  records: R[];
  /** Where the walk stands once every one of `records` is kept. */
  checkpoint: Checkpoint;
  /** Where the walk stands once only the first `count` of `records` are kept (a limit cut the page). */
  checkpointAfter(count: number): Checkpoint;
  /** The walk has nothing left to fetch: its rule ended it. */
  last: boolean;
}

/**
 * What the export engine needs of a client stream beyond iterating it, under a symbol so it stays
 * off the stream's public surface: which walk it is, whether it was iterated, and a way to walk it
 * again from a checkpoint with the engine's own options.
 */
export const WALK: unique symbol = Symbol.for('socialstream.walk');

export interface Walk {
  readonly op: OperationSpec;
  readonly params: Readonly<Record<string, string>>;
  /** The stream has been iterated (in any way): its walk is no longer at its start. */
  readonly used: boolean;
  /** The client's events: pages, retries, errors and ignored continuations of every walk it runs. */
  readonly events$: Observable<ClientEvent>;
  /** The client's key out of a text: what an export stages never holds it. */
  readonly scrub: (text: string) => string;
  open(start: Checkpoint | undefined, options: StreamOptions, held?: HeldPages): RecordStream<unknown>;
  /**
   * Opens a walk of the same operation with `params` another stream of the same client was given
   * (and checked): a wide export keeps one walk and the params of the others, not every stream.
   */
  openWith(params: Readonly<Record<string, string>>, start: Checkpoint | undefined, options: StreamOptions, held?: HeldPages): RecordStream<unknown>;
}

export class RecordStream<R, P = unknown> implements AsyncIterable<R>, Controlled {
  readonly [STREAM_CONTROL]: StreamControl;
  /** The operation id. */
  readonly operation: string;

  readonly #parts: StreamParts;
  readonly #limit: number;
  readonly #maxPages: number;
  readonly #concurrency: number;
  readonly #overfetch: boolean;
  readonly #lookahead: LookaheadMode;
  readonly #reader: PageReader;
  readonly #gates: RequestGate[] = [];
  /** Digests of the continuation values this walk has spent (a cursor may be megabytes): one coming back means a loop. */
  readonly #spent = new Set<string>();
  /** Pages this walk read, by content: ever-new cursors over the same pages mean a loop too. */
  readonly #repeats: RepeatedPages;
  /** State of the next page to fetch once `#page` is done; null when there is none. */
  #pending: unknown;
  #skip: number;
  #page: Page | undefined;
  /**
   * The body of the page read last: where a known-total walk learns how many pages there are. Kept
   * only for walks that look ahead: held while the next body is parsed, it would survive the young
   * generation's collections and be copied and promoted, page after page (a third of a walk's GC).
   */
  #lastBody: unknown;
  #yieldedInPage = 0;
  #pagesDone: number;
  #recordsYielded: number;
  #pagesRead = 0;
  #recordsOut = 0;
  /** `#recordsOut` at which the current iteration's reader said it stops (`readAtMost`, e.g. `take(n)`). */
  #readUpTo = Infinity;
  #busy = false;
  /** Iterated at least once, in any way. */
  #started = false;
  /** An ignored continuation is reported once per walk. */
  #reportedIgnored = false;

  constructor(parts: StreamParts, start: WalkStart, options: StreamOptions = {}) {
    const { limit = Infinity, maxPages = Infinity, concurrency = DEFAULT_PAGE_CONCURRENCY, overfetch = false, lookahead = 'cautious' } = options;
    checkCount('limit', limit);
    checkCount('maxPages', maxPages);
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError(`concurrency must be a positive integer, got ${String(concurrency)}`);
    if (typeof overfetch !== 'boolean') throw new TypeError(`overfetch must be a boolean, got ${String(overfetch)}`);
    if (lookahead !== 'eager' && lookahead !== 'cautious') throw new TypeError(`lookahead must be 'eager' or 'cautious', got ${String(lookahead)}`);
    this.#parts = parts;
    this.#repeats = new RepeatedPages((record) => keyOf(parts.op, record));
    this.#limit = limit;
    this.#maxPages = maxPages;
    this.#concurrency = concurrency;
    this.#overfetch = overfetch;
    this.#lookahead = lookahead;
    const { op, requester, query, signal } = parts;
    this.#reader = new PageReader(
      (page) => requester.send({ endpoint: op.id, path: op.path, query: { ...query, ...page }, chargeable: true }, this.#gates, signal),
      () => this.#planAhead(),
      parts.held,
    );
    this.operation = parts.op.id;
    this.#pending = start.pending;
    this.#skip = start.skip;
    this.#pagesDone = start.pagesDone;
    this.#recordsYielded = start.recordsYielded;
    this[STREAM_CONTROL] = {
      addGate: (gate) => {
        this.#gates.push(gate);
      },
      report: (event) => parts.meter.operator(event),
      readAtMost: (records) => {
        if (typeof records !== 'number' || !(records >= 0)) throw new TypeError(`readAtMost: records must be a number ≥ 0, got ${String(records)}`);
        this.#readUpTo = Math.min(this.#readUpTo, this.#recordsOut + records);
      },
    };
  }

  get [WALK](): Walk {
    const parts = this.#parts;
    const used = (): boolean => this.#started;
    return {
      op: parts.op,
      params: parts.query,
      get used() {
        return used();
      },
      events$: parts.meter.events$,
      scrub: parts.scrub,
      open: (start, options, held) => parts.reopen(start, options, held),
      openWith: (params, start, options, held) => parts.reopen(start, options, held, { ...params }),
    };
  }

  /**
   * A hand-written iterator rather than an async generator: records of a page already read are
   * handed out through resolved promises, which keeps the per-record cost close to a plain loop.
   */
  [Symbol.asyncIterator](): AsyncIterator<R> {
    let entered = false;
    let finished = false;
    let inflight: Promise<IteratorResult<R>> | undefined;
    const finish = (): IteratorResult<R> => {
      if (entered && !finished) {
        this.#busy = false;
        this.#readUpTo = Infinity;
      }
      finished = true;
      return DONE;
    };
    const step = (): IteratorResult<R> | Promise<IteratorResult<R>> => {
      const page = this.#page;
      if (page !== undefined && this.#yieldedInPage < page.records.length) {
        if (this.#recordsOut >= this.#limit) return this.#ended().then(finish);
        this.#parts.signal?.throwIfAborted();
        const value = page.records[this.#yieldedInPage++] as R;
        this.#recordsYielded++;
        this.#recordsOut++;
        this.#parts.meter.records(1);
        return { done: false, value };
      }
      if (page !== undefined) this.#finishPage(page);
      return this.#nextPage().then((next) => (next === undefined ? finish() : step()));
    };
    const next = (): Promise<IteratorResult<R>> => {
      if (finished) return Promise.resolve(DONE);
      if (inflight !== undefined) return inflight.then(next);
      if (!entered) {
        try {
          this.#enter();
        } catch (error) {
          return Promise.reject(error);
        }
        entered = true;
      }
      try {
        const result = step();
        if (!(result instanceof Promise)) return Promise.resolve(result);
        inflight = result.then(
          (value) => {
            inflight = undefined;
            return value;
          },
          // Pages bought ahead land (an abort ends them at once) and are reported before the error is.
          (error: unknown) =>
            this.#ended().then(() => {
              inflight = undefined;
              finish();
              throw error;
            }),
        );
        return inflight;
      } catch (error) {
        return this.#ended().then(() => {
          finish();
          throw error;
        });
      }
    };
    // Like an async generator, `return()` waits for a page read in flight to settle, and for the pages
    // bought ahead, so a caller that stops (e.g. `mergeMap` after a `break`) knows no request of this
    // stream is still running. Those pages are then dropped and reported: a stopped reader may never
    // come back, and one that does buys them again (as a resume from the checkpoint would).
    const stop = (): Promise<IteratorResult<R>> =>
      (inflight ?? Promise.resolve())
        .then(() => (entered && !finished ? this.#ended() : undefined))
        .then(finish, finish);
    return { next, return: stop };
  }

  /** The raw page bodies, as sent (keyed collections kept). Each page counts as finished once yielded. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    this.#enter();
    try {
      while (true) {
        const page = this.#page ?? (await this.#nextPage());
        if (page === undefined) return;
        const fresh = page.records.length - this.#yieldedInPage;
        this.#yieldedInPage = page.records.length;
        this.#recordsYielded += fresh;
        this.#recordsOut += fresh;
        this.#parts.meter.records(fresh);
        this.#finishPage(page, true);
        yield page.body as P;
      }
    } finally {
      await this.#ended();
      this.#busy = false;
      this.#readUpTo = Infinity;
    }
  }

  /**
   * The walk a page at a time: each page's records with the checkpoint right after them, so a caller
   * that keeps whole pages (an export staging them) never works out page boundaries itself. The next
   * page is requested only when the caller asks for the next batch.
   */
  async *pageBatches(): AsyncGenerator<PageBatch<R>, void, undefined> {
    this.#enter();
    try {
      while (true) {
        const page = this.#page ?? (await this.#nextPage());
        if (page === undefined) return;
        const from = this.#yieldedInPage;
        const records = (from === 0 ? page.records : page.records.slice(from)) as R[];
        const before = { pagesDone: this.#pagesDone, recordsYielded: this.#recordsYielded };
        this.#yieldedInPage = page.records.length;
        this.#recordsYielded += records.length;
        this.#recordsOut += records.length;
        this.#parts.meter.records(records.length);
        this.#finishPage(page);
        const checkpoint = this.checkpoint();
        const checkpointAfter = (count: number): Checkpoint =>
          count >= records.length
            ? checkpoint
            : { ...checkpoint, pending: page.state, skip: from + count, pagesDone: before.pagesDone, recordsYielded: before.recordsYielded + count };
        yield { records, checkpoint, checkpointAfter, last: checkpoint.pending === null };
      }
    } finally {
      await this.#reader.settle();
      this.#busy = false;
    }
  }

  /** Where the walk stands, as plain JSON for `client.resume()`. */
  checkpoint(): Checkpoint {
    const page = this.#page;
    const done = page !== undefined && this.#yieldedInPage >= page.records.length;
    return {
      version: 1,
      operation: this.operation,
      params: { ...this.#parts.query },
      pending: page === undefined ? this.#pending : done ? page.next : page.state,
      skip: page === undefined ? this.#skip : done ? 0 : this.#yieldedInPage,
      pagesDone: this.#pagesDone + (done ? 1 : 0),
      recordsYielded: this.#recordsYielded,
    };
  }

  /** Reads the next page, or resolves undefined when the walk is over (end, limit, maxPages, or a gate said no). */
  async #nextPage(): Promise<Page | undefined> {
    const state = this.#pending;
    if (state === null || this.#recordsOut >= this.#limit || this.#pagesRead >= this.#maxPages) return this.#ended();
    const { op, strategy, meter, signal } = this.#parts;
    signal?.throwIfAborted();
    const value = strategy.spends(state);
    const spends = value === undefined ? undefined : digestOf(value);
    if (spends !== undefined && this.#spent.has(spends)) {
      throw this.#failed(
        new PaginationLoopError(
          `${op.id}: the continuation value ${preview(value!)} came back after it was already used; stopping instead of reading the same pages again`,
          { endpoint: op.id },
        ),
      );
    }
    let body;
    try {
      body = await this.#read(state);
    } catch (error) {
      // Pages bought ahead still land (an abort ends them at once), so no request outlives the walk.
      await this.#reader.settle();
      throw error;
    }
    if (body === STOPPED) return this.#ended();
    if (typeof body !== 'object' || body === null || (body as { success?: unknown }).success !== true) {
      throw this.#failed(new ResponseFormatError(`${op.id}: the response is not a success envelope`, { endpoint: op.id, status: 200 }));
    }
    let read;
    try {
      read = strategy.read(body, state);
    } catch (error) {
      throw error instanceof SocialstreamError ? this.#failed(error) : error;
    }
    if (spends !== undefined) this.#spent.add(spends);
    if (this.#repeats.repeated(read.records)) {
      throw this.#failed(
        new PaginationLoopError(
          `${op.id}: ${REPEATED_PAGES_LIMIT} pages in a row repeated records of earlier pages under new continuation values; stopping instead of buying more of them`,
          { endpoint: op.id },
        ),
      );
    }
    this.#pagesRead++;
    if (this.#parts.strategy.ahead !== undefined) this.#lastBody = body;
    meter.page(op.id, read.records.length, creditsOf(body, true));
    let { next, ignored } = read;
    // A continuation is sent back and kept in checkpoints: one that echoes the key is refused, never stored.
    if (next !== null && typeof next !== 'number' && holdsKey(next, this.#parts.scrub)) {
      throw this.#failed(new ResponseFormatError(`${op.id}: the service sent a continuation value that holds the API key; refusing to send it back or store it`, { endpoint: op.id, status: 200 }));
    }
    const again = next !== null && read.followIfNew === true ? strategy.spends(next) : undefined;
    if (again !== undefined && this.#spent.has(digestOf(again))) {
      ignored ??= `${preview(again)} came back in a body without its has-more flag`;
      next = null;
    }
    if (ignored !== undefined && !this.#reportedIgnored) {
      this.#reportedIgnored = true;
      meter.ignoredContinuation(op.id, ignored);
    }
    const page: Page = { state, body, records: read.records, next };
    this.#page = page;
    this.#yieldedInPage = Math.min(this.#skip, read.records.length);
    this.#skip = 0;
    return page;
  }

  /** The body of the page at `state`, buying the pages known ahead of it first, up to the walk's concurrency. */
  #read(state: unknown): Promise<unknown> {
    this.#planAhead(state);
    return this.#reader.read(this.#parts.strategy.query(state));
  }

  /**
   * Buys the pages known ahead of `state` (by default, of the page the walk reads next), within the
   * walk's window. Called before each page is read and whenever a page bought ahead arrives.
   */
  #planAhead(state: unknown = this.#page === undefined ? this.#pending : this.#page.next): void {
    const { strategy } = this.#parts;
    const window = Math.min(this.#window(), this.#maxPages - this.#pagesRead);
    const wanted = this.#wanted();
    if (state !== null && this.#concurrency > 1 && window > 1 && wanted > 0 && strategy.ahead !== undefined) {
      const look = {
        held: (query: Query) => this.#reader.held(query),
        last: this.#lastBody,
        wanted,
        overfetch: this.#overfetch,
        max: window,
        within: this.#maxPages - this.#pagesRead,
      };
      this.#reader.plan(strategy.ahead(state, look), this.#concurrency, window);
    }
  }

  /** Pages this walk may hold bought and not yet read, the page it is waiting for included. */
  #window(): number {
    if (this.#lookahead === 'eager') return this.#concurrency * HELD_PER_REQUEST;
    return Math.min(this.#concurrency * HELD_PER_REQUEST, Math.floor(this.#pagesRead / CAUTIOUS_GROWTH) + CAUTIOUS_START);
  }

  /** Records the reader still wants from the pages after the one it is reading (`Lookahead.wanted`). */
  #wanted(): number {
    const stop = Math.min(this.#limit, this.#readUpTo);
    if (stop === Infinity) return Infinity;
    const page = this.#page;
    return stop - this.#recordsOut - (page === undefined ? 0 : page.records.length - this.#yieldedInPage);
  }

  /** The walk is over: pages still bought ahead will never be read, and what they cost is reported. */
  async #ended(): Promise<undefined> {
    await this.#reader.settle();
    const unread = this.#reader.drop();
    if (unread.length > 0) {
      const credits = unread.reduce<number>((sum, body) => sum + creditsOf(body, true), 0);
      this.#parts.meter.overfetched(this.operation, unread.length, credits);
    }
    return undefined;
  }

  /** Reports an error the walk itself found (the requester reports the ones from answers). */
  #failed(error: SocialstreamError): SocialstreamError {
    this.#parts.meter.error(this.operation, error);
    return error;
  }

  /** `bodyTaken`: the caller took the raw body (`pages()`), so every record it holds counts as handed out. */
  #finishPage(page: Page, bodyTaken = false): void {
    const { strategy } = this.#parts;
    this.#pending = bodyTaken && page.next !== null && strategy.bodyTaken !== undefined ? strategy.bodyTaken(page.next) : page.next;
    this.#page = undefined;
    this.#yieldedInPage = 0;
    this.#pagesDone++;
  }

  /**
   * Starts an iteration. A walk that reached its end has nothing left: iterating it again would
   * silently yield nothing, so it says so (a walk left early continues where it stopped).
   */
  #enter(): void {
    if (this.#busy) throw new TypeError(`${this.operation}: this stream is already being iterated`);
    if (this.#started && this.#pending === null && this.#page === undefined) {
      throw new StreamUsedError(`${this.operation}: this stream was walked to its end; call the operation again for a new walk`, { endpoint: this.operation });
    }
    this.#busy = true;
    this.#started = true;
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** Whether a continuation state (plain JSON) holds the key in any form `scrub` takes out. */
function holdsKey(state: unknown, scrub: (text: string) => string): boolean {
  const text = JSON.stringify(state);
  return scrub(text) !== text;
}

/** What `#spent` keeps of a continuation value (a cursor may be megabytes). */
function digestOf(value: string): string {
  return keptOrDigest(value, 64);
}

/** A cursor in a message: a short prefix and its length, never the whole value (it may echo anything). */
function preview(value: string): string {
  return value.length <= 8 ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, 8) + '…')} (${value.length} characters)`;
}

function checkCount(name: string, value: number): void {
  if (value !== Infinity && (!Number.isSafeInteger(value) || value < 0)) {
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
}
