/**
 * What every sink does around its format: open the destination, feed it each record, and end in one
 * of three ways. The source ended: the file is closed, renamed into place, and its size returned.
 * The source threw (402, abort, upstream failure) or a record could not be mapped: the file is
 * still closed and renamed — a valid file of every record received so far, which the CLI's resume
 * keeps — and a SinkError carrying that count is thrown. The disk failed: the temporary file is
 * dropped and a SinkError with 0 records is thrown.
 */
import { SinkError } from '../src/errors.ts';
import type { AnyIterable } from '../src/operators/types.ts';
import { messageOf, openDestination, type Destination } from './atomic.ts';

/** A sink's result. */
export interface SinkResult {
  /** The file written (`'-'` for stdout). */
  path: string;
  /** Records written: one line (NDJSON) or row (CSV, Parquet) each. */
  records: number;
  /** Size of the finished file in bytes. */
  bytes: number;
}

/** One format's writer over an open destination. */
export interface RecordWriter {
  /** Accepts one record; throws TypeError before writing anything of a record it cannot map. */
  write(record: unknown): Promise<void>;
  /** Writes whatever is buffered and the format's trailer (CSV nothing, Parquet its footer). */
  close(): Promise<void>;
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
  let failure: unknown;
  let failed = false;
  let bytes: number;
  try {
    const writer = await open(destination);
    try {
      for await (const record of source) {
        await writer.write(record);
        records++;
      }
    } catch (error) {
      failed = true;
      failure = error;
    }
    if (destination.ioError === undefined) await writer.close();
    if (destination.ioError !== undefined) throw destination.ioError;
    bytes = await destination.commit();
  } catch (error) {
    await destination.abandon();
    throw new SinkError(`Writing ${path} failed, no file written: ${messageOf(error)}`, 0, path, { cause: error });
  }
  if (failed) {
    throw new SinkError(`Stopped after ${records} record${records === 1 ? '' : 's'}, all kept in ${path}: ${messageOf(failure)}`, records, path, {
      cause: failure,
    });
  }
  return { path, records, bytes };
}
