import { controlOf } from '../control.ts';
import { assertInteger, derive } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/**
 * `take(n)`: the first `n` records, then stops the source (so a client walk buys no further page).
 * As it starts, it tells the walk above it that no more than `n` records will be read
 * (`readAtMost`), so the walk buys no page ahead past them.
 */
export function take<T>(n: number): Operator<T, T> {
  assertInteger(n, 'take: n', 0);
  return (source) => derive(source, 'take', (s) => takeRecords(s, n), (records) => Math.min(records, n));
}

async function* takeRecords<T>(source: AnyIterable<T>, n: number): AsyncGenerator<T> {
  // With n = 0 the source is never even started: not one request is made.
  if (n === 0) return;
  controlOf(source)?.readAtMost?.(n);
  let taken = 0;
  for await (const record of source) {
    yield record;
    // Leave as soon as the n-th record is out, rather than pulling (and paying for) one more.
    if (++taken >= n) return;
  }
}
