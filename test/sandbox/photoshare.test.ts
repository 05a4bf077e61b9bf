import { describe, expect, it } from 'vitest';
import { operations } from '../../src/sandbox/platforms/photoshare.ts';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const TRANSCRIPT = '/v1/scrape/photoshare/transcript';
const HASHTAG = '/v1/scrape/photoshare/search/hashtag';
const HIGHLIGHT = '/v1/scrape/photoshare/highlight-detail';
const POST_INFO = '/v1/scrape/photoshare/post-info';
const HASHTAG_REQUIRED = 'Hashtag is required (the # is optional)';

const sandboxes = useSandboxes({ slowMs: 0 });

const posts = (body: Body) => fromKeyed(body.data.posts);
const nextCursor = (body: Body, query: Record<string, string | number>) =>
  body.data.cursor === undefined ? undefined : { ...query, cursor: body.data.cursor };

describe('photoshare transcript', () => {
  it('is declared slow so the core delays it like the AI service', () => {
    expect(operations.find((operation) => operation.id === 'photoshare/transcript')?.slow).toBe(true);
  });

  it('answers with the envelope, its endpoint and a top-level note', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, TRANSCRIPT, { url: 'https://photoshare.example/reel/Cabcdefghij/' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'photoshare/transcript', data: { success: true } });
    expect(body.note).toEqual(expect.any(String));
    expect(body.note).toMatch(/AI/);
  });

  it('gives each transcript an id, the post shortcode and a text that is null without speech', async () => {
    const urls = Array.from({ length: 12 }, (_, i) => `https://photoshare.example/p/Code${i}xyzab/`);
    const all = (await Promise.all(urls.map((url) => get(sandboxes.sandbox.url, TRANSCRIPT, { url })))).flatMap(({ body }) =>
      fromKeyed(body.data.transcripts),
    );
    expectFields(all, { id: 'string', shortcode: 'string', text: 'string|null' });
    expectSometimesNull(all, 'text');
    const one = await get(sandboxes.sandbox.url, TRANSCRIPT, { url: urls[3] });
    expect(fromKeyed(one.body.data.transcripts).every((item) => item.shortcode === 'Code3xyzab')).toBe(true);
  });

  it('refuses a request without url with the exact message, free of charge', async () => {
    await sandboxes.expectFreeRefusal(TRANSCRIPT, {}, { error: 'Missing required parameter: url', endpoint: 'photoshare/transcript', credits_required: 1 });
  });
});

describe('photoshare hashtag search', () => {
  it('answers with the envelope, the hashtag without its # and the media type', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: '#coffee' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'photoshare/search/hashtag' });
    expect(body.data).toMatchObject({ success: true, hashtag: 'coffee', media_type: 'all' });
  });

  it('gives the same posts with or without the leading #', async () => {
    const a = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: '#coffee' });
    const b = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: 'coffee' });
    expect(a.text).toBe(b.text);
  });

  it('gives every post the fields the API reference lists, with their types', async () => {
    const { body } = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: 'coffee-n100' });
    const list = posts(body);
    const strings = 'id __typename shortcode url caption thumbnail_src display_url video_url product_type';
    expectFields(list, {
      ...Object.fromEntries(strings.split(' ').map((name) => [name, 'string'])),
      accessibility_caption: 'string|null',
      location: 'object|null',
      has_audio: 'boolean',
      is_video: 'boolean',
      is_ad: 'boolean',
      is_affiliate: 'boolean',
      is_paid_partnership: 'boolean',
      video_duration: 'number',
      taken_at: 'iso',
      like_count: 'integer',
      comment_count: 'integer',
      clips_music_attribution_info: 'object',
      owner: 'object',
      comments: 'keyed',
    });
    expectSometimesNull(list, 'accessibility_caption');
    expectSometimesNull(list, 'location');
    expectFields(list.map((post) => post.clips_music_attribution_info), {
      artist_name: 'string',
      song_name: 'string',
      uses_original_audio: 'boolean',
      should_mute_audio: 'boolean',
      should_mute_audio_reason: 'string',
      audio_id: 'string',
    });
    expectFields(list.map((post) => post.owner), {
      id: 'string',
      username: 'string',
      is_verified: 'boolean',
      profile_pic_url: 'string',
      full_name: 'string',
      is_private: 'boolean',
      is_unpublished: 'boolean',
      follower_count: 'integer',
      post_count: 'integer',
    });
    const comments = list.flatMap((post) => fromKeyed(post.comments));
    expectFields(comments, { id: 'string', text: 'string', like_count: 'integer', created_at: 'iso', owner: 'object' });
    expectFields(comments.map((comment) => comment.owner), { id: 'string', is_verified: 'boolean', profile_pic_url: 'string', username: 'string' });
  });

  it('gives only videos with media_type=reels', async () => {
    const { body } = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: 'coffee-n100', media_type: 'reels' });
    expect(body.data.media_type).toBe('reels');
    expect(posts(body).every((post) => post.is_video && post.product_type === 'clips')).toBe(true);
  });

  it('gives 24 posts a page', async () => {
    const { body } = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: 'coffee-n100' });
    expect(posts(body)).toHaveLength(24);
  });

  it('walks exactly the -n posts with no duplicates, the last page without a cursor', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, HASHTAG, { hashtag: 'coffee-n100' }, { records: posts, next: nextCursor });
    expect(records).toHaveLength(100);
    expect(new Set(records.map((post) => post.id)).size).toBe(100);
    expect(pages).toBe(5);
    expect('cursor' in last.data).toBe(false);
  });

  it('starts each page after the first with the last post of the page before under the duplicate fault', async () => {
    const first = await get(sandboxes.duplicating.url, HASHTAG, { hashtag: 'coffee-n100' });
    const second = await get(sandboxes.duplicating.url, HASHTAG, { hashtag: 'coffee-n100', cursor: first.body.data.cursor });
    expect(posts(second.body)).toHaveLength(25);
    expect(posts(second.body)[0]).toEqual(posts(first.body).at(-1));
  });

  it.each([[''], ['#']])('refuses hashtag=%j with the E20 message, free of charge', async (hashtag) => {
    await sandboxes.expectFreeRefusal(HASHTAG, { hashtag }, { error: HASHTAG_REQUIRED, endpoint: 'photoshare/search/hashtag', credits_required: 1 });
  });

  it('refuses a media_type outside all and reels', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: 'coffee', media_type: 'photos' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid value for media_type: photos');
  });

  it('refuses a cursor it did not issue', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, HASHTAG, { hashtag: 'coffee', cursor: 'QVFE' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });
});

describe('photoshare highlight detail', () => {
  it('gives the highlight every field the API reference lists, with its type', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, HIGHLIGHT, { id: '17900000000000001' });
    expect(status).toBe(200);
    expect(body.endpoint).toBe('photoshare/highlight-detail');
    const highlight = body.data;
    expectFields(highlight, {
      id: 'string',
      strong_id__: 'string',
      reel_type: 'string',
      highlight_reel_type: 'string',
      title: 'string',
      latest_reel_media: 'seconds',
      created_at: 'seconds',
      media_count: 'integer',
      media_ids: 'keyed',
      cover_media: 'object',
      user: 'object',
      items: 'keyed',
      is_pinned_highlight: 'boolean',
      is_archived: 'boolean',
      disabled_reply_types: 'keyed',
    });
    expect(highlight.id).toBe('highlight:17900000000000001');
    expect(fromKeyed(highlight.media_ids).every((id) => typeof id === 'string')).toBe(true);
    expect(fromKeyed(highlight.items)).toHaveLength(highlight.media_count);
    expectFields(highlight.cover_media, { cropped_image_version: 'object', crop_rect: 'keyed', media_id: 'string', full_image_version: 'object|null', upload_id: 'string|null' });
    expectFields(highlight.cover_media.cropped_image_version, { width: 'integer', height: 'integer', url: 'string', scans_profile: 'string' });
    expectFields(highlight.user, { pk: 'string', id: 'string', username: 'string', full_name: 'string', is_private: 'boolean', is_verified: 'boolean', profile_pic_url: 'string' });
  });

  it('gives every story item its ids, time, media versions and owner', async () => {
    const ids = ['1', '22', '333', '4444', '55555'];
    const items = (await Promise.all(ids.map((id) => get(sandboxes.sandbox.url, HIGHLIGHT, { id })))).flatMap(({ body }) => fromKeyed(body.data.items));
    expectFields(items, {
      id: 'string',
      pk: 'string',
      taken_at: 'seconds',
      video_versions: 'keyed|null',
      video_duration: 'number|null',
      image_versions2: 'object',
      video_dash_manifest: 'string|null',
      user: 'object',
      owner: 'object',
    });
    expectSometimesNull(items, 'video_versions');
    const candidates = items.flatMap((item) => fromKeyed(item.image_versions2.candidates));
    expectFields(candidates, { width: 'integer', height: 'integer', url: 'string' });
  });

  it.each([['highlight:17900000000000001'], ['abc'], ['12a']])('refuses id=%s as not digits only, free of charge', async (id) => {
    await sandboxes.expectFreeRefusal(HIGHLIGHT, { id }, `Invalid value for id: ${id}`);
  });

  it('refuses a request without id with the exact message', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, HIGHLIGHT, {});
    expect(status).toBe(400);
    expect(body.error).toBe('Missing required parameter: id');
  });
});

describe('photoshare post info', () => {
  it('nests the media twice, in data.data.xdt_shortcode_media', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, POST_INFO, { url: 'https://photoshare.example/p/DAbCdEfGhIj/' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'photoshare/post-info', data: { success: true } });
    expect(body.data.data.xdt_shortcode_media.shortcode).toBe('DAbCdEfGhIj');
  });

  it('gives the media every field the API reference lists, with its type', async () => {
    const urls = ['p/AAAAAAAAAAA', 'reel/BBBBBBBBBBB', 'p/CCCCCCCCCCC', 'p/DDDDDDDDDDD', 'p/EEEEEEEEEEE', 'p/FFFFFFFFFFF'].map(
      (path) => `https://photoshare.example/${path}/`,
    );
    const media = (await Promise.all(urls.map((url) => get(sandboxes.sandbox.url, POST_INFO, { url })))).map(({ body }) => body.data.data.xdt_shortcode_media);
    expectFields(media, {
      __typename: 'string',
      id: 'string',
      shortcode: 'string',
      thumbnail_src: 'string',
      display_url: 'string',
      media_preview: 'string|null',
      dimensions: 'object',
      display_resources: 'keyed',
      dash_info: 'object',
      sharing_friction_info: 'object',
    });
    expectFields(media.map((item) => item.dimensions), { height: 'integer', width: 'integer' });
    expectFields(media.flatMap((item) => fromKeyed(item.display_resources)), { src: 'string', config_width: 'integer', config_height: 'integer' });
    expectFields(media.map((item) => item.dash_info), { is_dash_eligible: 'boolean', video_dash_manifest: 'string|null' });
    expectFields(media.map((item) => item.sharing_friction_info), { should_have_sharing_friction: 'boolean', bloks_app_url: 'string|null' });
    expect(media[1].is_video).toBe(true);
  });

  it('refuses a request without url with the exact message, free of charge', async () => {
    await sandboxes.expectFreeRefusal(POST_INFO, {}, 'Missing required parameter: url');
  });
});
