/** `take(n)`: the first `n` records, then stops the source (so a client walk buys no further page). */
import { assertInteger, derive } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

export function take<T>(n: number): Operator<T, T> {
  assertInteger(n, 'take: n', 0);
  return (source) => derive(source, 'take', (s) => takeRecords(s, n));
}

async function* takeRecords<T>(source: AnyIterable<T>, n: number): AsyncGenerator<T> {
  // With n = 0 the source is never even started: not one request is made.
  if (n === 0) return;
  let taken = 0;
  for await (const record of source) {
    yield record;
    // Leave as soon as the n-th record is out, rather than pulling (and paying for) one more.
    if (++taken >= n) return;
  }
}
