import { assertFunction, assertIterable } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/** `pipe(source, ...ops)`: applies operators left to right, with types flowing from each to the next. */
export function pipe<S extends AnyIterable<unknown>>(source: S): S;
export function pipe<A, B>(source: AnyIterable<A>, op1: Operator<A, B>): AsyncIterable<B>;
export function pipe<A, B, C>(source: AnyIterable<A>, op1: Operator<A, B>, op2: Operator<B, C>): AsyncIterable<C>;
export function pipe<A, B, C, D>(
  source: AnyIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
): AsyncIterable<D>;
export function pipe<A, B, C, D, E>(
  source: AnyIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
): AsyncIterable<E>;
export function pipe<A, B, C, D, E, F>(
  source: AnyIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
): AsyncIterable<F>;
export function pipe<A, B, C, D, E, F, G>(
  source: AnyIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
  op6: Operator<F, G>,
): AsyncIterable<G>;
export function pipe<A, B, C, D, E, F, G, H>(
  source: AnyIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
  op6: Operator<F, G>,
  op7: Operator<G, H>,
): AsyncIterable<H>;
export function pipe<A, B, C, D, E, F, G, H, I>(
  source: AnyIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
  op6: Operator<F, G>,
  op7: Operator<G, H>,
  op8: Operator<H, I>,
): AsyncIterable<I>;
/** Past eight operators the types no longer flow; nest `pipe` calls to keep them. */
export function pipe(source: AnyIterable<unknown>, ...ops: Operator<unknown, unknown>[]): AnyIterable<unknown>;
export function pipe(source: AnyIterable<unknown>, ...ops: Operator<unknown, unknown>[]): AnyIterable<unknown> {
  assertIterable(source, 'pipe');
  ops.forEach((op, i) => assertFunction(op, `pipe: operator ${i + 1}`));
  return ops.reduce<AnyIterable<unknown>>((stream, op) => op(stream), source);
}
