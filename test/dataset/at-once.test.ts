import { describe, expect, it } from 'vitest';
import { mapAtOnce } from '../../src/at-once.ts';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mapAtOnce', () => {
  it('gives the results in the order of the items, whatever order the tasks end in', async () => {
    const results = await mapAtOnce([30, 5, 20, 1], 3, async (ms, index) => {
      await tick(ms);
      return `${index}:${ms}`;
    });
    expect(results).toEqual(['0:30', '1:5', '2:20', '3:1']);
  });

  it('runs at most the limit of tasks at once, and uses all of it', async () => {
    let running = 0;
    let most = 0;
    await mapAtOnce(Array.from({ length: 12 }, (_, i) => i), 4, async () => {
      most = Math.max(most, ++running);
      await tick(2);
      running--;
    });
    expect(most).toBe(4);
  });

  it('starts no item after a failure, and rejects with it only once the tasks under way have settled', async () => {
    const started: number[] = [];
    let settled = 0;
    const error = await mapAtOnce([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      if (item === 1) throw new RangeError('item 1');
      await tick(20);
      settled++;
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RangeError);
    expect(started).toEqual([0, 1]);
    expect(settled).toBe(1);
  });

  it('resolves at once with nothing for no items', async () => {
    expect(await mapAtOnce([], 4, () => Promise.reject(new Error('never called')))).toEqual([]);
  });
});
