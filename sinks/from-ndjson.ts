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
 * Yields each line of `path` parsed as JSON; blank lines are skipped. An integer past 2^53 comes
 * back as the `bigint` it was written from. A line that is not JSON ends the stream with a
 * SyntaxError naming the file and the record's position (counting non-blank lines).
 */
export function fromNdjson<T = Record<string, unknown>>(path: string): AsyncIterable<T> {
  if (typeof path !== 'string' || path === '') throw new TypeError('path must be a non-empty string');
  return readRecords<T>(path);
}

/** The records of the first `bytes` bytes of `path` (whole lines), as `fromNdjson` reads them: for a file another writer is still appending to. */
export function fromNdjsonPrefix<T = Record<string, unknown>>(path: string, bytes: number): AsyncIterable<T> {
  return readRecords<T>(path, bytes);
}

async function* readRecords<T>(path: string, bytes?: number): AsyncGenerator<T> {
  if (bytes === 0) return;
  const file = createReadStream(path, { highWaterMark: CHUNK_BYTES, ...(bytes === undefined ? {} : { end: bytes - 1 }) });
  let count = 0;
  const parsed = (line: string): T => {
    count++;
    try {
      return parseExact(line) as T;
    } catch (error) {
      throw new SyntaxError(`${path}: record ${count} is not valid JSON (${messageOf(error)})`, { cause: error });
    }
  };
  // Lines are found in the bytes and each is decoded alone: a newline byte never lies inside a
  // UTF-8 sequence, so no character is split, and no chunk-sized string is built and split again.
  // The bytes of a line that runs past its chunk wait here, joined once its end arrives.
  let partial: Buffer[] = [];
  try {
    for await (const chunk of file as AsyncIterable<Buffer>) {
      let start = 0;
      let end = chunk.indexOf(NEWLINE);
      if (end !== -1 && partial.length > 0) {
        partial.push(chunk.subarray(0, end));
        const line = Buffer.concat(partial);
        partial = [];
        if (line.length > 0) yield parsed(line.toString('utf8'));
        start = end + 1;
        end = chunk.indexOf(NEWLINE, start);
      }
      for (; end !== -1; start = end + 1, end = chunk.indexOf(NEWLINE, start)) {
        if (end > start) yield parsed(chunk.toString('utf8', start, end));
      }
      if (start < chunk.length) partial.push(chunk.subarray(start));
    }
    if (partial.length > 0) yield parsed(Buffer.concat(partial).toString('utf8'));
  } finally {
    file.destroy();
  }
}
