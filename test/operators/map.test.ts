import { describe, expect, it } from 'vitest';
import { map, pipe } from '../../src/operators/index.ts';
import { collect, numbers, type Probe } from './sources.ts';

describe('map', () => {
  it('turns each record into the function result', async () => {
    expect(await collect(pipe(numbers(3), map((n) => `#${n}`)))).toEqual(['#0', '#1', '#2']);
  });

  it('awaits an async function and keeps the order', async () => {
    const slowFirst = map(async (n: number) => {
      await new Promise((resolve) => setTimeout(resolve, n === 0 ? 20 : 0));
      return n;
    });
    expect(await collect(pipe(numbers(3), slowFirst))).toEqual([0, 1, 2]);
  });

  it('passes the index of each record', async () => {
    expect(await collect(pipe(['a', 'b'], map((v, i) => `${i}${v}`)))).toEqual(['0a', '1b']);
  });

  it('surfaces an error of the function and closes its source', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    const failing = map<number, number>(async (n) => {
      if (n === 1) throw new Error('cannot map 1');
      return n;
    });
    await expect(collect(pipe(numbers(5, probe), failing))).rejects.toThrow('cannot map 1');
    expect(probe.closed).toBe(true);
  });

  it('refuses a function that is not one with a TypeError', () => {
    expect(() => map(undefined as never)).toThrow(/map: fn must be a function, got undefined/);
  });
});
