/**
 * Records of the photo-sharing platform (API reference 2.4): transcripts (E19), hashtag posts (E20),
 * highlight details (E21) and post info (E22).
 */
import type { JsonObject, JsonValue, KeyedCollection, ScrapeEnvelope, WireForm } from './common.ts';

/**
 * The AI transcript of one video: a record of `photoshare.transcript` (E19 `data.transcripts` item).
 * A carousel gives one per item.
 */
export interface PhotoshareTranscript {
  id: string;
  shortcode: string;
  /** `null` when no speech is detected. */
  text: string | null;
}

/** A comment shown with a hashtag post (`comments` item). */
export interface HashtagPostComment {
  id: string;
  text: string;
  like_count: number;
  /** ISO 8601. */
  created_at: string;
  owner: {
    id: string;
    is_verified: boolean;
    profile_pic_url: string;
    username: string;
  };
}

/** The account that posted (`owner` of a hashtag post). */
export interface PhotoshareOwner {
  id: string;
  username: string;
  is_verified: boolean;
  profile_pic_url: string;
  full_name: string;
  is_private: boolean;
  is_unpublished: boolean;
  follower_count: number;
  post_count: number;
}

/** The sound of a reel (`clips_music_attribution_info`). */
export interface ClipsMusicAttribution {
  artist_name: string;
  song_name: string;
  uses_original_audio: boolean;
  should_mute_audio: boolean;
  should_mute_audio_reason: string;
  audio_id: string;
}

/** A public post or reel for a hashtag: a record of `photoshare.hashtag` (E20 `data.posts` item). */
export interface HashtagPost {
  id: string;
  __typename: string;
  shortcode: string;
  url: string;
  caption: string;
  thumbnail_src: string;
  display_url: string;
  video_url: string;
  product_type: string;
  accessibility_caption: string | null;
  /** Nullable; shape not shown by the API reference. */
  location: JsonObject | null;
  has_audio: boolean;
  is_video: boolean;
  is_ad: boolean;
  is_affiliate: boolean;
  is_paid_partnership: boolean;
  /** Seconds. */
  video_duration: number;
  /** ISO 8601. */
  taken_at: string;
  like_count: number;
  comment_count: number;
  clips_music_attribution_info: ClipsMusicAttribution;
  owner: PhotoshareOwner;
  comments: HashtagPostComment[];
}

/** One size of an image (`image_versions2.candidates` item). */
export interface ImageCandidate {
  width: number;
  height: number;
  url: string;
  readonly [field: string]: unknown;
}

/** The account a highlight belongs to (`user`); the API reference lists these "and more". */
export interface HighlightUser {
  pk: string;
  id: string;
  username: string;
  full_name: string;
  is_private: boolean;
  is_verified: boolean;
  profile_pic_url: string;
  readonly [field: string]: unknown;
}

/** A story of a highlight (`items` item); the API reference lists these "and many flags". */
export interface HighlightItem {
  id: string;
  pk: string;
  /** Unix seconds. */
  taken_at: number;
  /** The video's renditions, `null` on a photo story; shape not shown by the API reference. */
  video_versions: JsonValue;
  /** Seconds; `null` on a photo story. Not typed by the API reference. */
  video_duration: number | null;
  image_versions2: { candidates: ImageCandidate[] };
  /** DASH manifest XML; not typed by the API reference. */
  video_dash_manifest: string | null;
  user: JsonObject;
  owner: JsonObject;
  readonly [field: string]: unknown;
}

/** A story highlight: the one record of `photoshare.highlightDetail` (E21 `data`). */
export interface HighlightDetail {
  /** `highlight:<highlight id>`. */
  id: `highlight:${string}`;
  strong_id__: string;
  reel_type: string;
  highlight_reel_type: string;
  title: string;
  /** Unix seconds. */
  latest_reel_media: number;
  /** Unix seconds. */
  created_at: number;
  media_count: number;
  media_ids: string[];
  cover_media: {
    cropped_image_version: { width: number; height: number; url: string; scans_profile: string };
    /** Fractions of the full image, `[left, top, right, bottom]`; not typed by the API reference. */
    crop_rect: number[];
    media_id: string;
    /** Shape not shown by the API reference. */
    full_image_version: JsonValue;
    /** Not typed by the API reference. */
    upload_id: string | null;
  };
  user: HighlightUser;
  items: HighlightItem[];
  is_pinned_highlight: boolean;
  is_archived: boolean;
  /** Shape not shown by the API reference. */
  disabled_reply_types: JsonValue;
  readonly [field: string]: unknown;
}

/**
 * Details of a post or reel: the one record of `photoshare.postInfo`
 * (E22 `data.data.xdt_shortcode_media`). The API reference lists these "and many further fields".
 */
export interface PostInfo {
  __typename: string;
  id: string;
  shortcode: string;
  thumbnail_src: string;
  display_url: string;
  /** A tiny preview image, encoded; not typed by the API reference. */
  media_preview: string | null;
  dimensions: { height: number; width: number };
  display_resources: Array<{ src: string; config_width: number; config_height: number }>;
  dash_info: { is_dash_eligible: boolean; video_dash_manifest: string | null };
  sharing_friction_info: { should_have_sharing_friction: boolean; bloks_app_url: string | null };
  readonly [field: string]: unknown;
}

/** E19 response: every transcript of a post, and a top-level `note` that transcripts are AI-powered. */
export type PhotoshareTranscriptPage = ScrapeEnvelope<{
  transcripts: KeyedCollection<PhotoshareTranscript>;
}> & { note?: string };

/** E20 response: a page of hashtag posts; `cursor` is absent on the last page (docs/wire.md). */
export type HashtagPage = ScrapeEnvelope<{
  hashtag: string;
  /** `all` in the API reference's example. */
  media_type: string;
  posts: KeyedCollection<WireForm<HashtagPost>>;
  cursor?: string;
}>;

/** E21 response. */
export type HighlightDetailPage = ScrapeEnvelope<WireForm<HighlightDetail>>;

/**
 * E22 response; note the double nesting `data.data`. The payload is the upstream's own response,
 * whose fields beside `data` the API reference does not show, so they are kept.
 */
export type PostInfoPage = ScrapeEnvelope<{
  data: { xdt_shortcode_media: WireForm<PostInfo> };
  readonly [field: string]: unknown;
}>;
