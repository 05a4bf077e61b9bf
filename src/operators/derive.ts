/**
 * Builds an operator's output stream. The output carries its source's `StreamControl` (when it has
 * one), so a `throttle` or `creditCap` placed below a reshaping operator still reaches the requests
 * of the client streams above it, and a `take(n)` below it reaches the walk, translated, where the
 * operator can say how many source records its output needs.
 */
import { type Controlled, controlOf, STREAM_CONTROL, type StreamControl } from '../control.ts';
import type { AnyIterable } from './types.ts';

/** Throws a `TypeError` naming `operator` unless `source` is a sync or async iterable. */
export function assertIterable(source: unknown, operator: string): asserts source is AnyIterable<unknown> {
  const iterable =
    source !== null &&
    (typeof source === 'object' || typeof source === 'function') &&
    (typeof (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function' ||
      typeof (source as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function');
  if (!iterable) throw new TypeError(`${operator}: source must be an iterable or async iterable, got ${describe(source)}`);
}

/**
 * How many records of its source an operator's output of `records` records takes at most, for
 * `StreamControl.readAtMost`.
 */
export type RecordsRead = (records: number) => number;

/** One record of the source for each one out (`map`, `tap`): the control is passed on as it is. */
export const sameCount: RecordsRead = (records) => records;

/**
 * A stream whose iterations each run `run(source)`, carrying `source`'s control. Every iteration starts
 * afresh, as iterating the source again would. `reads` translates a count of records the reader will
 * take into the source's (`readAtMost`); an operator that gives none (`filter`) passes no count on.
 */
export function derive<A, B>(
  source: AnyIterable<A>,
  operator: string,
  run: (source: AnyIterable<A>) => AsyncIterator<B>,
  reads?: RecordsRead,
): AsyncIterable<B> {
  assertIterable(source, operator);
  const control = controlOf(source);
  const stream: AsyncIterable<B> = { [Symbol.asyncIterator]: () => run(source) };
  if (control === undefined) return stream;
  const controlled: AsyncIterable<B> & Controlled = { ...stream, [STREAM_CONTROL]: translated(control, reads) };
  return controlled;
}

/** `control`, with `readAtMost` translated by `reads`, or left out without it. */
function translated(control: StreamControl, reads: RecordsRead | undefined): StreamControl {
  if (reads === sameCount || control.readAtMost === undefined) return control;
  const forwarded: StreamControl = { addGate: (gate) => control.addGate(gate), report: (event) => control.report(event) };
  if (reads !== undefined) forwarded.readAtMost = (records) => control.readAtMost?.(reads(records));
  return forwarded;
}

/** An async iterator over `source`: its own when it is async, else one over its sync iterator (arrays too). */
export function asyncIteratorOf<T>(source: AnyIterable<T>): AsyncIterator<T> {
  if (Symbol.asyncIterator in source) return source[Symbol.asyncIterator]();
  const iterator = source[Symbol.iterator]();
  return {
    next: async () => iterator.next(),
    return: async () => iterator.return?.() ?? { done: true, value: undefined },
  };
}

/** A short description of a bad argument for error messages (never the whole value: it may be large). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'undefined') return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** Throws a `TypeError` unless `value` is an integer at least `min`. */
export function assertInteger(value: unknown, name: string, min: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new TypeError(`${name} must be an integer ≥ ${min}, got ${describe(value)}`);
  }
}

/** Throws a `TypeError` unless `value` is a function. */
export function assertFunction(value: unknown, name: string): asserts value is (...args: never[]) => unknown {
  if (typeof value !== 'function') throw new TypeError(`${name} must be a function, got ${describe(value)}`);
}
