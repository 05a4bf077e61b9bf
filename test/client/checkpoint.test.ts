import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Checkpoint, type Client, createClient } from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { charged, clientOf, collect, PAGED_WALKS } from './helpers.ts';

let sandbox: Sandbox;
let client: Client;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_sandbox_checkpoints', credits: 1_000_000 }] });
  client = clientOf(sandbox);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

/** Records and charged pages of a clean walk. */
async function cleanWalk(id: string, params: object): Promise<{ records: unknown[]; pages: number }> {
  const before = charged(sandbox);
  const records = await collect(client.stream(id as never, params as never));
  return { records, pages: charged(sandbox) - before };
}

describe('checkpoint and resume', () => {
  for (const walk of PAGED_WALKS) {
    it(`of ${walk.id} at every page boundary gives the clean walk's records and buys no page twice`, async () => {
      const clean = await cleanWalk(walk.id, walk.params);
      expect(clean.pages).toBeGreaterThan(1);
      for (let boundary = 1; boundary < clean.pages; boundary++) {
        const before = charged(sandbox);
        const first = client.stream(walk.id as never, walk.params as never, { maxPages: boundary });
        const head = await collect(first);
        const checkpoint = JSON.parse(JSON.stringify(first.checkpoint()));
        expect(checkpoint.pagesDone).toBe(boundary);
        const tail = await collect(client.resume(checkpoint));
        expect([...head, ...tail]).toEqual(clean.records);
        expect(charged(sandbox) - before).toBe(clean.pages);
      }
    });
  }

  it('in the middle of a page re-reads only that unfinished page and skips what was already yielded', async () => {
    const clean = await cleanWalk('forum/subforum', { subforum: 'mid-n250' });
    const before = charged(sandbox);
    const first = client.forum.subforum({ subforum: 'mid-n250' }, { limit: 130 });
    const head = await collect(first);
    const checkpoint = first.checkpoint();
    expect(checkpoint).toMatchObject({ pagesDone: 1, skip: 30, recordsYielded: 130 });
    const tail = await collect(client.resume(checkpoint));
    expect([...head, ...tail]).toEqual(clean.records);
    expect(charged(sandbox) - before).toBe(clean.pages + 1);
  });

  it('counts a page as finished when the caller stops right after its last record', async () => {
    const clean = await cleanWalk('forum/subforum', { subforum: 'edge-n250' });
    const before = charged(sandbox);
    const first = client.forum.subforum({ subforum: 'edge-n250' });
    const head = [];
    for await (const post of first) {
      head.push(post);
      if (head.length === 100) break;
    }
    expect(first.checkpoint()).toMatchObject({ pagesDone: 1, skip: 0 });
    const tail = await collect(client.resume(first.checkpoint()));
    expect([...head, ...tail]).toEqual(clean.records);
    expect(charged(sandbox) - before).toBe(clean.pages);
  });

  it('of the forum tree holds its pending cursors and continues depth first', async () => {
    const params = { url: 'https://forum.example/r/x/comments/cp1/thread-n90' };
    const clean = await cleanWalk('forum/post/comments', params);
    const before = charged(sandbox);
    const first = client.forum.postComments(params, { maxPages: 3 });
    const head = await collect(first);
    const checkpoint = first.checkpoint();
    expect(JSON.stringify(checkpoint.pending)).toContain('cursor');
    const tail = await collect(client.resume(JSON.parse(JSON.stringify(checkpoint))));
    expect([...head, ...tail]).toEqual(clean.records);
    expect(charged(sandbox) - before).toBe(clean.pages);
  });

  it('of a finished walk resumes to nothing and costs nothing', async () => {
    const stream = client.forum.subforum({ subforum: 'done-n20' });
    await collect(stream);
    const checkpoint = stream.checkpoint();
    expect(checkpoint.pending).toBeNull();
    const before = sandbox.requests.total;
    expect(await collect(client.resume(checkpoint))).toEqual([]);
    expect(sandbox.requests.total).toBe(before);
  });

  it('is plain JSON naming the operation and params, without the API key', async () => {
    const stream = client.forum.subforum({ subforum: 'json-n250', sort: 'new' }, { maxPages: 1 });
    await collect(stream);
    const checkpoint = stream.checkpoint();
    expect(JSON.parse(JSON.stringify(checkpoint))).toEqual(checkpoint);
    expect(checkpoint).toMatchObject({ version: 1, operation: 'forum/subforum', params: { subforum: 'json-n250', sort: 'new' } });
    expect(JSON.stringify(checkpoint)).not.toContain(sandbox.apiKey);
  });

  it('can be resumed by another client of the same account', async () => {
    const stream = client.forum.subforum({ subforum: 'other-n150' }, { maxPages: 1 });
    const head = await collect(stream);
    const other = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const tail = await collect(other.resume(stream.checkpoint()));
    await other.close();
    expect(head.length + tail.length).toBe(150);
  });

  it('continues where the last iteration of the same stream stopped', async () => {
    const stream = client.forum.subforum({ subforum: 'again-n150' });
    const head = [];
    for await (const post of stream) {
      head.push(post);
      if (head.length === 10) break;
    }
    const tail = await collect(stream);
    expect(head.length + tail.length).toBe(150);
    expect(new Set([...head, ...tail].map((post) => post.id)).size).toBe(150);
  });

  it('refuses a malformed checkpoint with a TypeError naming the field', () => {
    const good: Checkpoint = { version: 1, operation: 'forum/subforum', params: { subforum: 'x' }, pending: {}, skip: 0, pagesDone: 0, recordsYielded: 0 };
    expect(() => client.resume({ ...good, skip: -1 })).toThrow(/checkpoint\.skip/);
    expect(() => client.resume({ ...good, operation: 'nope/nothing' })).toThrow(/checkpoint\.operation/);
    expect(() => client.resume({ ...good, pending: { cursor: { bad: true } } })).toThrow(/checkpoint\.pending/);
  });
});
