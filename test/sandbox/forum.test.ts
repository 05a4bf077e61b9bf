import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const COMMENTS = '/v1/scrape/forum/post/comments';
const SUBFORUM = '/v1/scrape/forum/subforum';
const POST_URL = 'https://forum.example/r/typescript/comments/abc123/streams';

const sandboxes = useSandboxes();

interface Visited {
  comment: Body;
  depth: number;
}

/**
 * Reads a whole comment tree the way docs/wire.md says a client must: the first response, then every
 * `more.cursor` and `replies.more.cursor` whose `has_more` is true, each once. Checks on the way
 * that each comment names the parent it is nested under (or the run its cursor continues).
 */
async function readTree(base: string, url: string) {
  const visited: Visited[] = [];
  const cursors: string[] = [];
  const moreDepths = new Set<number>();
  const queue: Array<{ cursor?: string; depth: number; parent: string }> = [];
  let requests = 0;

  const visit = (comment: Body, depth: number, parent: string): void => {
    expect(comment.parent_id).toBe(parent);
    visited.push({ comment, depth });
    for (const reply of fromKeyed(comment.replies.items)) visit(reply, depth + 1, comment.name);
    if (comment.replies.more.has_more) {
      moreDepths.add(depth + 1);
      cursors.push(comment.replies.more.cursor);
      queue.push({ cursor: comment.replies.more.cursor, depth: depth + 1, parent: comment.name });
    }
    if (comment.more?.has_more) {
      cursors.push(comment.more.cursor);
      queue.push({ cursor: comment.more.cursor, depth, parent });
    }
  };

  const first = await get(base, COMMENTS, { url });
  expect(first.status).toBe(200);
  requests += 1;
  const postName: string = first.body.data.post.name;
  for (const comment of fromKeyed(first.body.data.comments)) visit(comment, 0, postName);
  while (queue.length > 0) {
    const { cursor, depth, parent } = queue.shift()!;
    const reply = await get(base, COMMENTS, { url, cursor: cursor! });
    expect(reply.status).toBe(200);
    requests += 1;
    for (const comment of fromKeyed(reply.body.data.comments)) visit(comment, depth, parent);
  }
  return { visited, cursors, moreDepths, requests, first: first.body };
}

/** The -n300 tree, read once and shared by the tests that only inspect it. */
let tree300: ReturnType<typeof readTree> | undefined;
const readTree300 = () => (tree300 ??= readTree(sandboxes.sandbox.url, `${POST_URL}-n300`));

const COMMENT_FIELDS = {
  url: 'string',
  id: 'string',
  author: 'string',
  author_fullname: 'string|null',
  body: 'string',
  body_html: 'string',
  name: 'string',
  parent_id: 'string',
  permalink: 'string',
  created_at_iso: 'iso',
  created_utc: 'seconds',
  ups: 'number',
  downs: 'number',
  score: 'number',
  collapsed: 'boolean',
  replies: 'object',
};

describe('forum post comments', () => {
  it('answers with the envelope, its endpoint and data.credits_charged', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, COMMENTS, { url: POST_URL });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.credits_used).toBe(1);
    expect(body.endpoint).toBe('forum/post/comments');
    expect(body.data.success).toBe(true);
    expect(body.data.credits_charged).toBe(1);
  });

  it('gives the post every field the API reference lists, with its type', async () => {
    const { body } = await get(sandboxes.sandbox.url, COMMENTS, { url: POST_URL });
    expectFields(body.data.post, {
      id: 'string',
      author: 'string',
      author_fullname: 'string',
      subforum: 'string',
      title: 'string',
      selftext: 'string',
      selftext_html: 'string',
      name: 'string',
      url: 'string',
      permalink: 'string',
      created_at_iso: 'iso',
      downs: 'number',
      ups: 'number',
      score: 'number',
      total_awards_received: 'number',
      num_comments: 'number',
      created: 'seconds',
      created_utc: 'seconds',
      upvote_ratio: 'number',
      subforum_subscribers: 'integer|null',
      is_video: 'boolean',
      archived: 'boolean',
      locked: 'boolean',
      over_18: 'boolean',
      spoiler: 'boolean',
    });
    expect(body.data.post.upvote_ratio).toBeGreaterThanOrEqual(0);
    expect(body.data.post.upvote_ratio).toBeLessThanOrEqual(1);
    expect(body.data.post.name).toBe(`t3_${body.data.post.id}`);
  });

  it('reaches each of the -n comments exactly once by following every has_more cursor once', async () => {
    const { visited, cursors } = await readTree300();
    const ids = visited.map(({ comment }) => comment.id);
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
    expect(new Set(cursors).size).toBe(cursors.length);
  });

  it('gives every comment at every depth the fields the API reference lists, with their types', async () => {
    const { visited } = await readTree300();
    const comments = visited.map(({ comment }) => comment);
    expectFields(comments, COMMENT_FIELDS);
    expectSometimesNull(comments, 'author_fullname');
    for (const { comment } of visited) {
      expect(comment.name).toBe(`t1_${comment.id}`);
      expect(comment.replies.more).toEqual({ has_more: expect.any(Boolean), cursor: expect.any(String) });
    }
  });

  it('nests replies four levels deep at most, and at several depths behind replies.more', async () => {
    const { visited, moreDepths } = await readTree300();
    const depths = new Set(visited.map(({ depth }) => depth));
    expect([...depths].sort()).toEqual([0, 1, 2, 3]);
    expect([...moreDepths].sort()).toEqual([1, 2, 3]);
  });

  it('marks the last top-level comment of the first response with more when further top-level comments follow', async () => {
    const { body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n300` });
    const comments = fromKeyed(body.data.comments);
    expect(comments.at(-1).more).toEqual({ has_more: true, cursor: expect.any(String) });
    expect(comments.slice(0, -1).every((comment) => comment.more === undefined)).toBe(true);
  });

  it('answers a cursor with the next batch of siblings in the same data shape', async () => {
    const first = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n300` });
    const cursor = fromKeyed(first.body.data.comments).at(-1).more.cursor;
    const { status, body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n300`, cursor });
    expect(status).toBe(200);
    expect(body.data.credits_charged).toBe(1);
    expect(body.data.post).toEqual(first.body.data.post);
    const next = fromKeyed(body.data.comments);
    expect(next.length).toBeGreaterThan(0);
    expect(next.every((comment) => comment.parent_id === first.body.data.post.name)).toBe(true);
  });

  it('has an empty keyed collection for a post without comments', async () => {
    const { body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n0` });
    expect(body.data.comments).toEqual({});
    expect(body.data.post.num_comments).toBe(0);
  });

  it('gives the same tree for the same url', async () => {
    const a = await get(sandboxes.sandbox.url, COMMENTS, { url: POST_URL });
    const b = await get(sandboxes.sandbox.url, COMMENTS, { url: POST_URL });
    expect(a.text).toBe(b.text);
  });

  it('repeats the sibling that ended the previous batch under the duplicate fault, with no replies', async () => {
    const url = `${POST_URL}-n300`;
    const first = await get(sandboxes.duplicating.url, COMMENTS, { url });
    const last = fromKeyed(first.body.data.comments).at(-1);
    const next = await get(sandboxes.duplicating.url, COMMENTS, { url, cursor: last.more.cursor });
    const repeated = fromKeyed(next.body.data.comments)[0];
    expect(repeated.id).toBe(last.id);
    expect(repeated.replies).toEqual({ items: {}, more: { has_more: false, cursor: '' } });
  });

  it('still reaches every comment, each once after dropping repeats, under the duplicate fault', async () => {
    const { visited } = await readTree(sandboxes.duplicating.url, `${POST_URL}-n300`);
    const ids = visited.map(({ comment }) => comment.id);
    expect(ids.length).toBeGreaterThan(300);
    expect(new Set(ids).size).toBe(300);
  });

  it('refuses a made-up cursor with 400 Invalid cursor, free of charge', async () => {
    await sandboxes.expectFreeRefusal(COMMENTS, { url: POST_URL, cursor: 'bm90LWEtY3Vyc29y' }, 'Invalid cursor');
  });

  it('refuses a cursor whose positions were edited', async () => {
    const first = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n300` });
    const cursor = fromKeyed(first.body.data.comments).at(-1).more.cursor;
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    decoded.f[0] += 1;
    const edited = Buffer.from(JSON.stringify(decoded)).toString('base64url');
    const { status, body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n300`, cursor: edited });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });

  it('serves an absurdly large -n tree page by page, its cursors still accepted', async () => {
    const url = `${POST_URL}-n99999999999999999999`;
    const first = await get(sandboxes.sandbox.url, COMMENTS, { url });
    expect(fromKeyed(first.body.data.comments)).toHaveLength(10);
    const next = await get(sandboxes.sandbox.url, COMMENTS, { url, cursor: fromKeyed(first.body.data.comments).at(-1).more.cursor });
    expect(next.status).toBe(200);
    expect(fromKeyed(next.body.data.comments)).toHaveLength(5);
  });

  it('refuses a cursor issued for another post', async () => {
    const first = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n300` });
    const cursor = fromKeyed(first.body.data.comments).at(-1).more.cursor;
    const { status, body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-other-n300`, cursor });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });

  it('refuses a request without url with the exact message, free of charge', async () => {
    await sandboxes.expectFreeRefusal(COMMENTS, {}, { error: 'Missing required parameter: url', endpoint: 'forum/post/comments', credits_required: 1 });
  });
});

const nextAfter = (body: Body, query: Record<string, string | number>) =>
  body.data.after === undefined ? undefined : { ...query, after: body.data.after };

describe('forum subforum', () => {
  it('answers with the envelope but no endpoint', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript' });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.credits_used).toBe(1);
    expect(body.data.success).toBe(true);
    expect('endpoint' in body).toBe(false);
  });

  it('gives 100 posts a page, and 25 with trim=true', async () => {
    const full = await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript-n500' });
    const trimmed = await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript-n500', trim: 'true' });
    expect(fromKeyed(full.body.data.posts)).toHaveLength(100);
    expect(fromKeyed(trimmed.body.data.posts)).toHaveLength(25);
  });

  it('gives every post the fields the API reference lists, with their types', async () => {
    const { body } = await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript' });
    const posts = fromKeyed(body.data.posts);
    const strings = 'id name title selftext selftext_html author author_fullname subforum subforum_name_prefixed subforum_id subforum_type url permalink domain thumbnail';
    const numbers = 'score ups downs num_comments num_crossposts subforum_subscribers gilded total_awards_received upvote_ratio';
    const booleans = 'is_video over_18 spoiler locked archived stickied pinned is_self quarantine hidden saved';
    expectFields(posts, {
      ...Object.fromEntries(strings.split(' ').map((name) => [name, 'string'])),
      ...Object.fromEntries(numbers.split(' ').map((name) => [name, 'number'])),
      ...Object.fromEntries(booleans.split(' ').map((name) => [name, 'boolean'])),
      created: 'seconds',
      created_utc: 'seconds',
    });
  });

  it('trims a post to fewer fields with trim=true', async () => {
    const full = fromKeyed((await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript' })).body.data.posts)[0];
    const trimmed = fromKeyed((await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript', trim: 'true' })).body.data.posts)[0];
    expect(trimmed.id).toBe(full.id);
    expect(Object.keys(trimmed).length).toBeLessThan(Object.keys(full).length);
    for (const key of Object.keys(trimmed)) expect(trimmed[key]).toEqual(full[key]);
  });

  it('walks exactly the -n posts with no duplicates, ending with no after', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, SUBFORUM, { subforum: 'rust-n250', sort: 'new' }, {
      records: (body) => fromKeyed(body.data.posts),
      next: nextAfter,
    });
    expect(records).toHaveLength(250);
    expect(new Set(records.map((post) => post.id)).size).toBe(250);
    expect(pages).toBe(3);
    expect('after' in last.data).toBe(false);
  });

  it('lists newest first across pages with sort=new', async () => {
    const { records } = await walk(sandboxes.sandbox.url, SUBFORUM, { subforum: 'rust-n250', sort: 'new' }, {
      records: (body) => fromKeyed(body.data.posts),
      next: nextAfter,
    });
    const times = records.map((post) => post.created_utc);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('serves the first page of a million-post subforum with a continuation', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'huge-n1000000' });
    expect(status).toBe(200);
    expect(fromKeyed(body.data.posts)).toHaveLength(100);
    expect(body.data.after).toEqual(expect.any(String));
  });

  it('starts each page after the first with the last post of the page before under the duplicate fault', async () => {
    const first = await get(sandboxes.duplicating.url, SUBFORUM, { subforum: 'rust-n250' });
    const second = await get(sandboxes.duplicating.url, SUBFORUM, { subforum: 'rust-n250', after: first.body.data.after });
    const firstPosts = fromKeyed(first.body.data.posts);
    const secondPosts = fromKeyed(second.body.data.posts);
    expect(firstPosts).toHaveLength(100);
    expect(secondPosts).toHaveLength(101);
    expect(secondPosts[0]).toEqual(firstPosts.at(-1));
  });

  it('refuses a request without subforum with the exact message, free of charge', async () => {
    await sandboxes.expectFreeRefusal(SUBFORUM, { sort: 'new' }, 'Missing required parameter: subforum');
  });

  it.each([
    ['sort', 'newest'],
    ['timeframe', 'decade'],
    ['trim', 'yes'],
  ])('refuses %s=%s as a value outside its allowed set', async (name, value) => {
    const { status, body } = await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript', [name]: value });
    expect(status).toBe(400);
    expect(body.error).toBe(`Invalid value for ${name}: ${value}`);
  });

  it('refuses an after value it did not issue', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SUBFORUM, { subforum: 'typescript', after: 't3_abc' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });
});
