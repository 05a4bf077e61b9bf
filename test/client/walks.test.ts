import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, ForumComment } from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { charged, clientOf, collect, LIST_WALKS, PAGED_WALKS, SINGLE_WALKS } from './helpers.ts';
import { stringifyExact } from '../../src/exact-json.ts';

let sandbox: Sandbox;
let client: Client;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_walks', credits: 1_000_000 }] });
  client = clientOf(sandbox);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

/** True when some object inside `value` is keyed "0", "1", … (a keyed collection left unconverted). */
function hasKeyedCollection(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasKeyedCollection);
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((key, index) => key === String(index))) return true;
  return Object.values(value).some(hasKeyedCollection);
}

describe('a full walk', () => {
  for (const walk of PAGED_WALKS) {
    it(`of ${walk.id} yields exactly the resource's ${walk.count} records, all distinct`, async () => {
      const records = await collect(client.stream(walk.id as never, walk.params as never));
      expect(records).toHaveLength(walk.count);
      expect(new Set(records.map((record) => stringifyExact(record))).size).toBe(walk.count);
    });
  }

  for (const walk of LIST_WALKS) {
    it(`of the unpaged ${walk.id} yields its ${walk.count} records from one request`, async () => {
      const before = charged(sandbox);
      const records = await collect(client.stream(walk.id as never, walk.params as never));
      expect(records).toHaveLength(walk.count);
      expect(charged(sandbox) - before).toBe(1);
    });
  }

  for (const walk of SINGLE_WALKS) {
    it(`of the single-record ${walk.id} yields one payload record (no envelope flag) from one request`, async () => {
      const before = charged(sandbox);
      const records = await collect(client.stream(walk.id as never, walk.params as never));
      expect(records).toHaveLength(1);
      expect(typeof records[0]).toBe('object');
      expect(records[0]).not.toHaveProperty('success');
      expect(charged(sandbox) - before).toBe(1);
    });
  }

  it('of every operation yields records with no keyed collection left, at any depth', async () => {
    for (const walk of [...PAGED_WALKS, ...LIST_WALKS, ...SINGLE_WALKS]) {
      const records = await collect(client.stream(walk.id as never, walk.params as never, { maxPages: 2 }));
      expect(records.filter(hasKeyedCollection), walk.id).toEqual([]);
    }
  });

  it('turns nested keyed collections into arrays (group post topComments)', async () => {
    const [post] = await collect(client.socialnet.groupPosts({ group_id: 'group-n3' }));
    expect(Array.isArray(post.topComments)).toBe(true);
  });

  it('keeps the raw keyed collections in pages()', async () => {
    const [page] = await collect(client.socialnet.groupPosts({ group_id: 'group-n3' }).pages());
    expect(Array.isArray(page.data.posts)).toBe(false);
    expect(Object.keys(page.data.posts)).toEqual(['0', '1', '2']);
  });

  it('of popular videos (no -n identifier) yields the total_count its first page announces', async () => {
    const [first] = await collect(client.shortvideo.popularVideos({ period: 30, countryCode: 'DE' }, { maxPages: 1 }).pages());
    const records = await collect(client.shortvideo.popularVideos({ period: 30, countryCode: 'DE' }));
    expect(records).toHaveLength(first.data.pagination.total_count);
  });

  it('of location search and photo-sharing transcript yields the list of their one response', async () => {
    const [page] = await collect(client.socialnetMarketplace.locationSearch({ query: 'berlin' }).pages());
    const locations = await collect(client.socialnetMarketplace.locationSearch({ query: 'berlin' }));
    expect(locations).toHaveLength(Object.keys(page.data.locations).length);
    const transcripts = await collect(client.photoshare.transcript({ url: 'https://photoshare.example/p/abc' }));
    expect(transcripts.length).toBeGreaterThan(0);
    expect(transcripts[0]).toHaveProperty('shortcode');
  });
});

describe('limit and maxPages', () => {
  for (const walk of PAGED_WALKS) {
    it(`of ${walk.id} cut the walk to a prefix of the full walk`, async () => {
      const full = await collect(client.stream(walk.id as never, walk.params as never));
      const limited = await collect(client.stream(walk.id as never, walk.params as never, { limit: walk.count - 7 }));
      expect(limited).toEqual(full.slice(0, walk.count - 7));
      const before = charged(sandbox);
      const [page] = await collect(client.stream(walk.id as never, walk.params as never, { maxPages: 1 }).pages());
      const onePage = await collect(client.stream(walk.id as never, walk.params as never, { maxPages: 1 }));
      expect(charged(sandbox) - before).toBe(2);
      expect(page).toBeDefined();
      expect(onePage.length).toBeGreaterThan(0);
      expect(onePage).toEqual(full.slice(0, onePage.length));
    });
  }
});

describe('web search', () => {
  it('never asks past page 11, even when every page is full', async () => {
    const before = charged(sandbox);
    const records = await collect(client.search.web({ query: 'everything-n500' }));
    expect(records).toHaveLength(110);
    expect(charged(sandbox) - before).toBe(11);
  });

  it('stops at the first empty page', async () => {
    const before = charged(sandbox);
    await collect(client.search.web({ query: 'q-n20' }));
    // pages 1 and 2 hold the 20 results; page 3 is empty and ends the walk
    expect(charged(sandbox) - before).toBe(3);
  });

  it('starts at the page given and walks on from there', async () => {
    const records = await collect(client.search.web({ query: 'q-n57', page: 5 }));
    expect(records).toHaveLength(17);
  });
});

describe('microblog comments', () => {
  it('yields post results only, never the cursor entries', async () => {
    const records = await collect(client.microblog.comments({ url: 'https://microblog.example/u/status/2-n30' }));
    expect(records).toHaveLength(30);
    for (const record of records) expect(typeof record.rest_id).toBe('string');
    const raw = JSON.stringify(records);
    expect(raw).not.toContain('TimelineTimelineCursor');
  });
});

describe('the forum comment tree', () => {
  const url = 'https://forum.example/r/typescript/comments/tree1/a-long-thread-n300';

  it('is flattened depth first: every comment comes right after its parent and its earlier siblings\' subtrees', async () => {
    const records: ForumComment[] = await collect(client.forum.postComments({ url }));
    expect(records).toHaveLength(300);
    const ancestors: ForumComment[] = [];
    for (const record of records) {
      while (ancestors.length > 0 && ancestors[ancestors.length - 1].name !== record.parent_id) ancestors.pop();
      if (ancestors.length === 0) expect(record.parent_id.startsWith('t3_')).toBe(true);
      expect(record.depth).toBe(ancestors.length);
      ancestors.push(record);
    }
  });

  it('leaves replies and more out of each record and adds depth', async () => {
    const records = await collect(client.forum.postComments({ url }, { limit: 50 }));
    for (const record of records) {
      expect(record).not.toHaveProperty('replies');
      expect(record).not.toHaveProperty('more');
      expect(Number.isInteger(record.depth)).toBe(true);
    }
    expect(records.some((record) => record.depth > 0)).toBe(true);
  });

  it('fetches every cursor exactly once', async () => {
    const seen = new Set<string>();
    const before = charged(sandbox);
    const pages = await collect(client.forum.postComments({ url: 'https://forum.example/r/x/comments/tree2/b-n120' }).pages());
    for (const page of pages) {
      const key = JSON.stringify(page.data.comments);
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
    expect(charged(sandbox) - before).toBe(pages.length);
  });
});
