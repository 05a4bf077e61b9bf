import { interval, Observable, of, Subject, take as rxTake, throwError, toArray, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SocialstreamError } from '../../src/errors.ts';
import { BufferOverflowError, fromObservable, map, pipe, toObservable } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './live.ts';
import { collect, numbers, type Probe } from './sources.ts';

describe('toObservable', () => {
  it('emits every record and completes', async () => {
    expect(await firstValueFrom(toObservable(numbers(4)).pipe(toArray()))).toEqual([0, 1, 2, 3]);
  });

  it('emits the values of an array and completes', async () => {
    expect(await firstValueFrom(toObservable(['a', 'b']).pipe(toArray()))).toEqual(['a', 'b']);
  });

  it('closes the walk when the subscriber unsubscribes', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    const first = await firstValueFrom(toObservable(numbers(1000, probe, 1)).pipe(rxTake(3), toArray()));
    expect(first).toEqual([0, 1, 2]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(probe.closed).toBe(true);
    expect(probe.pulled).toBeLessThanOrEqual(4);
  });

  it('sends the stream error to the subscriber', async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error('walk failed');
    }
    await expect(firstValueFrom(toObservable(failing()).pipe(toArray()))).rejects.toThrow('walk failed');
  });
});

describe('fromObservable', () => {
  it('yields every value of an observable and ends when it completes', async () => {
    expect(await collect(fromObservable(of(1, 2, 3)))).toEqual([1, 2, 3]);
  });

  it('surfaces the observable error after the values before it', async () => {
    const values: number[] = [];
    const source = new Observable<number>((subscriber) => {
      subscriber.next(1);
      subscriber.error(new Error('observable failed'));
    });
    await expect(
      (async () => {
        for await (const value of fromObservable(source)) values.push(value);
      })(),
    ).rejects.toThrow('observable failed');
    expect(values).toEqual([1]);
  });

  it('fails with BufferOverflowError once the consumer falls bufferSize values behind, after yielding those', async () => {
    const subject = new Subject<number>();
    const iterator = fromObservable(subject, { bufferSize: 3 })[Symbol.asyncIterator]();
    const first = iterator.next();
    for (let i = 0; i < 10; i++) subject.next(i);
    expect(subject.observed).toBe(false);
    const values = [(await first).value];
    let failure: unknown;
    try {
      for (;;) {
        const result = await iterator.next();
        if (result.done === true) break;
        values.push(result.value);
      }
    } catch (error) {
      failure = error;
    }
    expect(values).toEqual([0, 1, 2]);
    expect(failure).toBeInstanceOf(BufferOverflowError);
    expect(failure).toBeInstanceOf(SocialstreamError);
    expect((failure as BufferOverflowError).code).toBe('BUFFER_OVERFLOW');
    expect((failure as Error).message).toMatch(/more than 3 values ahead/);
  });

  it('keeps up without overflow when the consumer is as fast as the observable', async () => {
    expect(await collect(fromObservable(interval(1).pipe(rxTake(20)), { bufferSize: 2 }))).toHaveLength(20);
  });

  it('unsubscribes when the consumer breaks', async () => {
    const subject = new Subject<number>();
    const stream = fromObservable(subject);
    const walk = (async () => {
      for await (const value of stream) if (value === 1) break;
    })();
    await new Promise((resolve) => setTimeout(resolve, 0));
    subject.next(0);
    subject.next(1);
    await walk;
    expect(subject.observed).toBe(false);
  });

  it('subscribes only when iterated', () => {
    const subject = new Subject<number>();
    fromObservable(subject);
    expect(subject.observed).toBe(false);
  });

  it('refuses a value that is not an Observable with a TypeError', () => {
    expect(() => fromObservable([1, 2] as never)).toThrow(/fromObservable: expected an rxjs Observable/);
  });

  it.each([0, -1, 1.5])('refuses bufferSize = %s with a TypeError', (bufferSize) => {
    expect(() => fromObservable(of(1), { bufferSize })).toThrow(/bufferSize must be an integer ≥ 1/);
  });
});

describe('rx bridge round trip', () => {
  it('gives back the same records through toObservable and fromObservable', async () => {
    expect(await collect(fromObservable(toObservable(numbers(50)), { bufferSize: 100 }))).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
  });

  it('errors from a failing observable pass through untouched', async () => {
    await expect(collect(fromObservable(throwError(() => new RangeError('bad'))))).rejects.toBeInstanceOf(RangeError);
  });
});

describe('rx bridge against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, latencyMs: 5 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('stops the client walk when the observable is unsubscribed, buying no further page', async () => {
    const client = clientOf(sandbox);
    const stream = pipe(client.forum.subforum({ subforum: 'rx-n1000', trim: true }), map((p) => p.id));
    const ids = await firstValueFrom(toObservable(stream).pipe(rxTake(30), toArray()));
    expect(ids).toHaveLength(30);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // 30 posts need 2 pages of 25; the walk may not go on to a third after the unsubscribe.
    expect(client.stats.requests).toBe(2);
  });

  it('carries a whole client walk into rxjs and back unchanged', async () => {
    const client = clientOf(sandbox);
    const direct = await collect(client.forum.subforum({ subforum: 'rx-round-n120', trim: true }));
    const bridged = await collect(fromObservable(toObservable(client.forum.subforum({ subforum: 'rx-round-n120', trim: true }))));
    expect(bridged).toEqual(direct);
  });
});
