import { assertInteger, derive } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/** `batch(n)`: groups records into arrays of `n`; the last, shorter batch is flushed when the source ends. */
export function batch<T>(n: number): Operator<T, T[]> {
  assertInteger(n, 'batch: n', 1);
  return (source) => derive(source, 'batch', (s) => batchRecords(s, n), (batches) => Math.min(batches * n, Number.MAX_SAFE_INTEGER));
}

async function* batchRecords<T>(source: AnyIterable<T>, n: number): AsyncGenerator<T[]> {
  let current: T[] = [];
  for await (const record of source) {
    current.push(record);
    if (current.length === n) {
      yield current;
      current = [];
    }
  }
  if (current.length > 0) yield current;
}
