/**
 * The fetch time a dataset keeps with every row (`_fetched_at`) and orders a key's versions by
 * (docs/datasets.md "One row per record"): one order every writer shares, whatever its own clock says.
 *
 * A stamp is a hybrid logical clock over the service's clock. The service's `Date` header on the
 * page (`service-time.ts`, whole seconds) is the physical part; a stamp is never below the last one
 * this process issued or read in the dataset, plus one microsecond:
 *
 *     stamp = max(served second, last stamp + 1 µs)
 *
 * so pages fetched within one second keep the order they were staged in, in one process and across
 * writers that publish one after the other (the dataset records the latest stamp it published,
 * `_dataset/<op>/clock.json`, which a writer reads as it opens). A stamp is ISO 8601 text with six
 * digits of fraction (`2026-11-29T03:12:29.000001Z`), a readable instant DuckDB casts to TIMESTAMP.
 * A page without a readable `Date` header (a service that sends none; a page bought ahead by an
 * earlier run) is stamped by the local clock instead, under the same rule.
 *
 * Versions before this one stamped each writer's local time with three digits of fraction, or
 * nothing: such a stamp ("old-style") ranks below every stamp of this clock, and among its own kind
 * by its text, so a record fetched again by this version always replaces one staged by an older.
 */

/** A stamp of this clock: ISO instant with microseconds. */
const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

export class FetchClock {
  /** The last stamp issued or observed, in Unix microseconds. */
  #last = Number.NEGATIVE_INFINITY;

  constructor(private readonly localNow: () => number = Date.now) {}

  /** The stamp of a page the service answered at `servedAt` (Unix ms), or by the local clock when it did not say. */
  stamp(servedAt: number | undefined): string {
    const physical = Math.floor((servedAt ?? this.localNow()) / 1000) * 1_000_000;
    this.#last = Math.max(physical, this.#last + 1);
    return stampText(this.#last);
  }

  /** Takes in a stamp another writer issued (read in the dataset): this clock's next is later. */
  observe(stamp: string | undefined): void {
    const micros = stamp === undefined ? undefined : microsOf(stamp);
    if (micros !== undefined && micros > this.#last) this.#last = micros;
  }
}

/** The clock of this process: every export in it (walks, shards, a worker's jobs) stamps in one order. */
export const fetchClock = new FetchClock();

/** Whether `stamp` was issued by this clock (an old-style or missing stamp ranks below every one that was). */
export function isClockStamp(stamp: unknown): stamp is string {
  return typeof stamp === 'string' && STAMP.test(stamp);
}

/** Compares two fetch times (`_fetched_at` values): negative when `a` is earlier, 0 when the same. */
export function compareFetchTimes(a: unknown, b: unknown): number {
  const rank = Number(isClockStamp(a)) - Number(isClockStamp(b));
  if (rank !== 0) return rank;
  const at = typeof a === 'string' ? a : '';
  const bt = typeof b === 'string' ? b : '';
  return at < bt ? -1 : at > bt ? 1 : 0;
}

/** The later of two stamps of this clock (either may be missing). */
export function laterStamp(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareFetchTimes(a, b) >= 0 ? a : b;
}

/**
 * What a row staged or written by an older version without a fetch time gets, so that none is
 * published NULL: the time its file was last written, old-style (three digits), below every stamp of
 * this clock.
 */
export function olderStamp(mtimeMs: number): string {
  return new Date(mtimeMs).toISOString();
}

function stampText(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}

function microsOf(stamp: string): number | undefined {
  if (!isClockStamp(stamp)) return undefined;
  const ms = Date.parse(`${stamp.slice(0, 23)}Z`);
  return Number.isFinite(ms) ? ms * 1000 + Number(stamp.slice(23, 26)) : undefined;
}
