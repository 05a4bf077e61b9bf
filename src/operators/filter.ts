import { assertFunction, derive } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/** `filter(fn)`: keeps the records for which `fn` holds; a type guard narrows the stream's type. */
export function filter<A, B extends A>(fn: (record: A, index: number) => record is B): Operator<A, B>;
export function filter<T>(fn: (record: T, index: number) => boolean | Promise<boolean>): Operator<T, T>;
export function filter<T>(fn: (record: T, index: number) => boolean | Promise<boolean>): Operator<T, T> {
  assertFunction(fn, 'filter: fn');
  return (source) => derive(source, 'filter', (s) => filterRecords(s, fn));
}

async function* filterRecords<T>(
  source: AnyIterable<T>,
  fn: (record: T, index: number) => boolean | Promise<boolean>,
): AsyncGenerator<T> {
  let index = 0;
  for await (const record of source) {
    const kept = fn(record, index++);
    if (kept === true || (kept !== false && (await kept))) yield record;
  }
}
