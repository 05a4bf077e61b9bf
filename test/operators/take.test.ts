import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batch, filter, map, mergeMap, pipe, take, tap } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './live.ts';
import { collect, controlled, numbers, type Probe, ReadingControl } from './sources.ts';

describe('take', () => {
  it('yields the first n records', async () => {
    expect(await collect(pipe(numbers(10), take(3)))).toEqual([0, 1, 2]);
  });

  it('pulls no record past the n-th and closes its source', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    await collect(pipe(numbers(10, probe), take(3)));
    expect(probe).toEqual({ pulled: 3, closed: true });
  });

  it('never starts its source when n is 0', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    expect(await collect(pipe(numbers(10, probe), take(0)))).toEqual([]);
    expect(probe).toEqual({ pulled: 0, closed: false });
  });

  it('yields everything from a shorter source', async () => {
    expect(await collect(pipe(numbers(2), take(5)))).toEqual([0, 1]);
  });

  it('closes its source when the consumer breaks first', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    for await (const n of pipe(numbers(10, probe), take(5))) if (n === 1) break;
    expect(probe).toEqual({ pulled: 2, closed: true });
  });

  it.each([-1, 1.5, Number.NaN, '3'])('refuses n = %s with a TypeError', (n) => {
    expect(() => take(n as number)).toThrow(/take: n must be an integer/);
  });
});

describe('take telling the walk above it how many records it will read', () => {
  it('says n to its source as it starts, and not before', async () => {
    const control = new ReadingControl();
    const stream = pipe(controlled(numbers(10), control), take(3));
    expect(control.reads).toEqual([]);
    expect(await collect(stream)).toEqual([0, 1, 2]);
    expect(control.reads).toEqual([3]);
  });

  it('is passed on unchanged through map and tap, multiplied through batch(k)', async () => {
    const control = new ReadingControl();
    await collect(pipe(controlled(numbers(10), control), map((n) => n * 2), tap(() => undefined), take(4)));
    expect(control.reads).toEqual([4]);
    const batched = new ReadingControl();
    await collect(pipe(controlled(numbers(20), batched), batch(3), take(2)));
    expect(batched.reads).toEqual([6]);
  });

  it('is not passed through filter, which may drop any number of records', async () => {
    const control = new ReadingControl();
    expect(await collect(pipe(controlled(numbers(10), control), filter((n) => n % 2 === 0), take(2)))).toEqual([0, 2]);
    expect(control.reads).toEqual([]);
  });

  it('take(m) below take(n) says the smaller of the two', async () => {
    const control = new ReadingControl();
    await collect(pipe(controlled(numbers(10), control), take(5), map((n) => n), take(2)));
    expect(Math.min(...control.reads)).toBe(2);
    expect(control.reads.every((n) => n >= 2 && n <= 5)).toBe(true);
  });

  it('reaches every inner stream of a mergeMap, also those started later, never the input source', async () => {
    const outer = new ReadingControl();
    const inners = [new ReadingControl(), new ReadingControl(), new ReadingControl()];
    const merged = pipe(
      controlled(numbers(3), outer),
      mergeMap((i: number) => controlled(numbers(2), inners[i]), { concurrency: 1 }),
      take(5),
    );
    expect(await collect(merged)).toHaveLength(5);
    expect(outer.reads).toEqual([]);
    expect(inners.map((inner) => inner.reads)).toEqual([[5], [5], [5]]);
  });
});

describe('take against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('stops the client walk through other operators, buying only the pages it needed', async () => {
    const client = clientOf(sandbox);
    const charged = sandbox.requests.charged[sandbox.apiKey] ?? 0;
    // 25 posts a page with trim: 30 posts need exactly 2 of the 40 pages.
    const titles = await collect(
      pipe(client.forum.subforum({ subforum: 'take-n1000', trim: true }), filter(() => true), map((p) => p.title), take(30)),
    );
    expect(titles).toHaveLength(30);
    expect(sandbox.requests.charged[sandbox.apiKey] - charged).toBe(2);
  });

  it('with an n past every safe integer reads the whole walk', async () => {
    const client = clientOf(sandbox);
    expect(await collect(pipe(client.forum.subforum({ subforum: 'huge-n60', trim: true }), take(2 ** 60)))).toHaveLength(60);
  });

  it('lets a break in the consumer stop the client walk on the page it was reading', async () => {
    const client = clientOf(sandbox);
    const charged = sandbox.requests.charged[sandbox.apiKey] ?? 0;
    let seen = 0;
    for await (const _ of pipe(client.forum.subforum({ subforum: 'break-n1000', trim: true }), map((p) => p.id))) {
      if (++seen === 26) break;
    }
    expect(sandbox.requests.charged[sandbox.apiKey] - charged).toBe(2);
    expect(client.stats.requests).toBe(2);
  });
});
