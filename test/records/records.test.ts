/**
 * The record types. The `expectTypeOf` assertions are checked by the compiler, not at run time, so
 * the last tests run the TypeScript compiler over this very file (and a deliberately wrong variant
 * of it) to make the assertions part of `vitest run`, not only of `tsc --noEmit`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type {
  ChannelShort,
  CommentReply,
  CreditBalance,
  ForumComment,
  ForumCommentNode,
  GroupPost,
  GroupPostComment,
  KeyedCollection,
  MicroblogPost,
  OperationId,
  PagesByOperation,
  PopularVideo,
  RecordsByOperation,
  ShopProduct,
  ShortvideoShopPage,
  ShortvideoVideo,
  SubforumPost,
  TranscriptSegment,
  WireForm,
} from '../../src/records/index.ts';
import type { OperationId as TableOperationId } from '../../src/operations/table.ts';
import { compile } from './compile.ts';

const thisFile = fileURLToPath(import.meta.url);

describe('record types', () => {
  it('types a subforum post score as a number', () => {
    expectTypeOf<SubforumPost['score']>().toEqualTypeOf<number>();
  });

  it('keeps the unlisted fields of a subforum post as unknown', () => {
    expectTypeOf<SubforumPost['link_flair_text']>().toEqualTypeOf<unknown>();
  });

  it('gives a flattened forum comment a numeric depth and no replies', () => {
    expectTypeOf<ForumComment['depth']>().toEqualTypeOf<number>();
    expectTypeOf<ForumComment>().not.toHaveProperty('replies');
    expectTypeOf<ForumComment>().not.toHaveProperty('more');
  });

  it('nests forum replies on the wire as a keyed collection of comments', () => {
    expectTypeOf<ForumCommentNode['replies']['items']>().toEqualTypeOf<KeyedCollection<ForumCommentNode>>();
  });

  it('types a shop product id as a string', () => {
    expectTypeOf<ShopProduct['product_id']>().toEqualTypeOf<string>();
  });

  it('keeps the shop page lists as arrays, as the wire sends them', () => {
    expectTypeOf<ShortvideoShopPage['products']>().toEqualTypeOf<ShopProduct[]>();
    expectTypeOf<ShopProduct['image']['url_list']>().toEqualTypeOf<string[]>();
  });

  it('yields keyed collections as arrays', () => {
    expectTypeOf<GroupPost['topComments']>().toEqualTypeOf<GroupPostComment[]>();
    expectTypeOf<ShortvideoVideo['author']['avatar_thumb']['url_list']>().toEqualTypeOf<string[]>();
  });

  it('turns every array back into a keyed collection in the wire form', () => {
    expectTypeOf<WireForm<GroupPost>['topComments']>().toEqualTypeOf<KeyedCollection<WireForm<GroupPostComment>>>();
    expectTypeOf<WireForm<GroupPost>['publishTime']>().toEqualTypeOf<number>();
  });

  it('types nullable fields as T | null', () => {
    expectTypeOf<ChannelShort['description']>().toEqualTypeOf<string | null>();
    expectTypeOf<GroupPost['videoViewCount']>().toEqualTypeOf<number | null>();
  });

  it('keeps transcript times as the strings the API sends', () => {
    expectTypeOf<TranscriptSegment['startMs']>().toEqualTypeOf<string>();
  });

  it('opens only the records the API reference says have further fields', () => {
    expectTypeOf<ShortvideoVideo['anything']>().toEqualTypeOf<unknown>();
    expectTypeOf<PopularVideo>().not.toHaveProperty('anything');
    expectTypeOf<CommentReply>().not.toHaveProperty('anything');
  });

  it('never widens a field to any', () => {
    expectTypeOf<CommentReply['reply_comment']>().not.toBeAny();
    expectTypeOf<WireForm<CommentReply>['image_list']>().not.toBeAny();
    expectTypeOf<MicroblogPost['legacy']['entities']>().not.toBeAny();
  });

  it('reads the microblog post counters as numbers', () => {
    expectTypeOf<MicroblogPost['legacy']['favorite_count']>().toEqualTypeOf<number>();
    expectTypeOf<MicroblogPost['core']['user_results']['result']['is_blue_verified']>().toEqualTypeOf<boolean>();
  });

  it('allows only free and active as subscription states', () => {
    expectTypeOf<CreditBalance['subscriptionStatus']>().toEqualTypeOf<'free' | 'active'>();
  });

  it('covers the 26 scrape operations of the operation table with a record and a page', () => {
    expectTypeOf<OperationId>().toEqualTypeOf<
      | 'shortvideo/profile'
      | 'shortvideo/videos'
      | 'shortvideo/videos/popular'
      | 'shortvideo/comment-replies'
      | 'shortvideo-shop/products'
      | 'socialnet/profile/reels'
      | 'socialnet/group/posts'
      | 'socialnet-marketplace/search'
      | 'socialnet-marketplace/location-search'
      | 'videosite/channel/shorts'
      | 'videosite/video/comments'
      | 'videosite/video/transcript'
      | 'microblog/tweet/transcript'
      | 'microblog/community'
      | 'microblog/comments'
      | 'search-ad-library/company-ads'
      | 'socialnet-ad-library/search'
      | 'photoshare/transcript'
      | 'photoshare/search/hashtag'
      | 'photoshare/highlight-detail'
      | 'photoshare/post-info'
      | 'forum/post/comments'
      | 'forum/subforum'
      | 'professional/search/posts'
      | 'search/search'
      | 'threadtext/user-posts'
    >();
    expectTypeOf<keyof PagesByOperation>().toEqualTypeOf<keyof RecordsByOperation>();
  });

  it('has a record type for every row of the operation table, and no record type without a row', () => {
    expectTypeOf<TableOperationId>().toEqualTypeOf<OperationId>();
  });
});

describe('the type assertions above', () => {
  it('compile without errors under the project settings', () => {
    expect(compile(new Map([[thisFile, readFileSync(thisFile, 'utf8')]]))).toEqual([]);
  });

  it('would fail to compile if a record type said something false', () => {
    const truth = "expectTypeOf<SubforumPost['score']>().toEqualTypeOf<number>();";
    const text = readFileSync(thisFile, 'utf8');
    const wrongLine = text.slice(0, text.indexOf(truth)).split('\n').length - 1;
    const lie = text.replace(truth, "expectTypeOf<SubforumPost['score']>().toEqualTypeOf<string>();");
    const errors = compile(new Map([[thisFile, lie]]));
    expect(errors.map((error) => `${error.file}:${error.line}`)).toContain(`${thisFile}:${wrongLine}`);
  });
});
