/**
 * The record stream an operation returns. `for await` yields records across every page;
 * `pages()` yields the raw bodies; `checkpoint()` says where the walk stands at any moment.
 * Iterating again continues where the last iteration stopped. The stream carries a
 * `StreamControl`, so operators can put gates (throttle, credit caps) in front of its requests.
 */
import type { Checkpoint } from './checkpoint.ts';
import { type Controlled, type RequestGate, STREAM_CONTROL, type StreamControl } from './control.ts';
import { PaginationLoopError, ResponseFormatError, SocialstreamError } from './errors.ts';
import type { Meter } from './metering.ts';
import type { OperationSpec } from './operations/spec.ts';
import type { Strategy } from './pagination/index.ts';
import { creditsOf, type Requester, STOPPED } from './requester.ts';

export interface StreamOptions {
  /** Yield at most this many records (pages stop being read once it is reached). */
  limit?: number;
  /** Read at most this many pages. */
  maxPages?: number;
  /** Aborting ends the walk at once, with the signal's reason. */
  signal?: AbortSignal;
}

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
  query: Record<string, string>;
  strategy: Strategy<unknown>;
  requester: Requester;
  meter: Meter;
  /** The client's signal and the stream's, already combined. */
  signal: AbortSignal | undefined;
}

export class RecordStream<R, P = unknown> implements AsyncIterable<R>, Controlled {
  readonly [STREAM_CONTROL]: StreamControl;
  /** The operation id. */
  readonly operation: string;

  readonly #parts: StreamParts;
  readonly #limit: number;
  readonly #maxPages: number;
  readonly #gates: RequestGate[] = [];
  /** Continuation values this walk has spent: one coming back means a loop. */
  readonly #spent = new Set<string>();
  /** State of the next page to fetch once `#page` is done; null when there is none. */
  #pending: unknown;
  #skip: number;
  #page: Page | undefined;
  #yieldedInPage = 0;
  #pagesDone: number;
  #recordsYielded: number;
  #pagesRead = 0;
  #recordsOut = 0;
  #busy = false;
  /** An ignored continuation is reported once per walk. */
  #reportedIgnored = false;

  constructor(parts: StreamParts, start: WalkStart, options: StreamOptions = {}) {
    const { limit = Infinity, maxPages = Infinity } = options;
    checkCount('limit', limit);
    checkCount('maxPages', maxPages);
    this.#parts = parts;
    this.#limit = limit;
    this.#maxPages = maxPages;
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
      if (entered && !finished) this.#busy = false;
      finished = true;
      return DONE;
    };
    const step = (): IteratorResult<R> | Promise<IteratorResult<R>> => {
      const page = this.#page;
      if (page !== undefined && this.#yieldedInPage < page.records.length) {
        if (this.#recordsOut >= this.#limit) return finish();
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
        if (this.#busy) return Promise.reject(new TypeError(`${this.operation}: this stream is already being iterated`));
        this.#busy = true;
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
          (error: unknown) => {
            inflight = undefined;
            finish();
            throw error;
          },
        );
        return inflight;
      } catch (error) {
        finish();
        return Promise.reject(error);
      }
    };
    // Like an async generator, `return()` waits for a page read in flight to settle, so a caller
    // that stops (e.g. `mergeMap` after a `break`) knows no request of this stream is still running.
    const stop = (): Promise<IteratorResult<R>> => (inflight === undefined ? Promise.resolve(finish()) : inflight.then(finish, finish));
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
    if (state === null || this.#recordsOut >= this.#limit || this.#pagesRead >= this.#maxPages) return undefined;
    const { op, strategy, requester, meter, query, signal } = this.#parts;
    signal?.throwIfAborted();
    const spends = strategy.spends(state);
    if (spends !== undefined && this.#spent.has(spends)) {
      throw this.#failed(
        new PaginationLoopError(
          `${op.id}: the continuation value ${JSON.stringify(spends.slice(0, 80))} came back after it was already used; stopping instead of reading the same pages again`,
          { endpoint: op.id },
        ),
      );
    }
    const target = { endpoint: op.id, path: op.path, query: { ...query, ...strategy.query(state) }, chargeable: true };
    const body = await requester.send(target, this.#gates, signal);
    if (body === STOPPED) return undefined;
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
    this.#pagesRead++;
    meter.page(op.id, read.records.length, creditsOf(body, true));
    let { next, ignored } = read;
    const again = next !== null && read.followIfNew === true ? strategy.spends(next) : undefined;
    if (again !== undefined && this.#spent.has(again)) {
      ignored ??= `${JSON.stringify(again.slice(0, 80))} came back in a body without its has-more flag`;
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

  #enter(): void {
    if (this.#busy) throw new TypeError(`${this.operation}: this stream is already being iterated`);
    this.#busy = true;
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

function checkCount(name: string, value: number): void {
  if (value !== Infinity && (!Number.isSafeInteger(value) || value < 0)) {
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
}
