import { assertFunction, derive, sameCount } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/** `map(fn)`: each record turned into `fn(record, index)`; `fn` may be async, and order is kept. */
export function map<A, B>(fn: (record: A, index: number) => B | Promise<B>): Operator<A, B> {
  assertFunction(fn, 'map: fn');
  return (source) => derive(source, 'map', (s) => mapRecords(s, fn), sameCount);
}

async function* mapRecords<A, B>(
  source: AnyIterable<A>,
  fn: (record: A, index: number) => B | Promise<B>,
): AsyncGenerator<B> {
  let index = 0;
  // `yield` in an async generator awaits a promise, so async and sync `fn` share one path.
  for await (const record of source) yield fn(record, index++);
}
