import { assertFunction, derive } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/**
 * `takeWhile(fn)`: records while `fn` holds, then stops the source at the first that fails (so a
 * client walk buys no further page). The failing record is not yielded. The usual use is an
 * incremental pull of a newest-first walk: `takeWhile((post) => post.created_utc > since)`.
 */
export function takeWhile<T>(fn: (record: T, index: number) => boolean | Promise<boolean>): Operator<T, T> {
  assertFunction(fn, 'takeWhile: fn');
  return (source) => derive(source, 'takeWhile', (s) => takeRecordsWhile(s, fn));
}

async function* takeRecordsWhile<T>(source: AnyIterable<T>, fn: (record: T, index: number) => boolean | Promise<boolean>): AsyncGenerator<T> {
  let index = 0;
  for await (const record of source) {
    // Leaving the loop closes the source at once: the walk reads no page past this record's.
    if (!(await fn(record, index++))) return;
    yield record;
  }
}
