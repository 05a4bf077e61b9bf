import { describe, expect, it } from 'vitest';
import { expectFields } from './field-types.ts';
import { fromKeyed, get, useSandboxes } from './helpers.ts';

const POSTS = '/v1/scrape/threadtext/user-posts';

const sandboxes = useSandboxes();

describe('threadtext user posts', () => {
  it('answers with the envelope and its endpoint', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, POSTS, { handle: 'writer' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'threadtext/user-posts', data: { success: true } });
  });

  it('returns exactly the -n posts in one response, none twice', async () => {
    const { body } = await get(sandboxes.sandbox.url, POSTS, { handle: 'writer-n40' });
    const posts = fromKeyed(body.data.posts);
    expect(posts).toHaveLength(40);
    expect(new Set(posts.map((post) => post.id)).size).toBe(40);
  });

  it('gives every post the fields the API reference lists, with their types', async () => {
    const { body } = await get(sandboxes.sandbox.url, POSTS, { handle: 'writer-n40' });
    const posts = fromKeyed(body.data.posts);
    expectFields(posts, {
      id: 'string',
      pk: 'string',
      code: 'string',
      user: 'object',
      caption: 'object',
      caption_is_edited: 'boolean',
      text_post_app_info: 'object',
      image_versions2: 'object',
      carousel_media: 'keyed|null',
      audio: 'object|null',
      transcription_data: 'object|null',
      is_paid_partnership: 'boolean|null',
    });
    expectFields(posts.map((post) => post.user), {
      pk: 'string',
      id: 'string',
      username: 'string',
      profile_pic_url: 'string',
      is_verified: 'boolean',
      text_post_app_is_private: 'boolean',
      has_onboarded_to_text_post_app: 'boolean',
      friendship_status: 'object|null',
    });
    expect(posts.every((post) => post.user.username === 'writer-n40')).toBe(true);
    expectFields(posts.map((post) => post.caption), { text: 'string', pk: 'string', has_translation: 'boolean' });
    const info = posts.map((post) => post.text_post_app_info);
    expectFields(info, {
      text_fragments: 'object',
      reshare_count: 'integer',
      direct_reply_count: 'integer',
      repost_count: 'integer',
      quote_count: 'integer',
      self_thread_count: 'integer',
      reply_control: 'string',
      is_reply: 'boolean',
      is_post_unavailable: 'boolean',
      share_info: 'object',
      pinned_post_info: 'object',
    });
    expectFields(info.flatMap((item) => fromKeyed(item.text_fragments.fragments)), {
      fragment_type: 'string',
      plaintext: 'string',
      link_fragment: 'object|null',
      mention_fragment: 'object|null',
      tag_fragment: 'object|null',
      linkified_web_url: 'string|null',
    });
    const candidates = posts.flatMap((post) => fromKeyed(post.image_versions2.candidates));
    expectFields(candidates, { height: 'integer', width: 'integer', url: 'string' });
  });

  it('refuses a request without handle with the exact message, free of charge', async () => {
    await sandboxes.expectFreeRefusal(POSTS, {}, { error: 'Missing required parameter: handle', endpoint: 'threadtext/user-posts', credits_required: 1 });
  });
});
