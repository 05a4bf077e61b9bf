import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const SHORTS = '/v1/scrape/videosite/channel/shorts';
const COMMENTS = '/v1/scrape/videosite/video/comments';
const TRANSCRIPT = '/v1/scrape/videosite/video/transcript';
const VIDEO = 'https://www.videosite.example/watch?v=dQw4w9WgXcQ';

const sandboxes = useSandboxes();

const byToken = (field: string) => ({
  records: (body: Body) => fromKeyed(body.data[field]),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.continuationToken !== undefined ? { ...query, continuationToken: body.data.continuationToken } : undefined,
});

describe('videosite channel shorts', () => {
  it('answers the envelope with 48 keyed shorts and the empty collections beside them', async () => {
    const { body } = await get(sandboxes.sandbox.url, SHORTS, { handle: '@acme-n100' });
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'videosite/channel/shorts', data: { success: true } });
    expect(fromKeyed(body.data.shorts)).toHaveLength(48);
    for (const name of ['videos', 'channels', 'playlists', 'shelves', 'lives']) expect(body.data[name]).toEqual({});
    expect(typeof body.data.continuationToken).toBe('string');
  });

  it('gives every short the fields the API reference lists, with their types', async () => {
    const { records } = await walk(sandboxes.sandbox.url, SHORTS, { channelId: 'UCacme-n100' }, byToken('shorts'));
    const strings = ['id', 'url', 'title', 'viewCountText', 'commentCountText', 'likeCountText', 'genre'];
    expectFields(records, {
      ...Object.fromEntries(strings.map((name) => [name, 'string'])),
      type: 'string', viewCountInt: 'integer', commentCountInt: 'integer', likeCountInt: 'integer',
      description: 'string|null', publishDate: 'iso',
    });
    expect(records.every((short) => short.type === 'short')).toBe(true);
    expectSometimesNull(records, 'description');
    expect(records.every((short) => /[+-]\d{2}:\d{2}$/.test(short.publishDate))).toBe(true);
  });

  it('walks exactly the -n count with no short twice and no token on the last page', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, SHORTS, { handle: '@acme-n100' }, byToken('shorts'));
    expect(records).toHaveLength(100);
    expect(new Set(records.map((short) => short.id)).size).toBe(100);
    expect(pages).toBe(3);
    expect('continuationToken' in last.data).toBe(false);
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, SHORTS, { handle: '@acme-n100' }, byToken('shorts'));
    expect(records).toHaveLength(102);
    expect(records[48].id).toBe(records[47].id);
  });

  it('refuses a request with neither handle nor channelId, free', async () => {
    await sandboxes.expectFreeRefusal(SHORTS, { sort: 'newest' }, { error: 'Missing required parameter: handle or channelId', endpoint: 'videosite/channel/shorts', credits_required: 1 });
  });

  it('refuses a sort other than newest or popular', async () => {
    expect((await get(sandboxes.sandbox.url, SHORTS, { handle: '@a', sort: 'oldest' })).body.error).toBe('Invalid value for sort: oldest');
  });
});

describe('videosite video comments', () => {
  it('answers the envelope with 20 keyed comments a page', async () => {
    const { body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${VIDEO}-n50` });
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'videosite/video/comments' });
    expect(fromKeyed(body.data.comments)).toHaveLength(20);
  });

  it('gives every comment the fields the API reference lists, with their types', async () => {
    const { records } = await walk(sandboxes.sandbox.url, COMMENTS, { url: `${VIDEO}-n60`, order: 'newest' }, byToken('comments'));
    expectFields(records, {
      id: 'string', content: 'string', publishedTimeText: 'string', publishedTime: 'iso', replyLevel: 'integer',
      author: 'object', engagement: 'object',
    });
    expectFields(records.map((c) => c.author), {
      name: 'string', channelId: 'string', isVerified: 'boolean', isCreator: 'boolean', avatarUrl: 'string', channelUrl: 'string',
    });
    expectFields(records.map((c) => c.engagement), { likes: 'integer', replies: 'integer' });
    expect(records.every((c) => / ago$|^just now$/.test(c.publishedTimeText))).toBe(true);
  });

  it('walks exactly the -n count with no comment twice', async () => {
    const { records } = await walk(sandboxes.sandbox.url, COMMENTS, { url: `${VIDEO}-n55` }, byToken('comments'));
    expect(records).toHaveLength(55);
    expect(new Set(records.map((c) => c.id)).size).toBe(55);
  });

  it('stops a top walk at 1,000 comments however many the video has', async () => {
    const { records, pages } = await walk(sandboxes.sandbox.url, COMMENTS, { url: `${VIDEO}-n5000`, order: 'top' }, byToken('comments'));
    expect(records).toHaveLength(1_000);
    expect(pages).toBe(50);
  });

  it('stops a newest walk at 7,000 comments however many the video has', async () => {
    const { records } = await walk(sandboxes.sandbox.url, COMMENTS, { url: `${VIDEO}-n9000`, order: 'newest' }, byToken('comments'));
    expect(records).toHaveLength(7_000);
    expect(new Set(records.map((c) => c.id)).size).toBe(7_000);
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, COMMENTS, { url: `${VIDEO}-n45` }, byToken('comments'));
    expect(records).toHaveLength(47);
    expect(records[20].id).toBe(records[19].id);
  });

  it('refuses a missing url, free, and an order other than top or newest', async () => {
    await sandboxes.expectFreeRefusal(COMMENTS, {}, { error: 'Missing required parameter: url', endpoint: 'videosite/video/comments', credits_required: 1 });
    expect((await get(sandboxes.sandbox.url, COMMENTS, { url: VIDEO, order: 'oldest' })).body.error).toBe('Invalid value for order: oldest');
  });

  it('refuses a token from the other order of the same video', async () => {
    const top = await get(sandboxes.sandbox.url, COMMENTS, { url: `${VIDEO}-n50`, order: 'top' });
    const { body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${VIDEO}-n50`, order: 'newest', continuationToken: top.body.data.continuationToken });
    expect(body.error).toBe('Invalid cursor');
  });
});

describe('videosite video transcript', () => {
  it('answers the envelope with type, url, keyed segments and the whole text', async () => {
    const { body } = await get(sandboxes.sandbox.url, TRANSCRIPT, { url: VIDEO });
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'videosite/video/transcript' });
    expectFields(body.data, { type: 'string', url: 'string', transcript: 'keyed', transcript_only_text: 'string' });
    expect(body.data.url).toBe(VIDEO);
  });

  it('gives every segment text, string startMs and endMs, and startTimeText', async () => {
    const { body } = await get(sandboxes.sandbox.url, TRANSCRIPT, { url: VIDEO });
    const segments = fromKeyed(body.data.transcript);
    expectFields(segments, { text: 'string', startMs: 'string', endMs: 'string', startTimeText: 'string' });
    for (const segment of segments) expect(Number(segment.endMs)).toBeGreaterThan(Number(segment.startMs));
    expect(body.data.transcript_only_text).toBe(segments.map((s) => s.text).join(' '));
  });

  it('sizes the transcript by the -n rule', async () => {
    const { body } = await get(sandboxes.sandbox.url, TRANSCRIPT, { url: `${VIDEO}-n12` });
    expect(fromKeyed(body.data.transcript)).toHaveLength(12);
  });

  it('refuses a missing url, free, and a language that is not a tag', async () => {
    const before = sandboxes.credits();
    expect((await get(sandboxes.sandbox.url, TRANSCRIPT, {})).body.error).toBe('Missing required parameter: url');
    expect(sandboxes.credits()).toBe(before);
    expect((await get(sandboxes.sandbox.url, TRANSCRIPT, { url: VIDEO, language: '../../etc' })).body.error).toBe('Invalid value for language: ../../etc');
  });
});
