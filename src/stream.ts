/**
 * The record stream an operation returns. `for await` yields records across every page;
 * `pages()` yields the raw bodies; `checkpoint()` says where the walk stands at any moment.
 * Iterating again continues where the last iteration stopped. The stream carries a
 * `StreamControl`, so operators can put gates (throttle, credit caps) in front of its requests.
 */
import type { Checkpoint } from './checkpoint.ts';
import { type Controlled, type RequestGate, STREAM_CONTROL, type StreamControl } from './control.ts';
import { SocialstreamError, StreamUsedError } from './errors.ts';
import { lookaheadWindow, recordsWanted } from './lookahead.ts';
import type { Meter } from './metering.ts';
import type { OperationSpec } from './operations/spec.ts';
import { PageGuards } from './page-guards.ts';
import { PageReader, type HeldPages } from './page-reader.ts';
import type { Query, Strategy } from './pagination/index.ts';
import { creditsOf, type Requester, STOPPED } from './requester.ts';
import { servedAtOf } from './service-time.ts';
import { checkStreamOptions, type StreamOptions, type WalkSettings } from './stream-options.ts';
import { WALK, type PageBatch, type Walk, type WalkStart } from './walk.ts';

export type { LookaheadMode, StreamOptions } from './stream-options.ts';
export type { PageBatch } from './walk.ts';

interface Page {
  /** The state that fetched it. */
  state: unknown;
  body: unknown;
  records: unknown[];
  next: unknown;
  /** When the service answered it (`servedAtOf`), if it said. */
  servedAt: number | undefined;
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

/**
 * A walk of one operation with one parameter set, as an `AsyncIterable` of its records: it buys
 * pages as it is read, by the operation's continuation rule. `pages()` yields the raw pages
 * instead; `checkpoint()` says where it stands, for `client.resume`. Returned by every operation
 * method of the client.
 */
export class RecordStream<R, P = unknown> implements AsyncIterable<R>, Controlled {
  readonly [STREAM_CONTROL]: StreamControl;
  /** The operation id. */
  readonly operation: string;

  readonly #parts: StreamParts;
  readonly #settings: WalkSettings;
  // Made when the walk first reads a page: an export of a 100,000-line `--inputs` file makes a stream
  // a line only to learn its walk, and reads few of them in one process.
  #readerMade: PageReader | undefined;
  #guardsMade: PageGuards | undefined;
  readonly #gates: RequestGate[] = [];
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

  constructor(parts: StreamParts, start: WalkStart, options: StreamOptions = {}) {
    this.#settings = checkStreamOptions(options);
    this.#parts = parts;
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

  get #reader(): PageReader {
    if (this.#readerMade === undefined) {
      const { op, requester, query, signal, held } = this.#parts;
      this.#readerMade = new PageReader(
        (page) => requester.send({ endpoint: op.id, path: op.path, query: { ...query, ...page }, chargeable: true }, this.#gates, signal),
        () => this.#planAhead(),
        held,
      );
    }
    return this.#readerMade;
  }

  get #guards(): PageGuards {
    const { op, strategy, meter, scrub } = this.#parts;
    return (this.#guardsMade ??= new PageGuards(op, strategy, meter, scrub));
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
        if (this.#recordsOut >= this.#settings.limit) return this.#ended().then(finish);
        this.#parts.signal?.throwIfAborted();
        const value = page.records[this.#yieldedInPage] as R;
        this.#handOut(1);
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
        this.#handOut(page.records.length - this.#yieldedInPage);
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
        this.#handOut(records.length);
        this.#finishPage(page);
        const checkpoint = this.checkpoint();
        const checkpointAfter = (count: number): Checkpoint =>
          count >= records.length
            ? checkpoint
            : { ...checkpoint, pending: page.state, skip: from + count, pagesDone: before.pagesDone, recordsYielded: before.recordsYielded + count };
        yield { records, checkpoint, checkpointAfter, last: checkpoint.pending === null, servedAt: page.servedAt };
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
    if (state === null || this.#recordsOut >= this.#settings.limit || this.#pagesRead >= this.#settings.maxPages) return this.#ended();
    const { op, strategy, meter, signal } = this.#parts;
    signal?.throwIfAborted();
    const guards = this.#guards;
    const spends = guards.beforeRead(state);
    let body;
    try {
      body = await this.#read(state);
    } catch (error) {
      // Pages bought ahead still land (an abort ends them at once), so no request outlives the walk.
      await this.#reader.settle();
      throw error;
    }
    if (body === STOPPED) return this.#ended();
    guards.envelope(body);
    let read;
    try {
      read = strategy.read(body, state);
    } catch (error) {
      throw error instanceof SocialstreamError ? guards.failed(error) : error;
    }
    guards.afterRead(spends, read.records);
    this.#pagesRead++;
    if (strategy.ahead !== undefined) this.#lastBody = body;
    meter.page(op.id, read.records.length, creditsOf(body, true));
    // A continuation is sent back and kept in checkpoints: one that echoes the key is refused, never stored.
    const next = guards.next(read.next, read.followIfNew, read.ignored);
    const page: Page = { state, body, records: read.records, next, servedAt: servedAtOf(body) };
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
    const { concurrency, lookahead, maxPages, limit, overfetch } = this.#settings;
    const window = Math.min(lookaheadWindow(lookahead, concurrency, this.#pagesRead), maxPages - this.#pagesRead);
    const page = this.#page;
    const wanted = recordsWanted(Math.min(limit, this.#readUpTo), this.#recordsOut, page === undefined ? 0 : page.records.length - this.#yieldedInPage);
    if (state !== null && concurrency > 1 && window > 1 && wanted > 0 && strategy.ahead !== undefined) {
      const look = {
        held: (query: Query) => this.#reader.held(query),
        last: this.#lastBody,
        wanted,
        overfetch,
        max: window,
        within: maxPages - this.#pagesRead,
      };
      this.#reader.plan(strategy.ahead(state, look), concurrency, window);
    }
  }

  /** `count` more records of the current page are handed out: the counters every way of reading keeps. */
  #handOut(count: number): void {
    this.#yieldedInPage += count;
    this.#recordsYielded += count;
    this.#recordsOut += count;
    this.#parts.meter.records(count);
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
