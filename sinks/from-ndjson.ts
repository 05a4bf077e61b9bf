/** Reads an NDJSON file back as records, streaming with stream-json's JSONL parser. */
import { createReadStream } from 'node:fs';
import JsonlParser from 'stream-json/jsonl/Parser.js';
import { messageOf } from './atomic.ts';

/** What the parser yields in place of a line that is not JSON, so the error can say which record. */
class BadLine {
  constructor(readonly error: unknown) {}
}

/**
 * Yields each line of `path` parsed as JSON; blank lines are skipped. A line that is not JSON ends
 * the stream with a SyntaxError naming the file and the record's position (counting non-blank lines).
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
  // `errorIndicator` is in stream-json 1.9 but not yet in @types/stream-json.
  const options = { errorIndicator: (error: unknown) => new BadLine(error) };
  const parser = new JsonlParser(options as JsonlParser.JsonlParserOptions);
  const file = createReadStream(path, bytes === undefined ? {} : { end: bytes - 1 });
  file.on('error', (error) => parser.destroy(error));
  file.pipe(parser);
  let count = 0;
  try {
    for await (const { value } of parser as AsyncIterable<{ key: number; value: T | BadLine }>) {
      count++;
      if (value instanceof BadLine) {
        throw new SyntaxError(`${path}: record ${count} is not valid JSON (${messageOf(value.error)})`, { cause: value.error });
      }
      yield value;
    }
  } finally {
    file.destroy();
    parser.destroy();
  }
}
