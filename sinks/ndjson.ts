/** NDJSON: one `JSON.stringify`d record per line, written in chunks of about 64 KiB. */
import type { AnyIterable } from '../src/operators/types.ts';
import type { Destination } from './atomic.ts';
import { checkPath, checkSource, runSink, type RecordWriter, type SinkResult } from './run.ts';

export const NDJSON_EXTENSIONS = ['.ndjson', '.jsonl'] as const;

/** Lines are gathered into one string per write: one syscall-sized chunk instead of a write per record. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes each record as one line of JSON to `path` (`.ndjson` or `.jsonl`), or to stdout when
 * `path` is `'-'`. Every value is kept exactly as `JSON.stringify` writes it.
 */
export function toNdjson(source: AnyIterable<unknown>, path: string): Promise<SinkResult> {
  checkSource(source);
  checkPath(path, NDJSON_EXTENSIONS, true);
  return runSink(source, path, ndjsonWriter);
}

export function ndjsonWriter(destination: Destination): RecordWriter {
  let pending = '';
  return {
    write(record) {
      if (record === null || typeof record !== 'object' || Array.isArray(record)) {
        throw new TypeError(`A record must be an object, got ${record === null ? 'null' : Array.isArray(record) ? 'an array' : typeof record}`);
      }
      pending += JSON.stringify(record) + '\n';
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
