import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type Client,
  type CreditBalance,
  type ForumComment,
  type ForumPostCommentsPage,
  type MicroblogCommentsPage,
  type MicroblogPost,
  type OperationSpec,
  operations,
  type RecordStream,
  type SubforumPage,
  type SubforumPost,
  ValidationError,
} from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf } from './helpers.ts';

let sandbox: Sandbox;
let client: Client;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = clientOf(sandbox);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

describe('the operation table', () => {
  it('lists the 26 scrape operations, each under /v1/scrape/<id> with a unique group.method', () => {
    expect(client.operations).toBe(operations);
    expect(operations).toHaveLength(26);
    for (const op of operations) expect(op.path).toBe(`/v1/scrape/${op.id}`);
    expect(new Set(operations.map((op) => op.id)).size).toBe(26);
    expect(new Set(operations.map((op) => `${op.group}.${op.method}`)).size).toBe(26);
  });

  it('exposes every row as a method on the client', () => {
    const groups = client as unknown as Record<string, Record<string, unknown>>;
    for (const op of operations) expect(typeof groups[op.group][op.method], op.id).toBe('function');
  });

  it('uses a handful of named continuation strategies', () => {
    const kinds = new Set(operations.map((op) => op.continuation.kind));
    expect([...kinds].sort()).toEqual(['cursor', 'cursorPair', 'none', 'page', 'timeline', 'tree']);
  });

  it('records allowed values, one-of pairs and dependencies as data', () => {
    const byId = new Map<string, OperationSpec>(operations.map((op) => [op.id, op]));
    expect(byId.get('shortvideo/videos/popular')?.params.period).toMatchObject({ values: [7, 30] });
    expect(byId.get('shortvideo/videos/popular')?.params.countryCode).toMatchObject({ values: expect.arrayContaining(['US', 'VN']) });
    expect(byId.get('shortvideo/videos/popular')?.params.countryCode?.values).toHaveLength(24);
    expect(byId.get('socialnet/group/posts')).toMatchObject({ oneOf: [['url', 'group_id']] });
    expect(byId.get('videosite/channel/shorts')).toMatchObject({ oneOf: [['handle', 'channelId']] });
    expect(byId.get('search-ad-library/company-ads')).toMatchObject({
      oneOf: [['domain', 'advertiser_id']],
      dependencies: [{ param: 'topic', equals: 'political', needs: 'region' }],
    });
    expect(byId.get('search/search')?.params.page).toMatchObject({ min: 1, max: 11 });
  });
});

describe('parameters checked before any request', () => {
  const refused: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['forum/subforum', {}, 'subforum', /missing required parameter subforum/],
    ['forum/subforum', { subforum: 'x', sort: 'newest' }, 'sort', /sort must be one of best, hot, new, top, rising/],
    ['forum/subforum', { subforum: 'x', sortt: 'new' }, 'sortt', /unknown parameter sortt/],
    ['forum/subforum', { subforum: 'x', trim: 'maybe' }, 'trim', /trim must be true or false/],
    ['shortvideo/videos/popular', { period: 14 }, 'period', /period must be one of 7, 30/],
    ['shortvideo/videos/popular', { countryCode: 'XX' }, 'countryCode', /countryCode must be one of AU, BR/],
    ['shortvideo/videos/popular', { orderBy: 'views' }, 'orderBy', /orderBy must be one of like, hot, comment, repost/],
    ['socialnet/group/posts', { sort_by: 'TOP_POSTS' }, 'url', /url or group_id/],
    ['videosite/channel/shorts', {}, 'handle', /handle or channelId/],
    ['search-ad-library/company-ads', {}, 'domain', /domain or advertiser_id/],
    ['search-ad-library/company-ads', { domain: 'a.example', topic: 'political' }, 'region', /topic=political needs region/],
    ['search-ad-library/company-ads', { domain: 'a.example', start_date: '2025/01/01' }, 'start_date', /YYYY-MM-DD/],
    ['search/search', { query: 'x', page: 12 }, 'page', /page must be at most 11/],
    ['search/search', { query: 'x', page: 0 }, 'page', /page must be at least 1/],
    ['photoshare/highlight-detail', { id: 'highlight:123' }, 'id', /id must be digits only/],
    ['socialnet-marketplace/search', { lat: 'north', lng: 1 }, 'lat', /lat must be a number/],
    ['shortvideo/comment-replies', { comment_id: '1' }, 'url', /missing required parameter url/],
  ];
  for (const [id, params, param, message] of refused) {
    it(`refuses ${id} ${JSON.stringify(params)} naming ${param}, without a request or a credit`, async () => {
      const { total } = sandbox.requests;
      const balance = sandbox.balance(sandbox.apiKey).credits;
      let error: unknown;
      try {
        client.stream(id as never, params as never);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).param).toBe(param);
      expect((error as ValidationError).endpoint).toBe(id);
      expect((error as Error).message).toMatch(message);
      expect(sandbox.requests.total).toBe(total);
      expect(sandbox.balance(sandbox.apiKey).credits).toBe(balance);
    });
  }

  it('accepts numeric and boolean strings for typed parameters (as the CLI gives them)', async () => {
    const stream = client.stream('forum/subforum', { subforum: 'x-n30', trim: 'true' as never });
    const page = await stream.pages().next();
    expect(page.done).toBe(false);
    expect(stream.checkpoint().params).toEqual({ subforum: 'x-n30', trim: 'true' });
  });

  it('refuses an unknown operation id with a ValidationError', () => {
    expect(() => client.stream('forum/nothing' as never, {} as never)).toThrow(ValidationError);
  });

  it('refuses bad stream options with a TypeError naming them', () => {
    expect(() => client.forum.subforum({ subforum: 'x' }, { limit: -1 })).toThrow(/limit must be a non-negative integer/);
    expect(() => client.forum.subforum({ subforum: 'x' }, { maxPages: 1.5 })).toThrow(/maxPages/);
  });
});

describe('typed parameters', () => {
  it('reject wrong names and values at compile time', () => {
    // These lines are checked by `tsc --noEmit`; at run time each throws a ValidationError.
    // @ts-expect-error 'newest' is not a sort of forum/subforum
    expect(() => client.forum.subforum({ subforum: 'x', sort: 'newest' })).toThrow(ValidationError);
    // @ts-expect-error subforum is required
    expect(() => client.forum.subforum({ sort: 'new' })).toThrow(ValidationError);
    // @ts-expect-error period is 7 or 30
    expect(() => client.shortvideo.popularVideos({ period: 14 })).toThrow(ValidationError);
    // @ts-expect-error one of url or group_id is required
    expect(() => client.socialnet.groupPosts({ sort_by: 'TOP_POSTS' })).toThrow(ValidationError);
    expect(client.socialnet.groupPosts({ group_id: 'g' }).operation).toBe('socialnet/group/posts');
    expect(client.shortvideo.popularVideos().operation).toBe('shortvideo/videos/popular');
  });
});

describe('typed records', () => {
  it('flow from the operation table to each stream', () => {
    expectTypeOf(client.forum.subforum({ subforum: 'x' })).toEqualTypeOf<RecordStream<SubforumPost, SubforumPage>>();
    expectTypeOf(client.forum.postComments({ url: 'u' })).toEqualTypeOf<RecordStream<ForumComment, ForumPostCommentsPage>>();
    expectTypeOf(client.stream('microblog/comments', { url: 'u' })).toEqualTypeOf<RecordStream<MicroblogPost, MicroblogCommentsPage>>();
    expectTypeOf(client.credits()).resolves.toEqualTypeOf<CreditBalance>();
  });
});
