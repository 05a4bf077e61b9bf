/** Reads an NDJSON file back as records, streaming, with every integer's digits (`parseExact`). */
import { createReadStream } from 'node:fs';
import { parseExact } from '../src/exact-json.ts';
import { messageOf } from './atomic.ts';

/**
 * How much of the file one read takes. Reading is on the critical path of a Parquet conversion
 * (the engine's spool, `bench/sinks`): read alone, `bench/sinks`' 154 MB of posts took 0.24–0.30 s in the
 * stream's default 64 KB reads and about 0.1 s in 1 MB ones (three runs each).
 */
const CHUNK_BYTES = 1 << 20;

const NEWLINE = 0x0a;

/**
 * What a source may offer besides its records one at a time: the same records a chunk of the file
 * at a time (`fromNdjson`'s do). A sink reads them that way (`run.ts` `eachRecord`): an async
 * iterator's promise and turn of the microtask queue per record were about a twentieth of a
 * Parquet conversion's time. Internal: not part of the package's surface.
 */
export const RECORD_BATCHES = Symbol('socialstream.recordBatches');

/** A source of records that can also give them in batches (`RECORD_BATCHES`). */
export interface BatchedRecords<T> extends AsyncIterable<T> {
  [RECORD_BATCHES](): AsyncIterable<readonly T[]>;
}

/** Whether `source` gives its records in batches too (`RECORD_BATCHES`). */
export function isBatched(source: unknown): source is BatchedRecords<unknown> {
  return typeof source === 'object' && source !== null && typeof (source as Partial<BatchedRecords<unknown>>)[RECORD_BATCHES] === 'function';
}

/**
 * Yields each line of `path` parsed as JSON; blank lines are skipped. An integer past 2^53 comes
 * back as the `bigint` it was written from. A line that is not JSON ends the stream with a
 * SyntaxError naming the file and the record's position (counting non-blank lines).
 */
export function fromNdjson<T = Record<string, unknown>>(path: string): AsyncIterable<T> {
  if (typeof path !== 'string' || path === '') throw new TypeError('path must be a non-empty string');
  return ndjsonRecords<T>(path);
}

/** The records of the first `bytes` bytes of `path` (whole lines), as `fromNdjson` reads them: for a file another writer is still appending to. */
export function fromNdjsonPrefix<T = Record<string, unknown>>(path: string, bytes: number): AsyncIterable<T> {
  return ndjsonRecords<T>(path, bytes);
}

function ndjsonRecords<T>(path: string, bytes?: number): BatchedRecords<T> {
  return {
    async *[Symbol.asyncIterator]() {
      for await (const batch of readBatches<T>(path, bytes)) yield* batch;
    },
    [RECORD_BATCHES]: () => readBatches<T>(path, bytes),
  };
}

/** How many records (non-blank lines) the NDJSON file at `path` holds, as `fromNdjson` reads them; undefined when there is no file. */
export async function ndjsonRecordCount(path: string): Promise<number | undefined> {
  let count = 0;
  let inLine = false;
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
      for (let at = 0; at < chunk.length; ) {
        const end = chunk.indexOf(NEWLINE, at);
        if (end === -1) {
          inLine = true;
          break;
        }
        if (end > at || inLine) count++;
        inLine = false;
        at = end + 1;
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return inLine ? count + 1 : count;
}

/**
 * The records of `path` (its first `bytes` bytes), those of one chunk of the file at a time. A line
 * that is not JSON ends the stream after the records before it have been yielded.
 */
async function* readBatches<T>(path: string, bytes?: number): AsyncGenerator<T[]> {
  if (bytes === 0) return;
  const file = createReadStream(path, { highWaterMark: CHUNK_BYTES, ...(bytes === undefined ? {} : { end: bytes - 1 }) });
  let count = 0;
  let batch: T[] = [];
  let failure: SyntaxError | undefined;
  // False once a line failed: the records before it are yielded, then the failure is thrown.
  const take = (line: string): boolean => {
    count++;
    try {
      batch.push(parseExact(line) as T);
      return true;
    } catch (error) {
      failure = new SyntaxError(`${path}: record ${count} is not valid JSON (${messageOf(error)})`, { cause: error });
      return false;
    }
  };
  const handOver = (): T[] => {
    const full = batch;
    batch = [];
    return full;
  };
  // Lines are found in the bytes and each is decoded alone: a newline byte never lies inside a
  // UTF-8 sequence, so no character is split, and no chunk-sized string is built and split again.
  // The bytes of a line that runs past its chunk wait here, joined once its end arrives.
  let partial: Buffer[] = [];
  try {
    for await (const chunk of file as AsyncIterable<Buffer>) {
      let start = 0;
      let end = chunk.indexOf(NEWLINE);
      let ok = true;
      if (end !== -1 && partial.length > 0) {
        partial.push(chunk.subarray(0, end));
        const line = Buffer.concat(partial);
        partial = [];
        if (line.length > 0) ok = take(line.toString('utf8'));
        start = end + 1;
        end = chunk.indexOf(NEWLINE, start);
      }
      for (; ok && end !== -1; start = end + 1, end = chunk.indexOf(NEWLINE, start)) {
        if (end > start) ok = take(chunk.toString('utf8', start, end));
      }
      if (batch.length > 0) yield handOver();
      if (failure !== undefined) throw failure;
      if (start < chunk.length) partial.push(chunk.subarray(start));
    }
    if (partial.length > 0 && take(Buffer.concat(partial).toString('utf8'))) yield handOver();
    if (failure !== undefined) throw failure;
  } finally {
    file.destroy();
  }
}
