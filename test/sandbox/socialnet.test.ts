import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const REELS = '/v1/scrape/socialnet/profile/reels';
const POSTS = '/v1/scrape/socialnet/group/posts';
const PAGE = 'https://www.socialnet.example/acme';
const GROUP = 'https://www.socialnet.example/groups/cyclists';

const sandboxes = useSandboxes();

const reelsWalk = {
  records: (body: Body) => fromKeyed(body.data.reels),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.cursor !== undefined && body.data.next_page_id !== undefined
      ? { ...query, cursor: body.data.cursor, next_page_id: body.data.next_page_id }
      : undefined,
};
const postsWalk = {
  records: (body: Body) => fromKeyed(body.data.posts),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.cursor !== undefined ? { ...query, cursor: body.data.cursor } : undefined,
};

describe('socialnet profile reels', () => {
  it('answers with the envelope, endpoint socialnet/profile/reels and 10 keyed reels', async () => {
    const { body } = await get(sandboxes.sandbox.url, REELS, { url: `${PAGE}-n25` });
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'socialnet/profile/reels', data: { success: true } });
    expect(fromKeyed(body.data.reels)).toHaveLength(10);
    expectFields(body.data, { cursor: 'string', next_page_id: 'string' });
  });

  it('gives every reel the fields the API reference lists, with their types', async () => {
    const { records } = await walk(sandboxes.sandbox.url, REELS, { url: `${PAGE}-n60` }, reelsWalk);
    const strings = ['id', 'post_id', 'feedback_id', 'video_id', 'url', 'description', 'thumbnail', 'video_url'];
    expectFields(records, {
      ...Object.fromEntries(strings.map((name) => [name, 'string'])),
      creation_time: 'iso',
      view_count: 'integer',
      play_time_in_ms: 'integer',
      music: 'object',
      author: 'object',
    });
    expectSometimesNull(records.map((reel) => reel.music), 'track_title');
    expectFields(records.map((reel) => reel.author), { id: 'string', name: 'string', is_verified: 'boolean', url: 'string', image: 'string' });
  });

  it('walks exactly the -n count with both values sent together, no reel twice', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, REELS, { url: `${PAGE}-n25` }, reelsWalk);
    expect(records).toHaveLength(25);
    expect(new Set(records.map((reel) => reel.id)).size).toBe(25);
    expect(pages).toBe(3);
    expect('cursor' in last.data || 'next_page_id' in last.data).toBe(false);
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, REELS, { url: `${PAGE}-n25` }, reelsWalk);
    expect(records).toHaveLength(27);
    expect(records[10].id).toBe(records[9].id);
  });

  it('refuses a missing page URL with the API reference message, free', async () => {
    await sandboxes.expectFreeRefusal(REELS, {}, { error: 'Socialnet page URL is required', endpoint: 'socialnet/profile/reels', credits_required: 1 });
  });

  it('refuses a cursor sent without next_page_id', async () => {
    const first = await get(sandboxes.sandbox.url, REELS, { url: `${PAGE}-n25` });
    const { status, body } = await get(sandboxes.sandbox.url, REELS, { url: `${PAGE}-n25`, cursor: first.body.data.cursor });
    expect(status).toBe(400);
    expect(body.error).toBe('Missing required parameter: next_page_id');
  });

  it('refuses a cursor and next_page_id from different pages', async () => {
    const first = await get(sandboxes.sandbox.url, REELS, { url: `${PAGE}-n35` });
    const second = await get(sandboxes.sandbox.url, REELS, {
      url: `${PAGE}-n35`, cursor: first.body.data.cursor, next_page_id: first.body.data.next_page_id,
    });
    const { body } = await get(sandboxes.sandbox.url, REELS, {
      url: `${PAGE}-n35`, cursor: first.body.data.cursor, next_page_id: second.body.data.next_page_id,
    });
    expect(body.error).toBe('Invalid cursor');
  });
});

describe('socialnet group posts', () => {
  it('answers with the envelope, endpoint socialnet/group/posts and 3 keyed posts', async () => {
    const { body } = await get(sandboxes.sandbox.url, POSTS, { url: `${GROUP}-n10` });
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'socialnet/group/posts' });
    expect(fromKeyed(body.data.posts)).toHaveLength(3);
    expect(typeof body.data.cursor).toBe('string');
  });

  it('gives every post the fields the API reference lists, with their types', async () => {
    const { records } = await walk(sandboxes.sandbox.url, POSTS, { url: `${GROUP}-n90` }, postsWalk);
    expectFields(records, {
      id: 'string', text: 'string', url: 'string', author: 'object', reactionCount: 'integer', commentCount: 'integer',
      videoViewCount: 'integer|null', publishTime: 'seconds', videoDetails: 'object', image: 'object|null', topComments: 'keyed',
    });
    expectSometimesNull(records, 'videoViewCount');
    expectSometimesNull(records, 'image');
    expectFields(records.map((post) => post.author), { __typename: 'string', name: 'string', short_name: 'string', id: 'string' });
    const comments = records.flatMap((post) => fromKeyed(post.topComments));
    expectFields(comments, { id: 'string', text: 'string', publishTime: 'seconds', author: 'object' });
    const authors = comments.map((comment) => comment.author);
    expectFields(authors, { id: 'string', name: 'string', gender: 'string', url: 'string|null' });
    expectSometimesNull(authors, 'url');
  });

  it('walks exactly the -n count with no post twice, by url or by group_id', async () => {
    const queries: Array<Record<string, string>> = [{ url: `${GROUP}-n16` }, { group_id: '555-n16' }];
    for (const query of queries) {
      const { records, pages } = await walk(sandboxes.sandbox.url, POSTS, query, postsWalk);
      expect(records).toHaveLength(16);
      expect(new Set(records.map((post) => post.id)).size).toBe(16);
      expect(pages).toBe(6);
    }
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, POSTS, { url: `${GROUP}-n9` }, postsWalk);
    expect(records.map((post) => post.id)).toHaveLength(11);
    expect(records[3].id).toBe(records[2].id);
  });

  it('refuses a request with neither url nor group_id, free', async () => {
    await sandboxes.expectFreeRefusal(POSTS, { sort_by: 'TOP_POSTS' }, 'Missing required parameter: url or group_id');
  });

  it('refuses a sort_by outside the four the API reference orders', async () => {
    const { body } = await get(sandboxes.sandbox.url, POSTS, { url: GROUP, sort_by: 'NEWEST' });
    expect(body.error).toBe('Invalid value for sort_by: NEWEST');
  });

  it('accepts every sort order the API reference names', async () => {
    for (const sort of ['TOP_POSTS', 'RECENT_ACTIVITY', 'CHRONOLOGICAL', 'CHRONOLOGICAL_LISTINGS']) {
      expect((await get(sandboxes.sandbox.url, POSTS, { url: GROUP, sort_by: sort })).status).toBe(200);
    }
  });
});
