import { describe, expect, it } from 'vitest';
import { AtOnce, mapAtOnce } from '../../src/at-once.ts';

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

describe('AtOnce', () => {
  it('runs at most its limit of tasks at once, from any number of callers, in the order they came', async () => {
    const gate = new AtOnce(3);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        gate.run(async () => {
          started.push(i);
          most = Math.max(most, ++running);
          await tick(i % 2 === 0 ? 5 : 1);
          running--;
          return i * 10;
        }),
      ),
    );
    expect(most).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });

  it('runs an urgent task before every task waiting, not before those running', async () => {
    const gate = new AtOnce(1);
    const order: string[] = [];
    const task = (name: string) => async () => {
      order.push(name);
      await tick(2);
    };
    await Promise.all([gate.run(task('first')), gate.run(task('waiting 1')), gate.run(task('waiting 2')), gate.run(task('urgent'), true)]);
    expect(order).toEqual(['first', 'urgent', 'waiting 1', 'waiting 2']);
  });

  it('frees the place of a task that fails, and rejects with its failure', async () => {
    const gate = new AtOnce(1);
    const failed = gate.run(() => Promise.reject(new RangeError('first')));
    const second = gate.run(() => Promise.resolve('second'));
    await expect(failed).rejects.toBeInstanceOf(RangeError);
    expect(await second).toBe('second');
    expect(await gate.run(() => Promise.resolve('third'))).toBe('third');
  });
});
