/**
 * How operators reach the requests of the streams above them.
 *
 * `creditCap` and `throttle` must govern HTTP requests, not records: a cap of N must hold even when
 * one page yields many records, when retries happen, and when `mergeMap` runs many walks at once.
 * So every stream the client returns, and every stream an operator returns, may carry a
 * `StreamControl` under the `STREAM_CONTROL` symbol. An operator that governs requests attaches a
 * `RequestGate` to its source's control; operators that only reshape records forward their source's
 * control unchanged; `mergeMap` attaches its gates to every inner stream it starts.
 *
 * The other way, `take(n)` tells the walk how many records its reader will take (`readAtMost`), so it
 * buys no page ahead past them; each operator between passes that count on as it translates (`batch(k)`
 * multiplies it) or not at all (`filter`: no count of records is known to be enough).
 */

/** Decides, before every HTTP attempt (first tries and retries alike), whether it may go ahead. */
export interface RequestGate {
  /**
   * Resolves `true` when the attempt may be sent (after any wait the gate imposes), `false` when the
   * walk must end cleanly without sending it (its checkpoint then still points at that page).
   * Rejects only with the signal's reason when `signal` aborts while waiting.
   */
  acquire(signal?: AbortSignal): Promise<boolean>;
}

/** What an operator reports back onto the owning client's `stats` and `events$`. */
export interface OperatorEvent {
  type: 'duplicate';
  /** The operator that reported it, e.g. `dedupe`. */
  operator: string;
  /** How many records this event stands for. */
  count: number;
}

/**
 * How an operator reaches the requests of the streams above it: gates before each request attempt,
 * events for the client, and how many records its reader will take.
 */
export interface StreamControl {
  /** Puts `gate` in front of every later request attempt of this stream (and of the streams it is made of). */
  addGate(gate: RequestGate): void;
  /** Reports an operator event to the client the stream belongs to. */
  report(event: OperatorEvent): void;
  /**
   * The iteration of this stream that starts next (or is running) will take at most `records` more
   * records: its walk buys no page it knows to lie past them, and risks at most 2 that may. Said by
   * `take(n)` as it starts; it holds until that iteration ends. It only spares credits: the stream
   * yields the same records either way. Absent where no count of records is known to be enough
   * (below `filter`, `dedupe`, `takeWhile`, which drop records).
   */
  readAtMost?(records: number): void;
}

/**
 * The symbol under which a stream carries its `StreamControl` (a registered symbol, so copies of
 * the package agree).
 */
export const STREAM_CONTROL: unique symbol = Symbol.for('socialstream.streamControl');

/**
 * A stream that carries a `StreamControl`: every client stream, and every stream an operator
 * returns from one.
 */
export interface Controlled {
  readonly [STREAM_CONTROL]: StreamControl;
}

/** The control of `source`, when it has one (plain iterables and arrays do not). */
export function controlOf(source: unknown): StreamControl | undefined {
  if (source !== null && (typeof source === 'object' || typeof source === 'function') && STREAM_CONTROL in source) {
    return (source as Controlled)[STREAM_CONTROL];
  }
  return undefined;
}
