/**
 * NDJSON: one JSON record per line (a `bigint` as its digits), written in chunks of about 64 KiB. A lone surrogate
 * is written as U+FFFD (`strings.ts`), not as the `\ud800` escape that DuckDB refuses a file for.
 */
import type { AnyIterable } from '../src/operators/types.ts';
import { stringifyExact } from '../src/exact-json.ts';
import type { Destination } from './atomic.ts';
import { checkPath, checkSource, runSink, type RecordWriter, type SinkResult } from './run.ts';
import { Repairs, wellFormedJson } from './strings.ts';

export const NDJSON_EXTENSIONS = ['.ndjson', '.jsonl'] as const;

/** Lines are gathered into one string per write: one syscall-sized chunk instead of a write per record. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes each record as one line of JSON to `path` (`.ndjson` or `.jsonl`), or to stdout when
 * `path` is `'-'`. Every value is kept exactly as `JSON.stringify` writes it, except that a lone
 * surrogate becomes U+FFFD (counted in `repaired`) and a `bigint` is written as its digits.
 */
export function toNdjson(source: AnyIterable<unknown>, path: string): Promise<SinkResult> {
  checkSource(source);
  checkPath(path, NDJSON_EXTENSIONS, true);
  return runSink(source, path, ndjsonWriter);
}

export function ndjsonWriter(destination: Destination): RecordWriter {
  let pending = '';
  const repairs = new Repairs();
  return {
    get repaired() {
      return repairs.count;
    },
    write(record) {
      if (record === null || typeof record !== 'object' || Array.isArray(record)) {
        throw new TypeError(`A record must be an object, got ${record === null ? 'null' : Array.isArray(record) ? 'an array' : typeof record}`);
      }
      pending += wellFormedJson(stringifyExact(record)!, repairs) + '\n';
      if (pending.length < CHUNK_CHARS) return undefined;
      const chunk = pending;
      pending = '';
      return destination.write(chunk);
    },
    async close() {
      if (pending !== '') await destination.write(pending);
      pending = '';
    },
  };
}
