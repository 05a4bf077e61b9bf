import { describe, expect, expectTypeOf, it } from 'vitest';
import { STREAM_CONTROL } from '../../src/control.ts';
import type { createClient } from '../../src/index.ts';
import { batch, dedupe, filter, map, pipe, take, tap } from '../../src/operators/index.ts';
import type { SubforumPost } from '../../src/records/forum.ts';
import { collect, controlled, numbers, RecordingControl } from './sources.ts';

interface Post {
  id: string;
  title: string;
  score: number;
}

describe('pipe', () => {
  it('applies operators left to right', async () => {
    const out = await collect(pipe(numbers(10), filter((n) => n % 2 === 0), map((n) => n * 10), take(3)));
    expect(out).toEqual([0, 20, 40]);
  });

  it('returns the source itself when given no operator', () => {
    const source = numbers(3);
    expect(pipe(source)).toBe(source);
  });

  it('accepts arrays as sources', async () => {
    expect(await collect(pipe([1, 2, 3], map((n) => n + 1)))).toEqual([2, 3, 4]);
  });

  it('lets types flow from the source through every operator', () => {
    const posts: AsyncIterable<Post> = (async function* () {})();
    expectTypeOf(pipe(posts, map((p) => p.title))).toEqualTypeOf<AsyncIterable<string>>();
    expectTypeOf(pipe(posts, filter((p) => p.score > 1), map((p) => p.score), batch(10))).toEqualTypeOf<
      AsyncIterable<number[]>
    >();
    expectTypeOf(pipe(posts, tap((p) => p.id), take(1))).toEqualTypeOf<AsyncIterable<Post>>();
    expectTypeOf(pipe(posts, map(async (p) => p.score))).toEqualTypeOf<AsyncIterable<number>>();
  });

  it('types a client stream through the pipe from its record type', () => {
    // Checked by the compiler only: the function is never called, so no client is made.
    const typesOf = (client: ReturnType<typeof createClient>) => {
      expectTypeOf(pipe(client.forum.subforum({ subforum: 'typescript' }), map((p) => p.title))).toEqualTypeOf<
        AsyncIterable<string>
      >();
      expectTypeOf(pipe(client.forum.subforum({ subforum: 'typescript' }), dedupe('id'), take(5))).toEqualTypeOf<
        AsyncIterable<SubforumPost>
      >();
    };
    expectTypeOf(typesOf).toBeFunction();
  });

  it('keeps the control of the source at the end of a pipe of reshaping operators', () => {
    const control = new RecordingControl();
    const stream = pipe(controlled(numbers(3), control), map((n) => n + 1), filter(() => true), batch(2));
    expect((stream as unknown as Record<symbol, unknown>)[STREAM_CONTROL]).toBe(control);
  });

  it('refuses an operator that is not a function with a TypeError naming its position', () => {
    expect(() => pipe(numbers(1), map((n) => n), 'take' as never)).toThrow(/operator 2/);
  });

  it('refuses a source that is not iterable with a TypeError', () => {
    expect(() => pipe(42 as never, map((n) => n))).toThrow(TypeError);
  });
});
