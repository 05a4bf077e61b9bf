import { describe, expect, it } from 'vitest';
import { pipe, tap } from '../../src/operators/index.ts';
import { collect, numbers } from './sources.ts';

describe('tap', () => {
  it('sees every record with its index and passes it on unchanged', async () => {
    const seen: string[] = [];
    const out = await collect(pipe(numbers(3), tap((n, i) => seen.push(`${i}:${n}`))));
    expect(out).toEqual([0, 1, 2]);
    expect(seen).toEqual(['0:0', '1:1', '2:2']);
  });

  it('waits for an async function before passing the record on', async () => {
    const order: string[] = [];
    const stream = pipe(
      numbers(2),
      tap(async (n) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`tapped ${n}`);
      }),
    );
    for await (const n of stream) order.push(`got ${n}`);
    expect(order).toEqual(['tapped 0', 'got 0', 'tapped 1', 'got 1']);
  });

  it('surfaces an error of the function', async () => {
    const failing = tap(() => {
      throw new Error('side effect failed');
    });
    await expect(collect(pipe(numbers(2), failing))).rejects.toThrow('side effect failed');
  });

  it('refuses a function that is not one with a TypeError', () => {
    expect(() => tap(null as never)).toThrow(/tap: fn must be a function, got null/);
  });
});
