import { assertFunction, derive, sameCount } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/** `tap(fn)`: calls `fn(record, index)` for each record (awaiting it when async) and passes the record on unchanged. */
export function tap<T>(fn: (record: T, index: number) => unknown): Operator<T, T> {
  assertFunction(fn, 'tap: fn');
  return (source) => derive(source, 'tap', (s) => tapRecords(s, fn), sameCount);
}

async function* tapRecords<T>(source: AnyIterable<T>, fn: (record: T, index: number) => unknown): AsyncGenerator<T> {
  let index = 0;
  for await (const record of source) {
    const done = fn(record, index++);
    if (isThenable(done)) await done;
    yield record;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as Partial<PromiseLike<unknown>>).then === 'function';
}
