import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes } from './helpers.ts';

const SEARCH = '/v1/scrape/professional/search/posts';

const sandboxes = useSandboxes();

describe('professional post search', () => {
  it('answers with the envelope, its endpoint, data.credits_charged and the query', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'data engineering' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'professional/search/posts' });
    expect(body.data).toMatchObject({ success: true, credits_charged: 1, query: 'data engineering' });
  });

  it('returns exactly the -n posts in one response', async () => {
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'hiring-n60' });
    const posts = fromKeyed(body.data.posts);
    expect(posts).toHaveLength(60);
    expect(new Set(posts.map((post) => post.url)).size).toBe(60);
  });

  it('gives every post the fields the API reference lists, with their types', async () => {
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'hiring-n60' });
    const posts = fromKeyed(body.data.posts);
    expectFields(posts, {
      url: 'string',
      name: 'string',
      datePublished: 'iso',
      description: 'string',
      media: 'string|null',
      image: 'string|null',
      images: 'keyed',
      author: 'object',
      comments: 'keyed',
      likeCount: 'integer',
      commentCount: 'integer',
    });
    expectSometimesNull(posts, 'image');
    expectSometimesNull(posts, 'media');
    expect(posts.flatMap((post) => fromKeyed(post.images)).every((url) => typeof url === 'string')).toBe(true);
    expectFields(posts.map((post) => post.author), { name: 'string', url: 'string', image: 'string', followers: 'integer' });
    expectFields(posts.flatMap((post) => fromKeyed(post.comments)), { author: 'string', text: 'string', professionalUrl: 'string' });
  });

  it('gives video posts a thumbnail, an upload date and a transcript', async () => {
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'hiring-n60' });
    const videos = fromKeyed(body.data.posts).filter((post) => 'transcript' in post);
    expectFields(videos, { thumbnailUrl: 'string', uploadDate: 'iso', transcript: 'string' });
  });

  it('refuses a request without query with the exact message, free of charge', async () => {
    await sandboxes.expectFreeRefusal(SEARCH, { date_posted: 'past-week' }, { error: 'Missing required parameter: query', endpoint: 'professional/search/posts', credits_required: 1 });
  });
});
