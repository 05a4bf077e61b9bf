import { describe, expect, it } from 'vitest';
import { operations } from '../../src/sandbox/platforms/microblog.ts';
import { expectFields } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const TRANSCRIPT = '/v1/scrape/microblog/tweet/transcript';
const COMMUNITY = '/v1/scrape/microblog/community';
const COMMENTS = '/v1/scrape/microblog/comments';
const POST_URL = 'https://microblog.example/someone/status/1790000000000000000';

const sandboxes = useSandboxes({ slowMs: 0 });

/** The post results of a comments page, skipping cursor entries as a client must. */
function postResults(body: Body): Body[] {
  return body.data.result.instructions.flatMap((instruction: Body) =>
    instruction.entries
      .filter((entry: Body) => entry.content.entryType === 'TimelineTimelineItem')
      .map((entry: Body) => entry.content.itemContent.tweet_results.result),
  );
}

const nextBottom = (body: Body, query: Record<string, string | number>) =>
  postResults(body).length === 0 ? undefined : { ...query, cursor: body.data.cursor.bottom };

describe('microblog tweet transcript', () => {
  it('is declared slow so the core delays it like the AI service', () => {
    expect(operations.find((operation) => operation.id === 'microblog/tweet/transcript')?.slow).toBe(true);
  });

  it('answers with the envelope and a plain-text data.transcript', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, TRANSCRIPT, { url: POST_URL });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'microblog/tweet/transcript', data: { success: true } });
    expect(body.data.transcript).toEqual(expect.any(String));
    expect(body.data.transcript.length).toBeGreaterThan(0);
  });

  it('refuses a request without url with the exact message, free of charge', async () => {
    await sandboxes.expectFreeRefusal(TRANSCRIPT, {}, { error: 'Missing required parameter: url', endpoint: 'microblog/tweet/transcript', credits_required: 1 });
  });
});

describe('microblog community', () => {
  it('gives the community every field the API reference lists, with its type', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, COMMUNITY, { url: 'https://microblog.example/i/communities/1600000000000000000' });
    expect(status).toBe(200);
    expect(body.endpoint).toBe('microblog/community');
    const community = body.data;
    expectFields(community, {
      __typename: 'string',
      name: 'string',
      description: 'string',
      role: 'string',
      rest_id: 'string',
      id: 'string',
      join_policy: 'string',
      is_member: 'boolean',
      is_nsfw: 'boolean',
      member_count: 'integer',
      created_at: 'millis',
      actions: 'object',
      creator_results: 'object',
      rules: 'keyed',
      custom_banner_media: 'object',
      default_banner_media: 'object',
      members_facepile_results: 'keyed',
      invites_result: 'object',
      join_requests_result: 'object',
      trending_hashtags_slice: 'object',
    });
    expect(community.rest_id).toBe('1600000000000000000');
    expectFields(community.actions, { join_action_result: 'object', id: 'string' });
    expectFields(community.creator_results.result, { __typename: 'string', id: 'string', is_blue_verified: 'boolean', core: 'object', verification: 'object' });
    expect(community.creator_results.result.core.screen_name).toEqual(expect.any(String));
    expect(community.creator_results.result.verification.verified).toEqual(expect.any(Boolean));
    expectFields(community.invites_result, { __typename: 'string' });
    expectFields(community.trending_hashtags_slice, { __typename: 'string', items: 'keyed' });
  });

  it('keys rules, banner palettes and the member facepile as API reference 2.2 collections', async () => {
    // Over several communities so that non-empty collections are checked too.
    const urls = ['a', 'b', 'c', 'd', 'e'].map((name) => `https://microblog.example/i/communities/${name}`);
    const communities = await Promise.all(urls.map(async (url) => (await get(sandboxes.sandbox.url, COMMUNITY, { url })).body.data));
    const rules = communities.flatMap((community) => fromKeyed(community.rules));
    expectFields(rules, { rest_id: 'string', description: 'string', name: 'string', id: 'string' });
    const members = communities.flatMap((community) => fromKeyed(community.members_facepile_results));
    expectFields(members, { result: 'object', id: 'string' });
    expect(members.every((member) => typeof member.result.avatar.image_url === 'string')).toBe(true);
    for (const community of communities) {
      for (const banner of [community.custom_banner_media, community.default_banner_media]) {
        expectFields(banner.media_info, { __typename: 'string', color_info: 'object', original_img_url: 'string', original_img_width: 'integer', original_img_height: 'integer' });
        const palette = fromKeyed(banner.media_info.color_info.palette);
        expectFields(palette, { rgb: 'object', percentage: 'number' });
        expectFields(palette.map((colour) => colour.rgb), { red: 'integer', green: 'integer', blue: 'integer' });
      }
    }
  });

  it('refuses a request without url with the exact message', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, COMMUNITY, { url: '' });
    expect(status).toBe(400);
    expect(body.error).toBe('Missing required parameter: url');
  });
});

describe('microblog comments', () => {
  it('answers with the envelope, error false and a bottom cursor', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, COMMENTS, { url: POST_URL });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'microblog/comments', data: { success: true, error: false } });
    expect(body.data.cursor.bottom).toEqual(expect.any(String));
  });

  it('holds instructions and entries as real arrays, with cursor entries beside the post entries', async () => {
    const { body } = await get(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n50` });
    expect(Array.isArray(body.data.result.instructions)).toBe(true);
    const entries = body.data.result.instructions[0].entries;
    expect(Array.isArray(entries)).toBe(true);
    const cursors = entries.filter((entry: Body) => entry.content.entryType === 'TimelineTimelineCursor');
    expect(cursors.map((entry: Body) => entry.content.cursorType).sort()).toEqual(['Bottom', 'Top']);
    expect(cursors.find((entry: Body) => entry.content.cursorType === 'Bottom').content.value).toBe(body.data.cursor.bottom);
    expect(postResults(body)).toHaveLength(20);
  });

  it('gives every post result the author and post fields the API reference lists, with their types', async () => {
    const { body } = await get(sandboxes.sandbox.url, COMMENTS, { url: POST_URL });
    const results = postResults(body);
    expectFields(results, { rest_id: 'string', core: 'object', legacy: 'object' });
    expectFields(
      results.map((result) => result.core.user_results.result),
      { rest_id: 'string', is_blue_verified: 'boolean', legacy: 'object' },
    );
    expectFields(
      results.map((result) => result.core.user_results.result.legacy),
      { screen_name: 'string', followers_count: 'integer', friends_count: 'integer', statuses_count: 'integer', created_at: 'seconds' },
    );
    expectFields(
      results.map((result) => result.legacy),
      {
        full_text: 'string',
        created_at: 'seconds',
        favorite_count: 'integer',
        reply_count: 'integer',
        retweet_count: 'integer',
        quote_count: 'integer',
        bookmark_count: 'integer',
        conversation_id_str: 'string',
        entities: 'object',
        extended_entities: 'object',
      },
    );
    expect(results.every((result) => result.legacy.conversation_id_str === '1790000000000000000')).toBe(true);
    expectFields(results.map((result) => result.legacy.entities), { hashtags: 'keyed', urls: 'keyed', user_mentions: 'keyed', symbols: 'keyed' });
  });

  it('carries the whole text of a long post in note_tweet, its full_text cut', async () => {
    const { records } = await walk(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n200` }, { records: postResults, next: nextBottom });
    const long = records.filter((result) => result.note_tweet !== undefined);
    expect(long.length).toBeGreaterThan(0);
    for (const result of long) {
      const whole: string = result.note_tweet.note_tweet_results.result.text;
      expect(result.legacy.full_text.endsWith('…')).toBe(true);
      expect(whole.startsWith(result.legacy.full_text.slice(0, -1))).toBe(true);
      expect(whole.length).toBeGreaterThan(result.legacy.full_text.length);
    }
  });

  it('walks exactly the -n replies with no duplicates, the page after the last holding no post entries', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, COMMENTS, { url: `${POST_URL}-n45` }, { records: postResults, next: nextBottom });
    expect(records).toHaveLength(45);
    expect(new Set(records.map((result) => result.rest_id)).size).toBe(45);
    expect(pages).toBe(4);
    expect(postResults(last)).toEqual([]);
    expect(last.data.cursor.bottom).toEqual(expect.any(String));
  });

  it('starts each page after the first with the last reply of the page before under the duplicate fault', async () => {
    const url = `${POST_URL}-n45`;
    const first = await get(sandboxes.duplicating.url, COMMENTS, { url });
    const second = await get(sandboxes.duplicating.url, COMMENTS, { url, cursor: first.body.data.cursor.bottom });
    const firstResults = postResults(first.body);
    const secondResults = postResults(second.body);
    expect(secondResults).toHaveLength(21);
    expect(secondResults[0]).toEqual(firstResults.at(-1));
  });

  it('keeps the page after the last empty under the duplicate fault, so a walk still ends', async () => {
    const { records } = await walk(sandboxes.duplicating.url, COMMENTS, { url: `${POST_URL}-n45` }, { records: postResults, next: nextBottom, maxPages: 10 });
    expect(new Set(records.map((result) => result.rest_id)).size).toBe(45);
  });

  it('refuses a cursor it did not issue, free of charge', async () => {
    await sandboxes.expectFreeRefusal(COMMENTS, { url: POST_URL, cursor: 'DAABCgABF' }, 'Invalid cursor');
  });

  it('refuses a request without url with the exact message', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, COMMENTS, {});
    expect(status).toBe(400);
    expect(body.error).toBe('Missing required parameter: url');
  });
});
