import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThrottleGate } from '../../src/gates.ts';
import { mergeMap, pipe, throttle } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './live.ts';
import { collect, controlled, numbers, RecordingControl } from './sources.ts';

describe('throttle on a plain source', () => {
  it('passes every record, spaced at least one interval apart', async () => {
    const started = performance.now();
    const times: number[] = [];
    const out: number[] = [];
    for await (const n of pipe(numbers(5), throttle({ requestsPerSecond: 100 }))) {
      out.push(n);
      times.push(performance.now() - started);
    }
    expect(out).toEqual([0, 1, 2, 3, 4]);
    times.forEach((time, n) => expect(time).toBeGreaterThanOrEqual(n * 10));
  });

  it('rejects with the signal reason when aborted during a wait', async () => {
    const controller = new AbortController();
    const stream = pipe(numbers(5), throttle({ requestsPerSecond: 1, signal: controller.signal }));
    const seen: number[] = [];
    const walk = (async () => {
      for await (const n of stream) {
        seen.push(n);
        controller.abort(new Error('user stopped'));
      }
    })();
    await expect(walk).rejects.toThrow('user stopped');
    expect(seen).toEqual([0]);
  });
});

describe('throttle on a controlled source', () => {
  it('attaches a ThrottleGate at the rate asked to the source control', () => {
    const control = new RecordingControl();
    pipe(controlled(numbers(1), control), throttle({ requestsPerSecond: 4 }));
    expect(control.gates).toHaveLength(1);
    expect(control.gates[0]).toBeInstanceOf(ThrottleGate);
    expect((control.gates[0] as ThrottleGate).requestsPerSecond).toBe(4);
  });

  it('passes records through without spacing them itself', async () => {
    const control = new RecordingControl();
    // At 0.001 requests per second, spacing records would take 1000 s; the gate is the client's to honour.
    const out = await collect(pipe(controlled(numbers(3), control), throttle({ requestsPerSecond: 0.001 })));
    expect(out).toEqual([0, 1, 2]);
  });
});

describe('throttle arguments', () => {
  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY, '5'])('refuses requestsPerSecond = %s with a TypeError', (rate) => {
    expect(() => throttle({ requestsPerSecond: rate as number })).toThrow(/requestsPerSecond must be a positive finite number/);
  });

  it('refuses a missing options object with a TypeError', () => {
    expect(() => throttle(undefined as never)).toThrow(/throttle: options must be an object/);
  });
});

/** Sends requests through `stream` until `count` have gone out; returns when each was sent (ms). */
async function requestTimes(client: ReturnType<typeof clientOf>, stream: AsyncIterable<unknown>, count: number): Promise<number[]> {
  const times: number[] = [];
  // events$ is synchronous: a request event is emitted as the attempt is sent.
  const subscription = client.events$.subscribe((event) => {
    if (event.type === 'request') times.push(performance.now());
  });
  try {
    for await (const _ of stream) if (times.length >= count) break;
  } finally {
    subscription.unsubscribe();
  }
  return times.slice(0, count);
}

function rateOf(times: number[]): number {
  return ((times.length - 1) / (times[times.length - 1] - times[0])) * 1000;
}

describe('throttle against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('holds one walk to within 10% of the requested rate, never in bursts', async () => {
    const client = clientOf(sandbox);
    // Slow enough that a busy test machine (late timers, a walk's own turnaround) stays far inside the 10%.
    const stream = pipe(client.forum.subforum({ subforum: 'throttle-one-n5000', trim: true }), throttle({ requestsPerSecond: 5 }));
    const times = await requestTimes(client, stream, 11);
    expect(rateOf(times)).toBeGreaterThan(4.5);
    expect(rateOf(times)).toBeLessThan(5.5);
    // Gaps are read from the client's request events, emitted a moment after the gate lets an attempt
    // through; on a loaded machine that moment varies by a few ms. A burst would show a gap near 0.
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(Math.min(...gaps)).toBeGreaterThan(160);
  });

  it('holds ten concurrent walks together to within 10% of the requested rate', async () => {
    const client = clientOf(sandbox);
    const inputs = Array.from({ length: 10 }, (_, i) => `throttle-many-${i}-n5000`);
    const stream = pipe(
      inputs,
      mergeMap((subforum) => client.forum.subforum({ subforum, trim: true }), { concurrency: 10 }),
      throttle({ requestsPerSecond: 5 }),
    );
    const times = await requestTimes(client, stream, 11);
    expect(rateOf(times)).toBeGreaterThan(4.5);
    expect(rateOf(times)).toBeLessThan(5.5);
    // Gaps are read from the client's request events, emitted a moment after the gate lets an attempt
    // through; on a loaded machine that moment varies by a few ms. A burst would show a gap near 0.
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(Math.min(...gaps)).toBeGreaterThan(160);
  });
});
