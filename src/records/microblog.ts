/**
 * Records of the microblog (API reference 2.4): a post's transcript (E14), a community (E15) and the replies
 * to a post (E16). Replies come inside a timeline whose `instructions` and `entries` are real arrays
 * on the wire (API reference 2.2); its shape is docs/wire.md "Microblog comment timeline".
 */
import type { JsonObject, JsonValue, ScrapeEnvelope, WireForm } from './common.ts';

/** The AI-generated transcript of a video post: the one record of `microblog.tweetTranscript` (E14 `data`). */
export interface TweetTranscript {
  /** Plain text of the whole video. */
  transcript: string;
}

/** A colour of a banner's palette. */
export interface BannerPaletteColor {
  rgb: { red: number; green: number; blue: number };
  percentage: number;
}

/** A community's banner image (`custom_banner_media`, `default_banner_media`). */
export interface CommunityBanner {
  media_info: {
    __typename: string;
    color_info: { palette: BannerPaletteColor[] };
    original_img_url: string;
    original_img_width: number;
    original_img_height: number;
  };
  id: string;
}

/** A rule of a community (`rules` item). */
export interface CommunityRule {
  rest_id: string;
  description: string;
  name: string;
  id: string;
}

/** A member shown on a community's page (`members_facepile_results` item). */
export interface CommunityFacepileMember {
  result: {
    __typename: string;
    avatar: { image_url: string };
    id: string;
  };
  id: string;
}

/** A community: the one record of `microblog.community` (E15 `data`). */
export interface MicroblogCommunity {
  __typename: string;
  name: string;
  description: string;
  /** The viewer's role, e.g. `NonMember`. */
  role: string;
  rest_id: string;
  id: string;
  /** `Open`, `RestrictedJoin` and others the API reference does not list. */
  join_policy: 'Open' | 'RestrictedJoin' | (string & {});
  is_member: boolean;
  is_nsfw: boolean;
  member_count: number;
  /** Unix milliseconds. */
  created_at: number;
  actions: { join_action_result: { __typename: string }; id: string };
  creator_results: {
    result: {
      __typename: string;
      id: string;
      is_blue_verified: boolean;
      core: { screen_name: string };
      verification: { verified: boolean };
    };
    id: string;
  };
  rules: CommunityRule[];
  custom_banner_media: CommunityBanner;
  default_banner_media: CommunityBanner;
  members_facepile_results: CommunityFacepileMember[];
  invites_result: { __typename: string };
  join_requests_result: { __typename: string };
  /** `items` is read as a keyed collection (an empty one, `{}`, in the sandbox); item shape not shown by the API reference. */
  trending_hashtags_slice: { __typename: string; items: JsonValue[] };
}

/**
 * The author of a reply (`core.user_results.result`). The API reference names the `legacy` profile counters
 * without listing them, so `legacy` keeps every field it carries.
 */
export interface MicroblogUser {
  rest_id: string;
  is_blue_verified: boolean;
  legacy: MicroblogUserLegacy;
  readonly [field: string]: unknown;
}

/** An author's profile data and counters; which counters the API reference does not list. */
export interface MicroblogUserLegacy {
  readonly [field: string]: unknown;
}

/** The post data of a reply (`legacy`). */
export interface MicroblogPostLegacy {
  full_text: string;
  /** Unix seconds (API reference 2.4 gives no other unit). */
  created_at: number;
  favorite_count: number;
  reply_count: number;
  retweet_count: number;
  quote_count: number;
  bookmark_count: number;
  conversation_id_str: string;
  /** Hashtags, links, mentions; shape not shown by the API reference. */
  entities: JsonObject;
  /** Attached media; shape not shown by the API reference. */
  extended_entities: JsonObject;
  readonly [field: string]: unknown;
}

/**
 * A reply to a post: a record of `microblog.comments`, the post result inside a timeline entry
 * (`content.itemContent.tweet_results.result`). The API reference does not show the full field list.
 */
export interface MicroblogPost {
  rest_id: string;
  core: { user_results: { result: MicroblogUser } };
  legacy: MicroblogPostLegacy;
  /** Present on long posts: the whole text, where `legacy.full_text` is cut. */
  note_tweet?: { note_tweet_results: { result: { text: string; readonly [field: string]: unknown } } };
  readonly [field: string]: unknown;
}

/** A timeline entry carrying a post. */
export interface MicroblogPostEntry {
  /** `tweet-<id>`. */
  entryId: string;
  content: {
    entryType: 'TimelineTimelineItem';
    itemContent: { itemType: 'TimelineTweet'; tweet_results: { result: MicroblogPost } };
  };
  readonly [field: string]: unknown;
}

/** A timeline entry carrying a cursor; the `Bottom` one continues the walk. */
export interface MicroblogCursorEntry {
  /** `cursor-bottom-<n>`, `cursor-top-<n>`. */
  entryId: string;
  content: {
    entryType: 'TimelineTimelineCursor';
    value: string;
    cursorType: 'Bottom' | 'Top' | (string & {});
  };
  readonly [field: string]: unknown;
}

/** An entry of a microblog timeline: a post, or the cursor entry that continues it. */
export type MicroblogTimelineEntry = MicroblogPostEntry | MicroblogCursorEntry;

/** One step of a timeline: entries to add. */
export interface MicroblogInstruction {
  type: 'TimelineAddEntries' | (string & {});
  entries: MicroblogTimelineEntry[];
}

/** E14 response. */
export type TweetTranscriptPage = ScrapeEnvelope<TweetTranscript>;

/** E15 response. */
export type MicroblogCommunityPage = ScrapeEnvelope<WireForm<MicroblogCommunity>>;

/**
 * E16 response: a page of replies. `cursor.bottom` is always present; the page after the last holds
 * cursor entries only (docs/wire.md).
 */
export type MicroblogCommentsPage = ScrapeEnvelope<{
  error: boolean;
  cursor: { bottom: string };
  result: { instructions: MicroblogInstruction[] };
}>;
