import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filter, map, pipe, take } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './live.ts';
import { collect, numbers, type Probe } from './sources.ts';

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
