/**
 * What every sink does around its format: open the destination, feed it each record, and end in one
 * of four ways. The source ended: the file is closed, renamed into place, and its size returned.
 * The source threw (402, abort, upstream failure): the file is still closed and renamed — a valid
 * file of every record received so far — and the sink rejects with the source's own error, as Node's
 * `pipeline` does, so `instanceof InsufficientCreditsError` still works; `partialOf(error)` tells
 * where that file is and how many records it holds. A record could not be mapped: the same file is
 * kept and a SinkError carrying that count is thrown. The disk failed: the temporary file is dropped
 * and a SinkError with 0 records is thrown.
 */
import { SinkError } from '../src/errors.ts';
import type { AnyIterable } from '../src/operators/types.ts';
import { isBatched, RECORD_BATCHES } from './from-ndjson.ts';
import { messageOf, openDestination, type Destination } from './atomic.ts';

/** A sink's result. */
export interface SinkResult {
  /** The file written (`'-'` for stdout). */
  path: string;
  /** Records written: one line (NDJSON) or row (CSV, Parquet) each. */
  records: number;
  /** Size of the finished file in bytes. */
  bytes: number;
  /**
   * Strings (values or keys) that held invalid UTF-16 — a lone surrogate, which no UTF-8 file can
   * hold — and were written with U+FFFD in its place, the same way in every format.
   */
  repaired: number;
}

/** One format's writer over an open destination. */
export interface RecordWriter {
  /**
   * Accepts one record; throws TypeError before writing anything of a record it cannot map. Returns
   * a promise only when the record had to wait (a flush, the disk): most records are taken at once,
   * and a promise per record was a measurable share of a table sink's time.
   */
  write(record: unknown): Promise<void> | undefined;
  /** Writes whatever is buffered and the format's trailer (CSV nothing, Parquet its footer). */
  close(): Promise<void>;
  /** Strings repaired so far (`SinkResult.repaired`). */
  readonly repaired: number;
}

/** Where the partial file of a sink whose source threw is told, on the source's error (`Symbol.for`, so copies of this module agree). */
const PARTIAL: unique symbol = Symbol.for('socialstream.sinks.partial');

/**
 * The file a sink kept when its source threw `error`: `{ path, records, bytes, repaired }` of that valid
 * partial file, or undefined when `error` did not come out of a sink this way (or is not an object
 * the sink could mark, such as a frozen object or a string).
 */
export function partialOf(error: unknown): SinkResult | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  return (error as { [PARTIAL]?: SinkResult })[PARTIAL];
}

export function checkSource(source: unknown): void {
  const iterable = source as { [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown } | null;
  if (iterable == null || (typeof iterable[Symbol.asyncIterator] !== 'function' && typeof iterable[Symbol.iterator] !== 'function')) {
    throw new TypeError('source must be an AsyncIterable (or Iterable) of records');
  }
}

/** `'-'` (stdout) is allowed only where `stdout` says so: NDJSON. */
export function checkPath(path: unknown, extensions: readonly string[], stdout = false): asserts path is string {
  if (typeof path !== 'string' || path === '') throw new TypeError('path must be a non-empty string');
  if (path === '-' && stdout) return;
  if (!hasExtension(path, extensions)) {
    throw new TypeError(`path ${path} must end with ${extensions.join(' or ')}`);
  }
}

/** Whether `path` ends with one of `extensions`, in any case (`OUT.PARQUET` is Parquet). */
export function hasExtension(path: string, extensions: readonly string[]): boolean {
  const name = path.toLowerCase();
  return extensions.some((ext) => name.endsWith(ext));
}

export async function runSink(
  source: AnyIterable<unknown>,
  path: string,
  open: (destination: Destination) => Promise<RecordWriter> | RecordWriter,
): Promise<SinkResult> {
  const destination = await openDestination(path);
  let records = 0;
  let repaired: number;
  let failure: { error: unknown; fromSource: boolean } | undefined;
  let bytes: number;
  try {
    const writer = await open(destination);
    const stopAt = (error: unknown): false => {
      failure = { error, fromSource: false };
      return false;
    };
    const wrote = (): true => {
      records++;
      return true;
    };
    try {
      await eachRecord(source, (record) => {
        let waiting;
        try {
          waiting = writer.write(record);
        } catch (error) {
          return stopAt(error);
        }
        return waiting === undefined ? wrote() : waiting.then(wrote, stopAt);
      });
    } catch (error) {
      failure ??= { error, fromSource: true };
    }
    if (destination.ioError === undefined) await writer.close();
    if (destination.ioError !== undefined) throw destination.ioError;
    repaired = writer.repaired;
    bytes = await destination.commit();
  } catch (error) {
    await destination.abandon();
    throw new SinkError(`Writing ${path} failed, no file written: ${messageOf(error)}`, 0, path, { cause: error });
  }
  if (failure?.fromSource === true) {
    const { error } = failure;
    if (typeof error === 'object' && error !== null && Object.isExtensible(error)) {
      Object.defineProperty(error, PARTIAL, { value: { path, records, bytes, repaired }, configurable: true });
    }
    throw error;
  }
  if (failure !== undefined) {
    throw new SinkError(`Stopped after ${records} record${records === 1 ? '' : 's'}, all kept in ${path}: ${messageOf(failure.error)}`, records, path, {
      cause: failure.error,
    });
  }
  return { path, records, bytes, repaired };
}

/**
 * Hands each record of `source` to `take` until it says false (and then closes the source). A source
 * that gives its records in batches (`fromNdjson`'s: `RECORD_BATCHES`) is read a batch at a time. A sync
 * iterable (an array, a dataset's merged rows, a generator) is read with `for…of`: `for await` would
 * add a promise and a turn of the microtask queue per record, a twentieth of a Parquet sink's time.
 * A promise among its values is still awaited, as `for await` would.
 */
async function eachRecord(source: AnyIterable<unknown>, take: (record: unknown) => boolean | Promise<boolean>): Promise<void> {
  if (isBatched(source)) {
    for await (const batch of source[RECORD_BATCHES]()) {
      for (const record of batch) {
        const more = take(record);
        if (more === false || (more !== true && !(await more))) return;
      }
    }
    return;
  }
  if (typeof (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function') {
    for await (const record of source) {
      const more = take(record);
      if (more === false || (more !== true && !(await more))) return;
    }
    return;
  }
  for (const value of source as Iterable<unknown>) {
    const more = take(isThenable(value) ? await value : value);
    if (more === false || (more !== true && !(await more))) return;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
