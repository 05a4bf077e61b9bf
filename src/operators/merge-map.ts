import { controlOf, type Controlled, type OperatorEvent, type RequestGate, STREAM_CONTROL, type StreamControl } from '../control.ts';
import { assertFunction, assertInteger, assertIterable, asyncIteratorOf } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';

/** Options of `mergeMap`. */
export interface MergeMapOptions {
  /** Inner streams walked at once, at most (an integer ≥ 1). Default 4. */
  concurrency?: number;
  /** Aborting it cancels every inner stream and rejects the merged stream with the signal's reason. */
  signal?: AbortSignal;
}

const MERGE_MAP_OPTIONS = { concurrency: true, signal: true } as const satisfies KnownOptions<MergeMapOptions>;

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
export function mergeMap<A, B>(
  fn: (input: A, index: number) => AnyIterable<B>,
  options: MergeMapOptions = {},
): Operator<A, B> {
  assertFunction(fn, 'mergeMap: fn');
  refuseUnknownOptions(options, MERGE_MAP_OPTIONS, 'mergeMap');
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
  const merge = new Merge(source, fn, concurrency, fanOut, signal);
  try {
    for (let record = await merge.next(); record !== undefined; record = await merge.next()) {
      fanOut.latest = record.inner.control;
      yield record.value;
      merge.pullInner(record.inner);
    }
  } finally {
    await merge.close();
  }
}

/** One merge in progress: the source and the running inner streams, and what settled while it waited. */
class Merge<A, B> {
  readonly #outer: AsyncIterator<A>;
  #outerDone = false;
  #outerPending = false;
  #index = 0;
  readonly #running = new Set<Inner<B>>();
  // At most one settlement per running inner stream, one for the source and one for the signal.
  readonly #settled: Settled<A, B>[] = [];
  #wake: (() => void) | undefined;
  readonly #onAbort = (): void => this.#fail(this.signal?.reason);

  constructor(
    source: AnyIterable<A>,
    private readonly fn: (input: A, index: number) => AnyIterable<B>,
    private readonly concurrency: number,
    private readonly fanOut: FanOutControl,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.#outer = asyncIteratorOf(source);
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The next record of any inner stream, or undefined once the source and every inner stream are done. Throws the first failure. */
  async next(): Promise<{ inner: Inner<B>; value: B } | undefined> {
    for (;;) {
      if (!this.#outerDone && !this.#outerPending && this.#running.size < this.concurrency) this.#pullOuter();
      const event = this.#settled.shift();
      if (event === undefined) {
        if (this.#outerDone && this.#running.size === 0) return undefined;
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      } else if (event.from === 'failure') {
        throw event.error;
      } else if (event.from === 'outer') {
        this.#outerPending = false;
        if (event.result.done === true) this.#outerDone = true;
        else this.#start(event.result.value);
      } else if (event.result.done === true) {
        this.#running.delete(event.inner);
        this.fanOut.finished(event.inner.control);
      } else {
        return { inner: event.inner, value: event.result.value };
      }
    }
  }

  pullInner(inner: Inner<B>): void {
    settle(() => inner.iterator.next()).then((result) => this.#push({ from: 'inner', inner, result }), (error: unknown) => this.#fail(error));
  }

  /**
   * Ends every walk still running and waits for them to stop, so nothing is still buying pages once
   * the consumer moved on; an error while closing is dropped, since the stream is already ending
   * (possibly with another error).
   */
  async close(): Promise<void> {
    this.signal?.removeEventListener('abort', this.#onAbort);
    const closing: Promise<unknown>[] = [];
    for (const { iterator, control } of this.#running) {
      this.fanOut.finished(control);
      closing.push(settle(() => iterator.return?.()));
    }
    if (!this.#outerDone) closing.push(settle(() => this.#outer.return?.()));
    await Promise.allSettled(closing);
  }

  /** The inner stream of one input, its gates attached before its first pull. */
  #start(input: A): void {
    const index = this.#index++;
    const stream = this.fn(input, index);
    assertIterable(stream, `mergeMap: the stream fn returned for input ${index}`);
    const control = controlOf(stream);
    this.fanOut.started(control);
    const inner = { iterator: asyncIteratorOf(stream), control };
    this.#running.add(inner);
    this.pullInner(inner);
  }

  #pullOuter(): void {
    this.#outerPending = true;
    settle(() => this.#outer.next()).then((result) => this.#push({ from: 'outer', result }), (error: unknown) => this.#fail(error));
  }

  #push(event: Settled<A, B>): void {
    this.#settled.push(event);
    this.#wake?.();
  }

  #fail(error: unknown): void {
    this.#push({ from: 'failure', error });
  }
}

/** `step()` as a promise, a synchronous throw included. */
function settle<T>(step: () => T | Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(step()));
}
