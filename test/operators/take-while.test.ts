import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { map, pipe, takeWhile } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './live.ts';
import { collect, numbers, type Probe } from './sources.ts';

describe('takeWhile', () => {
  it('yields records while the test holds and drops the first that fails', async () => {
    expect(await collect(pipe(numbers(10), takeWhile((n) => n < 4)))).toEqual([0, 1, 2, 3]);
  });

  it('pulls no record past the first that fails and closes its source', async () => {
    const probe: Probe = { pulled: 0, closed: false };
    await collect(pipe(numbers(10, probe), takeWhile((n) => n < 4)));
    expect(probe).toEqual({ pulled: 5, closed: true });
  });

  it('awaits an async test and passes the index', async () => {
    const seen: number[] = [];
    const out = await collect(
      pipe(
        numbers(10),
        takeWhile(async (n, index) => {
          seen.push(index);
          return n !== 2;
        }),
      ),
    );
    expect(out).toEqual([0, 1]);
    expect(seen).toEqual([0, 1, 2]);
  });

  it('yields everything when every record passes', async () => {
    expect(await collect(pipe(numbers(3), takeWhile(() => true)))).toEqual([0, 1, 2]);
  });

  it.each([undefined, 3, 'n < 4'])('refuses fn = %s with a TypeError', (fn) => {
    expect(() => takeWhile(fn as never)).toThrow(/takeWhile: fn must be a function/);
  });
});

describe('takeWhile against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('stops a newest-first walk at the first older record, buying no page after the one holding it', async () => {
    const client = clientOf(sandbox);
    const params = { subforum: 'since-n1000', sort: 'new', trim: true } as const;
    // The 40th post (on the second page of 25) is the first one at or below the mark.
    const all = await collect(pipe(client.forum.subforum(params), map((post) => post.created_utc)));
    const since = all[39];
    const charged = sandbox.requests.charged[sandbox.apiKey] ?? 0;
    const fresh = await collect(pipe(client.forum.subforum(params), takeWhile((post) => post.created_utc > since)));
    expect(fresh).toHaveLength(39);
    expect(sandbox.requests.charged[sandbox.apiKey] - charged).toBe(2);
  });
});
