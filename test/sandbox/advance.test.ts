/**
 * `sandbox.advance({ records })`: time passes for every paginated resource. Read through the client
 * and the operation table's record keys and times, so the growth is seen as an analyst would see it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { isNewestFirst, keyOf, timeOf } from '../../src/operations/record-meta.ts';
import { findOperation, type OperationId } from '../../src/operations/table.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

/** One small resource of every operation whose walk has more than one page. */
const GROWING: Array<[OperationId, Record<string, string>]> = [
  ['shortvideo/videos', { handle: 'grow-n45' }],
  ['shortvideo/videos/popular', { countryCode: 'US', period: '30' }],
  ['shortvideo/comment-replies', { comment_id: '7345-n45', url: 'https://shortvideo.example/@a/video/1' }],
  ['shortvideo-shop/products', { url: 'https://shop.example/store/x-n45' }],
  ['socialnet/profile/reels', { url: 'https://socialnet.example/page-n45' }],
  ['socialnet/group/posts', { url: 'https://socialnet.example/groups/g-n45' }],
  ['socialnet-marketplace/search', { lat: '40.7', lng: '-74', query: 'bike-n45' }],
  ['socialnet-ad-library/search', { query: 'shoes-n45' }],
  ['videosite/channel/shorts', { handle: 'chan-n45' }],
  ['videosite/video/comments', { url: 'https://videosite.example/watch?v=x-n45', order: 'newest' }],
  ['microblog/comments', { url: 'https://microblog.example/u/status/123-n45' }],
  ['search-ad-library/company-ads', { domain: 'acme-n45' }],
  ['photoshare/search/hashtag', { hashtag: 'food-n45' }],
  ['forum/subforum', { subforum: 'grow-n45', sort: 'new' }],
];

async function walk(client: Client, id: OperationId, params: Record<string, string>): Promise<unknown[]> {
  const records: unknown[] = [];
  for await (const record of client.stream(id, params)) records.push(record);
  return records;
}

describe('sandbox.advance', () => {
  let sandbox: Sandbox;
  let client: Client;
  const before = new Map<string, unknown[]>();
  const after = new Map<string, unknown[]>();
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    for (const [id, params] of GROWING) before.set(id, await walk(client, id, params));
    sandbox.advance({ records: 7 });
    for (const [id, params] of GROWING) after.set(id, await walk(client, id, params));
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it.each(GROWING.map(([id]) => [id]))('%s: gains 7 new records in front of the ones it had, each key once', (id) => {
    const op = findOperation(id)!;
    const old = before.get(id)!.map((record) => keyOf(op, record));
    const now = after.get(id)!.map((record) => keyOf(op, record));
    expect(now).toHaveLength(old.length + 7);
    expect(now.slice(7)).toEqual(old);
    expect(new Set(now).size).toBe(now.length);
  });

  it.each(GROWING.filter(([id, params]) => isNewestFirst(findOperation(id)!, params)).map(([id]) => [id]))(
    '%s: the new records are newer than every old one',
    (id) => {
      const op = findOperation(id)!;
      const newest = Math.max(...before.get(id)!.map((record) => timeOf(op, record)!));
      const added = after.get(id)!.slice(0, 7).map((record) => timeOf(op, record)!);
      expect(Math.min(...added)).toBeGreaterThan(newest);
      expect(added).toEqual([...added].sort((a, b) => b - a));
    },
  );

  it('grows the counters of existing records and keeps their times', () => {
    const [old, now] = [before.get('forum/subforum')!, after.get('forum/subforum')!.slice(7)] as Array<Array<{ score: number; created_utc: number }>>;
    expect(now.every((post, i) => post.score > old[i].score)).toBe(true);
    expect(now.map((post) => post.created_utc)).toEqual(old.map((post) => post.created_utc));
  });

  it('grows a -n count by the records added, as the server answers after each advance', async () => {
    const params = { subforum: 'count-n30', trim: 'true' };
    expect(await walk(client, 'forum/subforum', params)).toHaveLength(37);
    sandbox.advance({ records: 3 });
    expect(await walk(client, 'forum/subforum', params)).toHaveLength(40);
  });

  it.each([-1, 1.5, Number.NaN])('refuses records = %s with a TypeError', (records) => {
    expect(() => sandbox.advance({ records })).toThrow(/advance: records must be a non-negative integer/);
  });
});
