/**
 * The checks every page of a walk passes before its records are handed out, so that a service that
 * misbehaves costs a typed error rather than credits or a key: a body that is not a success envelope,
 * a continuation value that comes back after it was spent (a loop), ever-new continuations over pages
 * already read (`pagination/repeats.ts`), and a continuation that echoes the API key (it would be sent
 * back and kept in checkpoints). Errors found here are reported to the client's meter.
 */
import { PaginationLoopError, ResponseFormatError, type SocialstreamError } from './errors.ts';
import { stringifyExact } from './exact-json.ts';
import type { Meter } from './metering.ts';
import { keyOf } from './operations/record-meta.ts';
import type { OperationSpec } from './operations/spec.ts';
import { keptOrDigest, REPEATED_PAGES_LIMIT, RepeatedPages } from './pagination/repeats.ts';
import type { Strategy } from './pagination/strategy.ts';

export class PageGuards {
  readonly #op: OperationSpec;
  readonly #strategy: Strategy<unknown>;
  readonly #meter: Meter;
  readonly #scrub: (text: string) => string;
  /** Digests of the continuation values this walk has spent (a cursor may be megabytes): one coming back means a loop. */
  readonly #spent = new Set<string>();
  /** Pages this walk read, by content: ever-new cursors over the same pages mean a loop too. */
  readonly #repeats: RepeatedPages;
  /** An ignored continuation is reported once per walk. */
  #reportedIgnored = false;

  constructor(op: OperationSpec, strategy: Strategy<unknown>, meter: Meter, scrub: (text: string) => string) {
    this.#op = op;
    this.#strategy = strategy;
    this.#meter = meter;
    this.#scrub = scrub;
    this.#repeats = new RepeatedPages((record) => keyOf(op, record));
  }

  /** Before the page at `state` is read: its continuation value must not be one already spent. Returns its digest. */
  beforeRead(state: unknown): string | undefined {
    const value = this.#strategy.spends(state);
    const spends = value === undefined ? undefined : digestOf(value);
    if (spends !== undefined && this.#spent.has(spends)) {
      throw this.failed(
        new PaginationLoopError(
          `${this.#op.id}: the continuation value ${preview(value!)} came back after it was already used; stopping instead of reading the same pages again`,
          { endpoint: this.#op.id },
        ),
      );
    }
    return spends;
  }

  /** The body must be a success envelope before the strategy reads it. */
  envelope(body: unknown): void {
    if (typeof body !== 'object' || body === null || (body as { success?: unknown }).success !== true) {
      throw this.failed(new ResponseFormatError(`${this.#op.id}: the response is not a success envelope`, { endpoint: this.#op.id, status: 200 }));
    }
  }

  /** The page was read: its continuation is spent, and its records must not repeat earlier pages' again and again. */
  afterRead(spends: string | undefined, records: unknown[]): void {
    if (spends !== undefined) this.#spent.add(spends);
    if (this.#repeats.repeated(records)) {
      throw this.failed(
        new PaginationLoopError(
          `${this.#op.id}: ${REPEATED_PAGES_LIMIT} pages in a row repeated records of earlier pages under new continuation values; stopping instead of buying more of them`,
          { endpoint: this.#op.id },
        ),
      );
    }
  }

  /**
   * The continuation the page offers, as the walk will follow it: refused when it holds the key, dropped
   * (and reported as ignored) when a body without its has-more flag offers one already spent.
   */
  next(next: unknown, followIfNew: boolean | undefined, ignored: string | undefined): unknown {
    if (next !== null && typeof next !== 'number' && holdsKey(next, this.#scrub)) {
      throw this.failed(
        new ResponseFormatError(`${this.#op.id}: the service sent a continuation value that holds the API key; refusing to send it back or store it`, {
          endpoint: this.#op.id,
          status: 200,
        }),
      );
    }
    const again = next !== null && followIfNew === true ? this.#strategy.spends(next) : undefined;
    if (again !== undefined && this.#spent.has(digestOf(again))) {
      ignored ??= `${preview(again)} came back in a body without its has-more flag`;
      next = null;
    }
    if (ignored !== undefined && !this.#reportedIgnored) {
      this.#reportedIgnored = true;
      this.#meter.ignoredContinuation(this.#op.id, ignored);
    }
    return next;
  }

  /** Reports an error the walk itself found (the requester reports the ones from answers). */
  failed(error: SocialstreamError): SocialstreamError {
    this.#meter.error(this.#op.id, error);
    return error;
  }
}

/**
 * Whether a continuation state (plain JSON) holds the key in any form `scrub` takes out. Exact: a
 * state may hold records (a comment tree's stack), and a record an integer past 2^53 (a `bigint`).
 */
function holdsKey(state: unknown, scrub: (text: string) => string): boolean {
  const text = stringifyExact(state) ?? '';
  return scrub(text) !== text;
}

/** What the spent set keeps of a continuation value (a cursor may be megabytes). */
function digestOf(value: string): string {
  return keptOrDigest(value, 64);
}

/** A cursor in a message: a short prefix and its length, never the whole value (it may echo anything). */
function preview(value: string): string {
  return value.length <= 8 ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, 8) + '…')} (${value.length} characters)`;
}
