/**
 * Plain sources for the operator tests that need no server: an async generator over numbers that
 * records how far it was pulled and whether it was closed, and a control that records what operators
 * attach and report. Client-backed behaviour is tested against the real sandbox elsewhere.
 */
import { type Controlled, type OperatorEvent, type RequestGate, STREAM_CONTROL, type StreamControl } from '../../src/control.ts';

export interface Probe {
  pulled: number;
  closed: boolean;
}

/** Yields 0..count-1 (one macrotask apart when `gapMs` is set); `probe` records pulls and closing. */
export function numbers(count: number, probe: Probe = { pulled: 0, closed: false }, gapMs?: number): AsyncIterable<number> {
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (let i = 0; i < count; i++) {
          if (gapMs !== undefined) await new Promise((resolve) => setTimeout(resolve, gapMs));
          probe.pulled++;
          yield i;
        }
      } finally {
        probe.closed = true;
      }
    },
  };
}

export class RecordingControl implements StreamControl {
  readonly gates: RequestGate[] = [];
  readonly events: OperatorEvent[] = [];
  addGate(gate: RequestGate): void {
    this.gates.push(gate);
  }
  report(event: OperatorEvent): void {
    this.events.push(event);
  }
}

/** A control that also records the counts of records readers said they will take (`readAtMost`), as a client stream's does. */
export class ReadingControl extends RecordingControl {
  readonly reads: number[] = [];
  readAtMost(records: number): void {
    this.reads.push(records);
  }
}

/** `source` with `control` under `STREAM_CONTROL`, as a client stream carries it. */
export function controlled<T>(source: AsyncIterable<T>, control: StreamControl): AsyncIterable<T> & Controlled {
  return { [Symbol.asyncIterator]: () => source[Symbol.asyncIterator](), [STREAM_CONTROL]: control };
}

export async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}
