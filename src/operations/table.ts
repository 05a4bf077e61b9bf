/**
 * Every scrape operation of the API as one row of data (docs/reference.md "Operations"). The client, the CLI
 * and the docs read this table; adding an operation is one row here plus its record type in
 * `records.ts`. Parameter names are the wire names; `values`, bounds and patterns are checked
 * before any request so a typo costs no credit.
 */
import type { OperationSpec } from './spec.ts';

const str = { type: 'string' } as const;
const required = { type: 'string', required: true } as const;
const flag = { type: 'boolean' } as const;
const isoDate = { type: 'string', pattern: { source: '\\d{4}-\\d{2}-\\d{2}', description: 'a date as YYYY-MM-DD' } } as const;
const countryCode = { type: 'string', pattern: { source: '[A-Za-z]{2}', description: 'a 2-letter country code' } } as const;

/** API reference E4: the 24 countries of popular short videos. */
const POPULAR_COUNTRIES = [
  'AU', 'BR', 'CA', 'EG', 'FR', 'DE', 'ID', 'IL', 'IT', 'JP', 'MY', 'PH',
  'RU', 'SA', 'SG', 'KR', 'ES', 'TW', 'TH', 'TR', 'AE', 'GB', 'US', 'VN',
] as const;

/**
 * The operation table as data: every operation's id, client method, parameters, records path,
 * continuation rule, key and time. Exported as `operations`; `npx socialstream ops` prints it.
 */
export const OPERATIONS = [
  {
    id: 'shortvideo/profile', group: 'shortvideo', method: 'profile', path: '/v1/scrape/shortvideo/profile',
    key: 'user.id', time: { at: 'user.createTime', unit: 's' },
    stableKey: { fields: [['user.uniqueId']] },
    params: { handle: required },
    records: { kind: 'one', at: 'data' },
    continuation: { kind: 'none' },
  },
  {
    id: 'shortvideo/videos', group: 'shortvideo', method: 'videos', path: '/v1/scrape/shortvideo/videos',
    key: 'aweme_id', time: { at: 'create_time', unit: 's' }, newestFirst: { param: 'sort_by', values: ['latest'], byDefault: true },
    stableKey: { params: ['handle'], fields: [['author.uid', 'create_time'], ['create_time', 'desc']] },
    bigIntegers: ['music.id'],
    params: { handle: required, user_id: str, sort_by: { type: 'string', values: ['latest', 'popular'] }, region: str, trim: flag },
    records: { kind: 'list', at: 'data.aweme_list' },
    continuation: { kind: 'cursor', from: 'data.max_cursor', param: 'max_cursor', while: 'data.has_more' },
  },
  {
    id: 'shortvideo/videos/popular', group: 'shortvideo', method: 'popularVideos', path: '/v1/scrape/shortvideo/videos/popular',
    key: 'id', time: null,
    stableKey: { fields: [['item_url']] },
    params: {
      period: { type: 'integer', values: [7, 30] },
      page: { type: 'integer', min: 1 },
      orderBy: { type: 'string', values: ['like', 'hot', 'comment', 'repost'] },
      countryCode: { type: 'string', values: POPULAR_COUNTRIES },
    },
    records: { kind: 'list', at: 'data.videos' },
    continuation: { kind: 'page', param: 'page', while: 'data.pagination.has_more', total: 'data.pagination.total_count', perPage: 'data.pagination.limit' },
  },
  {
    id: 'shortvideo/comment-replies', group: 'shortvideo', method: 'commentReplies', path: '/v1/scrape/shortvideo/comment-replies',
    key: 'cid', time: { at: 'create_time', unit: 's' },
    stableKey: { params: ['comment_id'], fields: [['user.uid', 'create_time'], ['create_time', 'text']] },
    params: { comment_id: required, url: required, cursor: { type: 'integer', min: 0 } },
    records: { kind: 'list', at: 'data.comments' },
    continuation: { kind: 'cursor', from: 'data.cursor', param: 'cursor', while: 'data.has_more' },
  },
  {
    id: 'shortvideo-shop/products', group: 'shortvideoShop', method: 'products', path: '/v1/scrape/shortvideo-shop/products',
    key: 'product_id', time: null,
    stableKey: { fields: [['seo_url.canonical_url']] },
    params: { url: required, region: countryCode, sort_by: { type: 'string', values: ['top', 'new_releases'] } },
    records: { kind: 'list', at: 'products' },
    continuation: { kind: 'cursor', from: 'cursor', param: 'cursor', while: 'has_more' },
  },
  {
    id: 'socialnet/profile/reels', group: 'socialnet', method: 'profileReels', path: '/v1/scrape/socialnet/profile/reels',
    key: 'id', time: { at: 'creation_time', unit: 'iso' },
    stableKey: { fields: [['url']] },
    params: { url: required },
    records: { kind: 'list', at: 'data.reels' },
    continuation: { kind: 'cursorPair', from: ['data.cursor', 'data.next_page_id'], params: ['cursor', 'next_page_id'] },
  },
  {
    id: 'socialnet/group/posts', group: 'socialnet', method: 'groupPosts', path: '/v1/scrape/socialnet/group/posts',
    key: 'id', time: { at: 'publishTime', unit: 's' },
    stableKey: { fields: [['url'], ['author.id', 'publishTime']] },
    params: {
      url: str,
      group_id: str,
      sort_by: { type: 'string', values: ['TOP_POSTS', 'RECENT_ACTIVITY', 'CHRONOLOGICAL', 'CHRONOLOGICAL_LISTINGS'] },
    },
    oneOf: [['url', 'group_id']],
    records: { kind: 'list', at: 'data.posts' },
    continuation: { kind: 'cursor', from: 'data.cursor', param: 'cursor' },
  },
  {
    id: 'socialnet-marketplace/search', group: 'socialnetMarketplace', method: 'search', path: '/v1/scrape/socialnet-marketplace/search',
    key: 'id', time: null,
    stableKey: { fields: [['url']] },
    params: {
      lat: { type: 'number', required: true, min: -90, max: 90 },
      lng: { type: 'number', required: true, min: -180, max: 180 },
      query: str,
      radius_km: { type: 'number', min: 0 },
      min_price: { type: 'number', min: 0 },
      max_price: { type: 'number', min: 0 },
      condition: str,
      delivery_method: str,
      date_listed: str,
      availability: str,
      sort_by: str,
    },
    records: { kind: 'list', at: 'data.listings' },
    continuation: { kind: 'cursor', from: 'data.cursor', param: 'cursor', while: 'data.has_next_page' },
  },
  {
    id: 'socialnet-marketplace/location-search', group: 'socialnetMarketplace', method: 'locationSearch', path: '/v1/scrape/socialnet-marketplace/location-search',
    key: 'page_id', time: null,
    stableKey: { fields: [['name', 'postal_code', 'city']] },
    params: { query: required },
    records: { kind: 'list', at: 'data.locations' },
    continuation: { kind: 'none' },
  },
  {
    id: 'videosite/channel/shorts', group: 'videosite', method: 'channelShorts', path: '/v1/scrape/videosite/channel/shorts',
    key: 'id', time: { at: 'publishDate', unit: 'iso' }, newestFirst: { param: 'sort', values: ['newest'], byDefault: true },
    stableKey: { fields: [['url']] },
    params: { handle: str, channelId: str, sort: { type: 'string', values: ['newest', 'popular'] } },
    oneOf: [['handle', 'channelId']],
    records: { kind: 'list', at: 'data.shorts' },
    continuation: { kind: 'cursor', from: 'data.continuationToken', param: 'continuationToken' },
  },
  {
    id: 'videosite/video/comments', group: 'videosite', method: 'videoComments', path: '/v1/scrape/videosite/video/comments',
    key: 'id', time: { at: 'publishedTime', unit: 'iso' }, newestFirst: { param: 'order', values: ['newest'], byDefault: false },
    stableKey: { params: ['url'], fields: [['author.channelId', 'publishedTime']] },
    params: { url: required, order: { type: 'string', values: ['top', 'newest'] } },
    records: { kind: 'list', at: 'data.comments' },
    continuation: { kind: 'cursor', from: 'data.continuationToken', param: 'continuationToken' },
  },
  {
    id: 'videosite/video/transcript', group: 'videosite', method: 'videoTranscript', path: '/v1/scrape/videosite/video/transcript',
    key: null, time: null,
    stableKey: { params: ['url', 'language'], fields: [['startMs']] },
    params: { url: required, language: str },
    records: { kind: 'list', at: 'data.transcript' },
    continuation: { kind: 'none' },
  },
  {
    id: 'microblog/tweet/transcript', group: 'microblog', method: 'tweetTranscript', path: '/v1/scrape/microblog/tweet/transcript',
    key: null, time: null,
    stableKey: { params: ['url'], fields: [[]] },
    params: { url: required },
    records: { kind: 'one', at: 'data' },
    continuation: { kind: 'none' },
  },
  {
    id: 'microblog/community', group: 'microblog', method: 'community', path: '/v1/scrape/microblog/community',
    key: 'rest_id', time: { at: 'created_at', unit: 'ms' },
    stableKey: { params: ['url'], fields: [[]] },
    params: { url: required },
    records: { kind: 'one', at: 'data' },
    continuation: { kind: 'none' },
  },
  {
    id: 'microblog/comments', group: 'microblog', method: 'comments', path: '/v1/scrape/microblog/comments',
    key: 'rest_id', time: { at: 'legacy.created_at', unit: 's' },
    stableKey: { params: ['url'], fields: [['core.user_results.result.rest_id', 'legacy.created_at']] },
    params: { url: required },
    records: { kind: 'timeline', at: 'data.result.instructions' },
    continuation: { kind: 'timeline', from: 'data.cursor.bottom', param: 'cursor' },
  },
  {
    id: 'search-ad-library/company-ads', group: 'searchAdLibrary', method: 'companyAds', path: '/v1/scrape/search-ad-library/company-ads',
    key: 'creativeId', time: { at: 'firstShown', unit: 'iso' },
    stableKey: { fields: [['adUrl']] },
    params: {
      domain: str,
      advertiser_id: str,
      topic: { type: 'string', values: ['all', 'political'] },
      region: countryCode,
      start_date: isoDate,
      end_date: isoDate,
    },
    oneOf: [['domain', 'advertiser_id']],
    dependencies: [{ param: 'topic', equals: 'political', needs: 'region' }],
    records: { kind: 'list', at: 'data.ads' },
    continuation: { kind: 'cursor', from: 'data.cursor', param: 'cursor' },
  },
  {
    id: 'socialnet-ad-library/search', group: 'socialnetAdLibrary', method: 'search', path: '/v1/scrape/socialnet-ad-library/search',
    key: 'ad_archive_id', time: null,
    stableKey: { fields: [['page_id', 'snapshot.link_url', 'snapshot.title', 'snapshot.body.text']] },
    params: {
      query: required,
      search_type: str,
      ad_type: str,
      country: str,
      status: str,
      media_type: str,
      start_date: str,
      end_date: str,
      sort_by: str,
    },
    records: { kind: 'list', at: 'data.searchResults' },
    continuation: { kind: 'cursor', from: 'data.cursor', param: 'cursor' },
  },
  {
    id: 'photoshare/transcript', group: 'photoshare', method: 'transcript', path: '/v1/scrape/photoshare/transcript',
    key: 'id', time: null,
    stableKey: { fields: [['shortcode']] },
    params: { url: required },
    records: { kind: 'list', at: 'data.transcripts' },
    continuation: { kind: 'none' },
  },
  {
    id: 'photoshare/search/hashtag', group: 'photoshare', method: 'hashtag', path: '/v1/scrape/photoshare/search/hashtag',
    key: 'id', time: { at: 'taken_at', unit: 'iso' },
    stableKey: { fields: [['shortcode'], ['url']] },
    params: { hashtag: required, media_type: { type: 'string', values: ['all', 'reels'] }, date_posted: str },
    records: { kind: 'list', at: 'data.posts' },
    continuation: { kind: 'cursor', from: 'data.cursor', param: 'cursor' },
  },
  {
    id: 'photoshare/highlight-detail', group: 'photoshare', method: 'highlightDetail', path: '/v1/scrape/photoshare/highlight-detail',
    key: 'id', time: { at: 'created_at', unit: 's' },
    stableKey: { params: ['id'], fields: [[]] },
    params: { id: { type: 'string', required: true, pattern: { source: '\\d+', description: 'digits only, without the highlight: prefix' } } },
    records: { kind: 'one', at: 'data' },
    continuation: { kind: 'none' },
  },
  {
    id: 'photoshare/post-info', group: 'photoshare', method: 'postInfo', path: '/v1/scrape/photoshare/post-info',
    key: 'id', time: { at: 'taken_at_timestamp', unit: 's' },
    stableKey: { fields: [['shortcode']] },
    params: { url: required },
    records: { kind: 'one', at: 'data.data.xdt_shortcode_media' },
    continuation: { kind: 'none' },
  },
  {
    id: 'forum/post/comments', group: 'forum', method: 'postComments', path: '/v1/scrape/forum/post/comments',
    key: 'id', time: { at: 'created_utc', unit: 's' },
    stableKey: { fields: [['permalink'], ['author', 'created_utc']] },
    params: { url: required },
    records: { kind: 'tree', at: 'data.comments' },
    continuation: { kind: 'tree', param: 'cursor' },
  },
  {
    id: 'forum/subforum', group: 'forum', method: 'subforum', path: '/v1/scrape/forum/subforum',
    key: 'id', time: { at: 'created_utc', unit: 's' }, newestFirst: { param: 'sort', values: ['new'], byDefault: false },
    stableKey: { fields: [['permalink'], ['author', 'created_utc']] },
    params: {
      subforum: required,
      timeframe: { type: 'string', values: ['all', 'day', 'week', 'month', 'year'] },
      sort: { type: 'string', values: ['best', 'hot', 'new', 'top', 'rising'] },
      trim: flag,
    },
    records: { kind: 'list', at: 'data.posts' },
    continuation: { kind: 'cursor', from: 'data.after', param: 'after' },
  },
  {
    id: 'professional/search/posts', group: 'professional', method: 'searchPosts', path: '/v1/scrape/professional/search/posts',
    key: 'url', time: { at: 'datePublished', unit: 'iso' },
    stableKey: { fields: [['author.url', 'datePublished']] },
    params: { query: required, date_posted: str },
    records: { kind: 'list', at: 'data.posts' },
    continuation: { kind: 'none' },
  },
  {
    id: 'search/search', group: 'search', method: 'web', path: '/v1/scrape/search/search',
    key: 'url', time: null,
    params: {
      query: required,
      region: countryCode,
      date_posted: { type: 'string', values: ['last-hour', 'last-day', 'last-week', 'last-month', 'last-year'] },
      page: { type: 'integer', min: 1, max: 11 },
    },
    records: { kind: 'list', at: 'data.results' },
    continuation: { kind: 'page', param: 'page', max: 11 },
  },
  {
    id: 'threadtext/user-posts', group: 'threadtext', method: 'userPosts', path: '/v1/scrape/threadtext/user-posts',
    key: 'id', time: { at: 'taken_at', unit: 's' },
    stableKey: { fields: [['code']] },
    params: { handle: required },
    records: { kind: 'list', at: 'data.posts' },
    continuation: { kind: 'none' },
  },
] as const satisfies readonly OperationSpec[];

/** One row of the operation table (`operations`), with its literal types. */
export type Operation = (typeof OPERATIONS)[number];
/** An operation's id, platform then operation: `forum/subforum`. */
export type OperationId = Operation['id'];

const BY_ID: ReadonlyMap<string, OperationSpec> = new Map(OPERATIONS.map((op) => [op.id, op]));

/** The row of `id`, or undefined when no operation has that id. */
export function findOperation(id: string): OperationSpec | undefined {
  return BY_ID.get(id);
}
