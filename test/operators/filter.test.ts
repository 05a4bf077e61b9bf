import { describe, expect, expectTypeOf, it } from 'vitest';
import { filter, pipe } from '../../src/operators/index.ts';
import { collect, numbers, type Probe } from './sources.ts';

describe('filter', () => {
  it('keeps the records the predicate holds for', async () => {
    expect(await collect(pipe(numbers(6), filter((n) => n % 3 === 0)))).toEqual([0, 3]);
  });

  it('awaits an async predicate', async () => {
    expect(await collect(pipe(numbers(4), filter(async (n) => n > 1)))).toEqual([2, 3]);
  });

  it('passes the index of each record', async () => {
    expect(await collect(pipe(['a', 'b', 'c'], filter((_, i) => i !== 1)))).toEqual(['a', 'c']);
  });

  it('narrows the type with a type guard', () => {
    const mixed = [1, 'a', 2] as (number | string)[];
    expectTypeOf(pipe(mixed, filter((v): v is number => typeof v === 'number'))).toEqualTypeOf<AsyncIterable<number>>();
  });

  it('closes its source when the predicate throws', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    const failing = filter<number>((n) => {
      if (n === 2) throw new Error('bad record');
      return true;
    });
    await expect(collect(pipe(numbers(10, probe), failing))).rejects.toThrow('bad record');
    expect(probe.closed).toBe(true);
  });

  it('refuses a predicate that is not a function with a TypeError', () => {
    expect(() => filter('score' as never)).toThrow(/filter: fn must be a function/);
  });
});
