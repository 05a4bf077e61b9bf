/**
 * Records of the short-video platform (API reference 2.4): profile (E2), profile videos (E3), popular videos
 * (E4) and comment replies (E5). Field types follow the API reference; where the API reference lists a field without a type,
 * the type is the one the platform is known to send, noted on the field.
 */
import type { JsonObject, JsonValue, KeyedCollection, ScrapeEnvelope, WireForm } from './common.ts';

/** The account part of a short-video profile (E2 `data.user`). */
export interface ShortvideoUser {
  id: string;
  shortId: string;
  uniqueId: string;
  nickname: string;
  signature: string;
  secUid: string;
  roomId: string;
  recommendReason: string;
  nowInvitationCardUrl: string;
  language: string;
  /** Image URL. */
  avatarLarger: string;
  /** Image URL. */
  avatarMedium: string;
  /** Image URL. */
  avatarThumb: string;
  /** Unix seconds. */
  createTime: number;
  /** Unix seconds. */
  uniqueIdModifyTime: number;
  /** Unix seconds. */
  nickNameModifyTime: number;
  verified: boolean;
  ftc: boolean;
  openFavorite: boolean;
  privateAccount: boolean;
  secret: boolean;
  isADVirtual: boolean;
  ttSeller: boolean;
  isEmbedBanned: boolean;
  canExpPlaylist: boolean;
  suggestAccountBind: boolean;
  relation: number;
  commentSetting: number;
  duetSetting: number;
  stitchSetting: number;
  downloadSetting: number;
  followingVisibility: number;
  profileEmbedPermission: number;
  isOrganization: number;
  UserStoryStatus: number;
  bioLink: { link: string; risk: number };
  commerceUserInfo: { commerceUser: boolean };
  profileTab: { showMusicTab: boolean; showQuestionTab: boolean; showPlayListTab: boolean };
  /** An object in the API reference; the service sends an empty one as `[]`. */
  eventList: JsonObject | JsonValue[];
}

/** Profile counters (E2 `data.stats`), rounded for large values. */
export interface ShortvideoStats {
  followerCount: number;
  followingCount: number;
  heart: number;
  heartCount: number;
  videoCount: number;
  diggCount: number;
  friendCount: number;
}

/** The same counters as `ShortvideoStats`, exact, as decimal strings (E2 `data.statsV2`). */
export type ShortvideoStatsV2 = { [Counter in keyof ShortvideoStats]: string };

/** A short-video profile: the one record of `shortvideo.profile` (E2 `data`). */
export interface ShortvideoProfile {
  user: ShortvideoUser;
  stats: ShortvideoStats;
  /** Absent from some service answers (bodies it publishes show profiles without it). */
  statsV2?: ShortvideoStatsV2;
  /**
   * An object on the wire, empty in the API reference's example. Read as a keyed collection (API reference 2.2; its name
   * says list), so the client yields an array; the item shape is not shown by the API reference.
   */
  itemList: JsonValue[];
}

/** An image as the short-video platform describes it: one picture at several URLs. */
export interface ShortvideoImage {
  uri: string;
  url_list: string[];
  width: number;
  height: number;
  /** Not typed by the API reference; the platform sends a URL prefix or `null`. */
  url_prefix: string | null;
}

/** The author of a profile video (E3 `author`); the API reference lists these and "many further account flags". */
export interface ShortvideoAuthor {
  uid: string;
  short_id: string;
  nickname: string;
  signature: string;
  unique_id: string;
  sec_uid: string;
  follower_count: number;
  following_count: number;
  aweme_count: number;
  total_favorited: number;
  custom_verify: string;
  avatar_larger: ShortvideoImage;
  avatar_thumb: ShortvideoImage;
  avatar_medium: ShortvideoImage;
  avatar_168x168: ShortvideoImage;
  avatar_300x300: ShortvideoImage;
  readonly [field: string]: unknown;
}

/** The sound of a profile video (E3 `music`); the API reference lists these "and more". */
export interface ShortvideoMusic {
  /**
   * Numeric on the platform, and past 2^53: a `bigint` with the same digits as `id_str` (README
   * "Big integers"); a `number` when a service sends a smaller one.
   */
  id: number | bigint;
  id_str: string;
  title: string;
  author: string;
  album: string;
  cover_large: ShortvideoImage;
  cover_medium: ShortvideoImage;
  readonly [field: string]: unknown;
}

/**
 * A video of a profile: a record of `shortvideo.videos` (E3 `data.aweme_list` item). The API reference does not
 * show the item's complete field list, so fields beyond these are kept.
 */
export interface ShortvideoVideo {
  aweme_id: string;
  desc: string;
  /** Unix seconds. */
  create_time: number;
  author: ShortvideoAuthor;
  music: ShortvideoMusic;
  readonly [field: string]: unknown;
}

/** A popular video: a record of `shortvideo.popularVideos` (E4 `data.videos` item). */
export interface PopularVideo {
  /** Two-letter country code, e.g. `US`. */
  country_code: string;
  /** Country name. */
  region: string;
  /** Cover image URL. */
  cover: string;
  /** Seconds. */
  duration: number;
  id: string;
  /** The same value as `id`. */
  item_id: string;
  item_url: string;
  title: string;
}

/** The commenter of a comment reply (E5 `user`); the API reference lists these "and many nullable fields". */
export interface CommentReplyUser {
  nickname: string;
  sec_uid: string;
  uid: string;
  unique_id: string;
  custom_verify: string;
  enterprise_verify_reason: string;
  predicted_age_group: string;
  avatar_thumb: { uri: string; url_list: string[]; url_prefix: string | null };
  readonly [field: string]: unknown;
}

/** A reply to a short-video comment: a record of `shortvideo.commentReplies` (E5 `data.comments` item). */
export interface CommentReply {
  aweme_id: string;
  cid: string;
  reply_id: string;
  reply_to_reply_id: string;
  comment_language: string;
  text: string;
  /** Unix seconds. */
  create_time: number;
  digg_count: number;
  collect_stat: number;
  fold_status: number;
  status: number;
  stick_position: number;
  thread_id: number;
  trans_btn_style: number;
  user_digged: number;
  is_author_digged: boolean;
  is_comment_translatable: boolean;
  is_high_purchase_intent: boolean;
  no_show: boolean;
  thread_has_more: boolean;
  user_buried: boolean;
  /** Nullable; shape not shown by the API reference. */
  comment_post_item_ids: JsonValue;
  /** Nullable; shape not shown by the API reference. */
  image_list: JsonValue;
  /** Nullable; shape not shown by the API reference. */
  label_list: JsonValue;
  /** Nullable; shape not shown by the API reference. */
  reply_comment: JsonValue;
  /**
   * An object (the API reference). When that object is a keyed collection (mentions, in the sandbox) the client
   * yields it as an array.
   */
  text_extra: JsonObject | JsonValue[];
  share_info: {
    acl: { code: number; extra: string };
    desc: string;
    title: string;
    url: string;
  };
  user: CommentReplyUser;
}

/** E2 response. */
export type ShortvideoProfilePage = ScrapeEnvelope<WireForm<ShortvideoProfile>>;

/** E3 response: a page of profile videos. */
export type ShortvideoVideosPage = ScrapeEnvelope<{
  /** Send as `max_cursor` for the next page. */
  max_cursor: number;
  /** 1 while more pages follow, else 0. */
  has_more: number;
  status_code: number;
  aweme_list: KeyedCollection<WireForm<ShortvideoVideo>>;
}>;

/** E4 response: a page of popular videos. */
export type PopularVideosPage = ScrapeEnvelope<{
  pagination: { has_more: boolean; limit: number; page: number; total_count: number };
  videos: KeyedCollection<PopularVideo>;
}>;

/** E5 response: a page of comment replies. */
export type CommentRepliesPage = ScrapeEnvelope<{
  comments: KeyedCollection<WireForm<CommentReply>>;
  /** Offset to send as `cursor` for the next page. */
  cursor: number;
  /** 1 while more pages follow, else 0. */
  has_more: number;
  total: number;
  status_code: number;
  status_msg: string;
  extra: {
    /** Shape not shown by the API reference. */
    fatal_item_ids: JsonValue;
    logid: string;
    /** Unix milliseconds. */
    now: number;
  };
  log_pb: { impr_id: string };
}>;
