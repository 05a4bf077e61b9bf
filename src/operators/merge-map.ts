/**
 * `mergeMap(fn, { concurrency })`: fan-out. Each input becomes a stream `fn(input, index)`; at most
 * `concurrency` of them are walked at once and their records are merged as they arrive.
 *
 * Buffering is bounded: each running inner stream has at most one record fetched ahead, and the next
 * one is only asked for after the consumer took it. The first error (from the input source, `fn` or any
 * inner stream) ends the whole stream; ending early (`break`, an error downstream, the signal) calls
 * `return()` on every inner stream still running, so no walk buys a further page.
 *
 * The returned stream's control reaches every request the fan-out makes: a gate attached below
 * (`creditCap`, `throttle`) goes to the input source's control and to every inner stream, including
 * those started later, so a cap of N holds across all walks together.
 */
import { controlOf, type Controlled, type OperatorEvent, type RequestGate, STREAM_CONTROL, type StreamControl } from '../control.ts';
import { assertFunction, assertInteger, assertIterable, asyncIteratorOf } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

export interface MergeMapOptions {
  /** Inner streams walked at once, at most (an integer ≥ 1). Default 4. */
  concurrency?: number;
  /** Aborting it cancels every inner stream and rejects the merged stream with the signal's reason. */
  signal?: AbortSignal;
}

export function mergeMap<A, B>(
  fn: (input: A, index: number) => AnyIterable<B>,
  options: MergeMapOptions = {},
): Operator<A, B> {
  assertFunction(fn, 'mergeMap: fn');
  const { concurrency = 4, signal } = options;
  assertInteger(concurrency, 'mergeMap: concurrency', 1);
  return (source) => {
    assertIterable(source, 'mergeMap');
    const fanOut = new FanOutControl(controlOf(source));
    const stream: AsyncIterable<B> & Controlled = {
      [Symbol.asyncIterator]: () => mergeRecords(source, fn, concurrency, fanOut, signal),
      [STREAM_CONTROL]: fanOut,
    };
    return stream;
  };
}

/**
 * The control of a merged stream: gates go everywhere, reports go to the walk the last record came
 * from, and a count of records the reader will take (`readAtMost`) to every inner stream, since all
 * of them may come from any one (never to the input source: its records are inputs, not these).
 */
class FanOutControl implements StreamControl {
  readonly #gates: RequestGate[] = [];
  readonly #running = new Set<StreamControl>();
  #readAtMost: number | undefined;
  /** The control of the inner stream that produced the latest record, so a `dedupe` below reports to its client. */
  latest: StreamControl | undefined;

  constructor(readonly outer: StreamControl | undefined) {}

  addGate(gate: RequestGate): void {
    this.#gates.push(gate);
    this.outer?.addGate(gate);
    for (const control of this.#running) control.addGate(gate);
  }

  report(event: OperatorEvent): void {
    (this.latest ?? this.outer)?.report(event);
  }

  readAtMost(records: number): void {
    this.#readAtMost = Math.min(this.#readAtMost ?? Infinity, records);
    for (const control of this.#running) control.readAtMost?.(records);
  }

  /** Called before an inner stream is first pulled, so its very first request already passes every gate. */
  started(control: StreamControl | undefined): void {
    if (control === undefined) return;
    for (const gate of this.#gates) control.addGate(gate);
    if (this.#readAtMost !== undefined) control.readAtMost?.(this.#readAtMost);
    this.#running.add(control);
  }

  finished(control: StreamControl | undefined): void {
    if (control !== undefined) this.#running.delete(control);
  }
}

interface Inner<B> {
  iterator: AsyncIterator<B>;
  control: StreamControl | undefined;
}

/** Something that settled while the merge waited: the input source, an inner stream, or the signal. */
type Settled<A, B> =
  | { from: 'outer'; result: IteratorResult<A> }
  | { from: 'inner'; inner: Inner<B>; result: IteratorResult<B> }
  | { from: 'failure'; error: unknown };

async function* mergeRecords<A, B>(
  source: AnyIterable<A>,
  fn: (input: A, index: number) => AnyIterable<B>,
  concurrency: number,
  fanOut: FanOutControl,
  signal: AbortSignal | undefined,
): AsyncGenerator<B> {
  signal?.throwIfAborted();
  const outer = asyncIteratorOf(source);
  let outerDone = false;
  let outerPending = false;
  let index = 0;
  const running = new Set<Inner<B>>();
  // At most one settlement per running inner stream, one for the source and one for the signal.
  const settled: Settled<A, B>[] = [];
  let wake: (() => void) | undefined;
  const push = (event: Settled<A, B>): void => {
    settled.push(event);
    wake?.();
  };
  const fail = (error: unknown): void => push({ from: 'failure', error });
  const onAbort = (): void => fail(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });

  const pullOuter = (): void => {
    outerPending = true;
    settle(() => outer.next()).then((result) => push({ from: 'outer', result }), fail);
  };
  const pullInner = (inner: Inner<B>): void => {
    settle(() => inner.iterator.next()).then((result) => push({ from: 'inner', inner, result }), fail);
  };

  try {
    for (;;) {
      if (!outerDone && !outerPending && running.size < concurrency) pullOuter();
      if (settled.length === 0) {
        if (outerDone && running.size === 0) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      const event = settled.shift() as Settled<A, B>;
      if (event.from === 'failure') throw event.error;
      if (event.from === 'outer') {
        outerPending = false;
        if (event.result.done === true) {
          outerDone = true;
          continue;
        }
        const stream = fn(event.result.value, index++);
        assertIterable(stream, `mergeMap: the stream fn returned for input ${index - 1}`);
        const control = controlOf(stream);
        fanOut.started(control);
        const inner = { iterator: asyncIteratorOf(stream), control };
        running.add(inner);
        pullInner(inner);
        continue;
      }
      if (event.result.done === true) {
        running.delete(event.inner);
        fanOut.finished(event.inner.control);
        continue;
      }
      fanOut.latest = event.inner.control;
      yield event.result.value;
      pullInner(event.inner);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    const closing: Promise<unknown>[] = [];
    for (const { iterator, control } of running) {
      fanOut.finished(control);
      closing.push(settle(() => iterator.return?.()));
    }
    if (!outerDone) closing.push(settle(() => outer.return?.()));
    // Wait for the walks to stop, so nothing is still buying pages once the consumer moved on; an
    // error while closing is dropped, since the stream is already ending (possibly with another error).
    await Promise.allSettled(closing);
  }
}

/** `step()` as a promise, a synchronous throw included. */
function settle<T>(step: () => T | Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(step()));
}
