import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.ts';
import { CreditBudgetGate } from '../../src/gates.ts';
import { creditCap, dedupe, map, mergeMap, pipe, take } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './live.ts';
import { collect, controlled, numbers, type Probe, RecordingControl } from './sources.ts';

/** Inner streams that count how many run at once. */
function gauge() {
  let running = 0;
  let peak = 0;
  return {
    get peak() {
      return peak;
    },
    stream(count: number, gapMs: number): AsyncIterable<number> {
      return {
        async *[Symbol.asyncIterator]() {
          running++;
          peak = Math.max(peak, running);
          try {
            for (let i = 0; i < count; i++) {
              await new Promise((resolve) => setTimeout(resolve, gapMs));
              yield i;
            }
          } finally {
            running--;
          }
        },
      };
    },
  };
}

describe('mergeMap', () => {
  it('yields every record of every inner stream', async () => {
    const out = await collect(pipe([1, 2, 3], mergeMap((n) => Array.from({ length: n }, (_, i) => `${n}.${i}`), { concurrency: 2 })));
    expect(out.sort()).toEqual(['1.0', '2.0', '2.1', '3.0', '3.1', '3.2']);
  });

  it('walks at most concurrency inner streams at once, and that many when there is work', async () => {
    const g = gauge();
    await collect(pipe(numbers(9), mergeMap(() => g.stream(3, 2), { concurrency: 3 })));
    expect(g.peak).toBe(3);
  });

  it('merges records as they arrive rather than stream by stream', async () => {
    const inputs = [{ gap: 40, tag: 'slow' }, { gap: 1, tag: 'fast' }];
    const out = await collect(
      pipe(
        inputs,
        mergeMap(({ gap, tag }) => pipe(numbers(2, undefined, gap), map((n) => `${tag} ${n}`)), { concurrency: 2 }),
      ),
    );
    expect(out.slice(0, 2)).toEqual(['fast 0', 'fast 1']);
  });

  it('passes each input with its index to fn', async () => {
    const out = await collect(pipe(['a', 'b'], mergeMap((v, i) => [`${i}${v}`], { concurrency: 1 })));
    expect(out).toEqual(['0a', '1b']);
  });

  it('keeps at most one record fetched ahead per inner stream', async () => {
    const probes: Probe[] = Array.from({ length: 3 }, () => ({ pulled: 0, closed: false }));
    const iterator = pipe([0, 1, 2], mergeMap((i) => numbers(100, probes[i]), { concurrency: 3 }))[Symbol.asyncIterator]();
    await iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const pulled = probes.reduce((sum, p) => sum + p.pulled, 0);
    expect(pulled).toBeLessThanOrEqual(3);
    await iterator.return?.();
  });

  it('closes every running inner stream and the input source when the consumer breaks', async () => {
    const outer: Probe = { pulled: 0, closed: false };
    const probes: Probe[] = Array.from({ length: 10 }, () => ({ pulled: 0, closed: false }));
    let started = 0;
    const stream = pipe(
      numbers(10, outer),
      mergeMap(
        (i) => {
          started++;
          return numbers(1000, probes[i], 1);
        },
        { concurrency: 3 },
      ),
    );
    let seen = 0;
    for await (const _ of stream) if (++seen === 5) break;
    expect(started).toBe(3);
    expect(probes.slice(0, 3).every((p) => p.closed)).toBe(true);
    expect(outer.closed).toBe(true);
  });

  it('surfaces the first inner error and closes the other inner streams', async () => {
    const healthy: Probe = { pulled: 0, closed: false };
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error('inner walk failed');
    }
    const stream = pipe([0, 1], mergeMap((i) => (i === 0 ? numbers(1000, healthy, 1) : failing()), { concurrency: 2 }));
    await expect(collect(stream)).rejects.toThrow('inner walk failed');
    expect(healthy.closed).toBe(true);
  });

  it('surfaces an error thrown by fn', async () => {
    const stream = pipe(
      [0, 1],
      mergeMap((i) => {
        if (i === 1) throw new Error('no stream for 1');
        return numbers(3);
      }),
    );
    await expect(collect(stream)).rejects.toThrow('no stream for 1');
  });

  it('surfaces an error of the input source', async () => {
    async function* inputs(): AsyncGenerator<number> {
      yield 0;
      throw new Error('inputs unreadable');
    }
    await expect(collect(pipe(inputs(), mergeMap(() => numbers(2))))).rejects.toThrow('inputs unreadable');
  });

  it('refuses fn results that are not iterable with a TypeError', async () => {
    await expect(collect(pipe([0], mergeMap(() => 7 as never)))).rejects.toThrow(/mergeMap: the stream fn returned for input 0/);
  });

  it('rejects with the signal reason and closes inner streams when aborted', async () => {
    const controller = new AbortController();
    const probe: Probe = { pulled: 0, closed: false };
    const stream = pipe([0], mergeMap(() => numbers(1000, probe, 1), { signal: controller.signal }));
    const walk = (async () => {
      for await (const n of stream) if (n === 2) controller.abort(new Error('cancelled by user'));
    })();
    await expect(walk).rejects.toThrow('cancelled by user');
    expect(probe.closed).toBe(true);
  });

  it('attaches gates from below to the input control and to every inner stream, including later ones', async () => {
    const outerControl = new RecordingControl();
    const innerControls = Array.from({ length: 4 }, () => new RecordingControl());
    const stream = pipe(
      controlled(numbers(4), outerControl),
      mergeMap((i) => controlled(numbers(2), innerControls[i]), { concurrency: 2 }),
      take(100),
      creditCap(50),
    );
    await collect(stream);
    expect(outerControl.gates).toHaveLength(1);
    const cap = outerControl.gates[0];
    expect(cap).toBeInstanceOf(CreditBudgetGate);
    for (const control of innerControls) expect(control.gates).toEqual([cap]);
  });

  it('reports a duplicate to the control of the inner stream that yielded it', async () => {
    const controls = [new RecordingControl(), new RecordingControl()];
    const stream = pipe(
      [0, 1],
      mergeMap((i) => controlled(i === 0 ? numbers(2) : sequence([7, 7, 7]), controls[i]), { concurrency: 1 }),
      dedupe((n) => n),
    );
    expect(await collect(stream)).toEqual([0, 1, 7]);
    expect(controls[0].events).toEqual([]);
    expect(controls[1].events.map((e) => e.count)).toEqual([1, 1]);
  });

  it.each([0, -1, 1.5])('refuses concurrency = %s with a TypeError', (concurrency) => {
    expect(() => mergeMap(() => [], { concurrency })).toThrow(/mergeMap: concurrency must be an integer ≥ 1/);
  });

  it('refuses fn that is not a function with a TypeError', () => {
    expect(() => mergeMap('inputs' as never)).toThrow(/mergeMap: fn must be a function/);
  });
});

async function* sequence<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

describe('mergeMap against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    // Some latency, so requests are in flight when the consumer stops.
    sandbox = await startSandbox({ port: 0, latencyMs: 15 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('merges every record of every walk', async () => {
    const client = clientOf(sandbox);
    const inputs = ['merge-a-n60', 'merge-b-n30', 'merge-c-n5'];
    const posts = await collect(pipe(inputs, mergeMap((subforum) => client.forum.subforum({ subforum, trim: true }), { concurrency: 3 })));
    expect(posts).toHaveLength(95);
    expect(posts.filter((p) => p.subforum === 'merge-b-n30')).toHaveLength(30);
  });

  it('buys no page after the consumer breaks', async () => {
    const client = clientOf(sandbox);
    const inputs = Array.from({ length: 20 }, (_, i) => `cancel-${i}-n1000`);
    const stream = pipe(inputs, mergeMap((subforum) => client.forum.subforum({ subforum, trim: true }), { concurrency: 5 }));
    let seen = 0;
    for await (const _ of stream) if (++seen === 60) break;
    const chargedAtBreak = sandbox.requests.charged[sandbox.apiKey];
    const totalAtBreak = sandbox.requests.total;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(sandbox.requests.charged[sandbox.apiKey]).toBe(chargedAtBreak);
    expect(sandbox.requests.total).toBe(totalAtBreak);
  });

  it('surfaces the first error of a walk and ends the whole stream', async () => {
    const client = clientOf(sandbox);
    const inputs = ['errors-ok-n500', ''];
    const stream = pipe(inputs, mergeMap((subforum) => client.forum.subforum({ subforum, trim: true }), { concurrency: 2 }));
    await expect(collect(stream)).rejects.toBeInstanceOf(ValidationError);
  });
});
