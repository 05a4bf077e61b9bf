import { describe, expect, it } from 'vitest';
import { batch, pipe } from '../../src/operators/index.ts';
import { collect, numbers, type Probe } from './sources.ts';

describe('batch', () => {
  it('groups records into arrays of n and flushes the last partial batch', async () => {
    expect(await collect(pipe(numbers(7), batch(3)))).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('yields no batch for an empty source', async () => {
    expect(await collect(pipe(numbers(0), batch(3)))).toEqual([]);
  });

  it('yields no empty trailing batch when the count divides evenly', async () => {
    expect(await collect(pipe(numbers(4), batch(2)))).toEqual([[0, 1], [2, 3]]);
  });

  it('closes its source when the consumer breaks after the first batch', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    for await (const group of pipe(numbers(100, probe), batch(10))) if (group.length > 0) break;
    expect(probe).toEqual({ pulled: 10, closed: true });
  });

  it.each([0, -2, 2.5])('refuses n = %s with a TypeError', (n) => {
    expect(() => batch(n)).toThrow(/batch: n must be an integer ≥ 1/);
  });
});
