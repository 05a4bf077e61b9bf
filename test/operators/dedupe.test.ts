import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dedupe, pipe } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './live.ts';
import { collect, controlled, RecordingControl } from './sources.ts';

const posts = [
  { id: 'a', author: { id: 1 } },
  { id: 'b', author: { id: 2 } },
  { id: 'a', author: { id: 3 } },
  { id: 'c', author: { id: 1 } },
];

async function* from<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

describe('dedupe', () => {
  it('drops records whose top-level key was seen before', async () => {
    const out = await collect(pipe(posts, dedupe('id')));
    expect(out.map((p) => p.id)).toEqual(['a', 'b', 'c']);
  });

  it('follows a dotted path into nested objects', async () => {
    const out = await collect(pipe(posts, dedupe('author.id')));
    expect(out.map((p) => p.id)).toEqual(['a', 'b', 'a']);
  });

  it('uses a key function, comparing array keys by value', async () => {
    const out = await collect(pipe(posts, dedupe((p) => [p.id, p.author.id])));
    expect(out).toHaveLength(4);
    const again = await collect(pipe([...posts, posts[0]], dedupe((p) => [p.id, p.author.id])));
    expect(again).toHaveLength(4);
  });

  it('compares array keys that hold an integer past 2^53 (a bigint) by its digits', async () => {
    const videos = [{ music: { id: 7471256031625273857n }, n: 1 }, { music: { id: 7471256031625273858n }, n: 2 }, { music: { id: 7471256031625273857n }, n: 3 }];
    const out = await collect(pipe(videos, dedupe((video) => [video.music.id])));
    expect(out.map((video) => video.n)).toEqual([1, 2]);
  });

  it('lets records without the key through', async () => {
    const out = await collect(pipe([{ id: 1 }, { other: 1 }, { other: 2 }, { id: 1 }], dedupe('id')));
    expect(out).toEqual([{ id: 1 }, { other: 1 }, { other: 2 }]);
  });

  it('reports every dropped duplicate to the source control', async () => {
    const control = new RecordingControl();
    await collect(pipe(controlled(from([1, 1, 2, 1, 3, 3]), control), dedupe((n) => n)));
    expect(control.events).toEqual(Array.from({ length: 3 }, () => ({ type: 'duplicate', operator: 'dedupe', count: 1 })));
  });

  it('with maxKeys forgets the least recently seen key, letting its duplicate pass again', async () => {
    const out = await collect(pipe([1, 2, 3, 1, 3, 2], dedupe((n) => n, { maxKeys: 2 })));
    // 1 is forgotten when 3 arrives; 3 seen again stays fresh; 2 was forgotten when 1 came back.
    expect(out).toEqual([1, 2, 3, 1, 2]);
  });

  it('with maxKeys still drops duplicates within its window', async () => {
    expect(await collect(pipe([5, 5, 6, 6, 5], dedupe((n) => n, { maxKeys: 2 })))).toEqual([5, 6]);
  });

  it.each(['', 'author..id', '.id', 42])('refuses the key %s with a TypeError', (key) => {
    expect(() => dedupe(key as string)).toThrow(/dedupe: key must be a dotted path/);
  });

  it.each([0, -1, 1.5])('refuses maxKeys = %s with a TypeError', (maxKeys) => {
    expect(() => dedupe('id', { maxKeys })).toThrow(/dedupe: maxKeys must be an integer ≥ 1/);
  });
});

describe('dedupe against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, faults: { duplicates: true } });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('yields exactly the -n count when every page repeats the last record of the one before', async () => {
    const client = clientOf(sandbox);
    const raw = await collect(clientOf(sandbox).forum.subforum({ subforum: 'dupes-n250', trim: true }));
    expect(raw.length).toBeGreaterThan(250);
    const posts = await collect(pipe(client.forum.subforum({ subforum: 'dupes-n250', trim: true }), dedupe('id')));
    expect(posts).toHaveLength(250);
    expect(new Set(posts.map((p) => p.id)).size).toBe(250);
  });

  it("counts every dropped duplicate in the client's stats and events", async () => {
    const client = clientOf(sandbox);
    const reported: number[] = [];
    const subscription = client.events$.subscribe((event) => {
      if (event.type === 'duplicate') reported.push(event.count);
    });
    const posts = await collect(pipe(client.forum.subforum({ subforum: 'dupes-stats-n250', trim: true }), dedupe('id')));
    subscription.unsubscribe();
    const dropped = client.stats.records - posts.length;
    expect(dropped).toBeGreaterThan(0);
    expect(client.stats.duplicates).toBe(dropped);
    expect(reported.reduce((a, b) => a + b, 0)).toBe(dropped);
  });
});
