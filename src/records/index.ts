/**
 * Every record the client yields and every raw page it reads, typed as API reference 2.4 describes them.
 * Records have keyed collections as arrays (API reference 2.2); pages are the bodies as sent.
 */
import type { ForumComment, ForumPostCommentsPage, SubforumPage, SubforumPost } from './forum.ts';
import type {
  MicroblogCommentsPage,
  MicroblogCommunity,
  MicroblogCommunityPage,
  MicroblogPost,
  TweetTranscript,
  TweetTranscriptPage,
} from './microblog.ts';
import type {
  HashtagPage,
  HashtagPost,
  HighlightDetail,
  HighlightDetailPage,
  PhotoshareTranscript,
  PhotoshareTranscriptPage,
  PostInfo,
  PostInfoPage,
} from './photoshare.ts';
import type { ProfessionalPost, ProfessionalSearchPage } from './professional.ts';
import type { CompanyAd, CompanyAdsPage } from './search-ad-library.ts';
import type { WebResult, WebSearchPage } from './search.ts';
import type {
  CommentRepliesPage,
  CommentReply,
  PopularVideo,
  PopularVideosPage,
  ShortvideoProfile,
  ShortvideoProfilePage,
  ShortvideoVideo,
  ShortvideoVideosPage,
} from './shortvideo.ts';
import type { ShopProduct, ShortvideoShopPage } from './shortvideo-shop.ts';
import type { AdSearchPage, AdSearchResult } from './socialnet-ad-library.ts';
import type {
  MarketplaceListing,
  MarketplaceLocation,
  MarketplaceLocationsPage,
  MarketplaceSearchPage,
} from './socialnet-marketplace.ts';
import type { GroupPost, GroupPostsPage, PageReel, PageReelsPage } from './socialnet.ts';
import type { ThreadtextPost, ThreadtextPostsPage } from './threadtext.ts';
import type {
  ChannelShort,
  ChannelShortsPage,
  TranscriptSegment,
  VideoCommentsPage,
  VideoComment,
  VideoTranscriptPage,
} from './videosite.ts';

export type * from './common.ts';
export type * from './account.ts';
export type * from './shortvideo.ts';
export type * from './shortvideo-shop.ts';
export type * from './socialnet.ts';
export type * from './socialnet-marketplace.ts';
export type * from './socialnet-ad-library.ts';
export type * from './videosite.ts';
export type * from './microblog.ts';
export type * from './search-ad-library.ts';
export type * from './photoshare.ts';
export type * from './forum.ts';
export type * from './professional.ts';
export type * from './search.ts';
export type * from './threadtext.ts';

/** The record each scrape operation yields, by operation id (the path after `/v1/scrape/`). */
export interface RecordsByOperation {
  'shortvideo/profile': ShortvideoProfile;
  'shortvideo/videos': ShortvideoVideo;
  'shortvideo/videos/popular': PopularVideo;
  'shortvideo/comment-replies': CommentReply;
  'shortvideo-shop/products': ShopProduct;
  'socialnet/profile/reels': PageReel;
  'socialnet/group/posts': GroupPost;
  'socialnet-marketplace/search': MarketplaceListing;
  'socialnet-marketplace/location-search': MarketplaceLocation;
  'videosite/channel/shorts': ChannelShort;
  'videosite/video/comments': VideoComment;
  'videosite/video/transcript': TranscriptSegment;
  'microblog/tweet/transcript': TweetTranscript;
  'microblog/community': MicroblogCommunity;
  'microblog/comments': MicroblogPost;
  'search-ad-library/company-ads': CompanyAd;
  'socialnet-ad-library/search': AdSearchResult;
  'photoshare/transcript': PhotoshareTranscript;
  'photoshare/search/hashtag': HashtagPost;
  'photoshare/highlight-detail': HighlightDetail;
  'photoshare/post-info': PostInfo;
  'forum/post/comments': ForumComment;
  'forum/subforum': SubforumPost;
  'professional/search/posts': ProfessionalPost;
  'search/search': WebResult;
  'threadtext/user-posts': ThreadtextPost;
}

/** The raw 200 body of each scrape operation, by operation id, as `stream.pages()` yields it. */
export interface PagesByOperation {
  'shortvideo/profile': ShortvideoProfilePage;
  'shortvideo/videos': ShortvideoVideosPage;
  'shortvideo/videos/popular': PopularVideosPage;
  'shortvideo/comment-replies': CommentRepliesPage;
  'shortvideo-shop/products': ShortvideoShopPage;
  'socialnet/profile/reels': PageReelsPage;
  'socialnet/group/posts': GroupPostsPage;
  'socialnet-marketplace/search': MarketplaceSearchPage;
  'socialnet-marketplace/location-search': MarketplaceLocationsPage;
  'videosite/channel/shorts': ChannelShortsPage;
  'videosite/video/comments': VideoCommentsPage;
  'videosite/video/transcript': VideoTranscriptPage;
  'microblog/tweet/transcript': TweetTranscriptPage;
  'microblog/community': MicroblogCommunityPage;
  'microblog/comments': MicroblogCommentsPage;
  'search-ad-library/company-ads': CompanyAdsPage;
  'socialnet-ad-library/search': AdSearchPage;
  'photoshare/transcript': PhotoshareTranscriptPage;
  'photoshare/search/hashtag': HashtagPage;
  'photoshare/highlight-detail': HighlightDetailPage;
  'photoshare/post-info': PostInfoPage;
  'forum/post/comments': ForumPostCommentsPage;
  'forum/subforum': SubforumPage;
  'professional/search/posts': ProfessionalSearchPage;
  'search/search': WebSearchPage;
  'threadtext/user-posts': ThreadtextPostsPage;
}

/** The id of a scrape operation. */
export type OperationId = keyof RecordsByOperation;
