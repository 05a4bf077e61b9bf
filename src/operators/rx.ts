/**
 * The bridge to rxjs. `toObservable` turns a stream into an Observable whose unsubscribe stops the
 * walk; `fromObservable` turns an Observable into a stream with a bounded buffer, since an Observable
 * pushes at its own pace while a stream's consumer pulls at its own.
 */
import { Observable, type Subscription } from 'rxjs';
import { SocialstreamError } from '../errors.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';
import { assertInteger, assertIterable, asyncIteratorOf, describe } from './derive.ts';
import type { AnyIterable } from './types.ts';

/** The Observable emitted faster than the stream's consumer took records, and `bufferSize` ran out. */
export class BufferOverflowError extends SocialstreamError {
  readonly code = 'BUFFER_OVERFLOW';
  constructor(readonly bufferSize: number) {
    super(
      `fromObservable: the observable emitted more than ${bufferSize} values ahead of the consumer; ` +
        'raise bufferSize or slow the source (for example with throttle upstream)',
    );
  }
}

/** Each subscription walks `stream` afresh; unsubscribing calls the walk's `return()`, so it buys no further page. */
export function toObservable<T>(stream: AnyIterable<T>): Observable<T> {
  assertIterable(stream, 'toObservable');
  return new Observable<T>((subscriber) => {
    const iterator = asyncIteratorOf(stream);
    let closed = false;
    const walk = async (): Promise<void> => {
      try {
        for (;;) {
          const result = await iterator.next();
          if (closed) return;
          if (result.done === true) return subscriber.complete();
          subscriber.next(result.value);
        }
      } catch (error) {
        if (!closed) subscriber.error(error);
      }
    };
    void walk();
    return () => {
      if (closed) return;
      closed = true;
      // After complete or error the walk is over and return() is a no-op; after unsubscribe it stops the walk.
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
    };
  });
}

/** Options of `fromObservable`. */
export interface FromObservableOptions {
  /**
   * Values held for a consumer that is slower than the Observable, at most. One more value than that
   * ends the stream with `BufferOverflowError` (after the values already held) and unsubscribes:
   * the buffer never grows without bound. Default 1000.
   */
  bufferSize?: number;
}

const FROM_OBSERVABLE_OPTIONS = { bufferSize: true } as const satisfies KnownOptions<FromObservableOptions>;

/** A stream of the Observable's values; it subscribes when iterated and unsubscribes when the consumer stops. */

export function fromObservable<T>(observable: Observable<T>, options: FromObservableOptions = {}): AsyncIterable<T> {
  if (!(observable instanceof Observable)) {
    throw new TypeError(`fromObservable: expected an rxjs Observable, got ${describe(observable)}`);
  }
  refuseUnknownOptions(options, FROM_OBSERVABLE_OPTIONS, 'fromObservable');
  const { bufferSize = 1000 } = options;
  assertInteger(bufferSize, 'fromObservable: bufferSize', 1);
  return { [Symbol.asyncIterator]: () => drain(observable, bufferSize) };
}

async function* drain<T>(observable: Observable<T>, bufferSize: number): AsyncGenerator<T> {
  const buffer: T[] = [];
  // Set once the Observable ended: `{ error }` for an error or an overflow, `{}` for completion.
  let end: { error?: unknown } | undefined;
  let wake: (() => void) | undefined;
  let subscription: Subscription | undefined;
  const finish = (outcome: { error?: unknown }): void => {
    end ??= outcome;
    wake?.();
  };
  try {
    subscription = observable.subscribe({
      next: (value) => {
        if (end !== undefined) return;
        if (buffer.length >= bufferSize) {
          finish({ error: new BufferOverflowError(bufferSize) });
          subscription?.unsubscribe();
          return;
        }
        buffer.push(value);
        wake?.();
      },
      error: (error: unknown) => finish({ error }),
      complete: () => finish({}),
    });
    // A synchronous Observable may overflow before `subscribe` even returned.
    if (end !== undefined) subscription.unsubscribe();
    for (;;) {
      if (buffer.length > 0) {
        yield buffer.shift() as T;
        continue;
      }
      if (end !== undefined) {
        if ('error' in end) throw end.error;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    subscription?.unsubscribe();
  }
}
