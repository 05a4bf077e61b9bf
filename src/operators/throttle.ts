import { controlOf } from '../control.ts';
import { assertRate, ThrottleGate } from '../gates.ts';
import { assertIterable, asyncIteratorOf, derive, describe, sameCount } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';

/** Options of `throttle`. */
export interface ThrottleOptions {
  /** Request attempts (retries included) per second, at most; attempts are spaced evenly, never in bursts. */
  requestsPerSecond: number;
  /** Stops a wait between records of a plain source; the stream then rejects with the signal's reason. */
  signal?: AbortSignal;
}

const THROTTLE_OPTIONS = { requestsPerSecond: true, signal: true } as const satisfies KnownOptions<ThrottleOptions>;

/**
 * `throttle({ requestsPerSecond })`: limits the request rate of the client streams above it in the
 * pipe, by putting a `ThrottleGate` in front of their requests. It never drops or delays records by
 * itself: a page's records flow as soon as the page arrives.
 *
 * A source without a stream control (an array, a plain generator) makes no requests to govern, so
 * there throttle spaces the records it passes instead, at least `1 / requestsPerSecond` apart.
 */
export function throttle<T>(options: ThrottleOptions): Operator<T, T> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`throttle: options must be an object such as { requestsPerSecond: 5 }, got ${describe(options)}`);
  }
  refuseUnknownOptions(options, THROTTLE_OPTIONS, 'throttle');
  const { requestsPerSecond, signal } = options;
  assertRate(requestsPerSecond);
  return (source) => {
    assertIterable(source, 'throttle');
    // One gate per use of the operator, so two pipes built from one `throttle(...)` do not share a rate.
    const gate = new ThrottleGate(requestsPerSecond);
    const control = controlOf(source);
    if (control === undefined) return derive(source, 'throttle', (s) => spaceRecords(s, gate, signal));
    control.addGate(gate);
    return derive(source, 'throttle', asyncIteratorOf, sameCount);
  };
}

async function* spaceRecords<T>(source: AnyIterable<T>, gate: ThrottleGate, signal?: AbortSignal): AsyncGenerator<T> {
  for await (const record of source) {
    await gate.acquire(signal);
    yield record;
  }
}
