/** Reads an NDJSON file back as records, streaming, with every integer's digits (`parseExact`). */
import { createReadStream } from 'node:fs';
import { parseExact } from '../src/exact-json.ts';
import { messageOf } from './atomic.ts';

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
  // Decoded as a stream, so a character split between two chunks is joined again.
  const file = createReadStream(path, { encoding: 'utf8', ...(bytes === undefined ? {} : { end: bytes - 1 }) });
  let count = 0;
  let rest = '';
  const parsed = (line: string): T => {
    count++;
    try {
      return parseExact(line) as T;
    } catch (error) {
      throw new SyntaxError(`${path}: record ${count} is not valid JSON (${messageOf(error)})`, { cause: error });
    }
  };
  try {
    for await (const chunk of file as AsyncIterable<string>) {
      // A chunk inside a long line is only joined on (a cheap rope); the text is split where lines end.
      if (!chunk.includes('\n')) {
        rest += chunk;
        continue;
      }
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (line !== '') yield parsed(line);
    }
    if (rest !== '') yield parsed(rest);
  } finally {
    file.destroy();
  }
}
