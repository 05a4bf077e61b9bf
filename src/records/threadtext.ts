/** Records of the text-post platform (API reference 2.4): a user's posts (E27). */
import type { JsonObject, JsonValue, KeyedCollection, ScrapeEnvelope, WireForm } from './common.ts';

/** One piece of a post's text (`text_fragments.fragments` item). */
export interface TextFragment {
  /** e.g. `plaintext`, `link`, `mention`. */
  fragment_type: string;
  plaintext: string;
  /** Set on link fragments; shape not shown by the API reference. */
  link_fragment: JsonObject | null;
  /** Set on mention fragments; shape not shown by the API reference. */
  mention_fragment: JsonObject | null;
  /** Set on tag fragments; shape not shown by the API reference. */
  tag_fragment: JsonObject | null;
  linkified_web_url: string | null;
}

/** The author of a text post (`user`); the API reference lists these "and transparency fields". */
export interface ThreadtextUser {
  pk: string;
  id: string;
  username: string;
  profile_pic_url: string;
  is_verified: boolean;
  text_post_app_is_private: boolean;
  has_onboarded_to_text_post_app: boolean;
  /** Shape not shown by the API reference. */
  friendship_status: JsonObject | null;
  readonly [field: string]: unknown;
}

/** The platform-specific part of a text post (`text_post_app_info`); the API reference lists these "and more". */
export interface TextPostAppInfo {
  text_fragments: { fragments: TextFragment[] };
  reshare_count: number;
  direct_reply_count: number;
  repost_count: number;
  quote_count: number;
  self_thread_count: number;
  reply_control: string;
  is_reply: boolean;
  is_post_unavailable: boolean;
  /** Shape not shown by the API reference. */
  share_info: JsonObject | null;
  /** Shape not shown by the API reference. */
  pinned_post_info: JsonObject | null;
  readonly [field: string]: unknown;
}

/**
 * A post of a user: a record of `threadtext.userPosts` (E27 `data.posts` item). The API reference does not show
 * the complete field list, so fields beyond these are kept.
 */
export interface ThreadtextPost {
  id: string;
  pk: string;
  /** The post's short code, as in its URL. */
  code: string;
  user: ThreadtextUser;
  caption: { text: string; pk: string; has_translation: boolean };
  caption_is_edited: boolean;
  text_post_app_info: TextPostAppInfo;
  image_versions2: { candidates: Array<{ height: number; width: number; url: string }> };
  /** Nullable; shape not shown by the API reference. */
  carousel_media: JsonValue;
  /** Nullable; shape not shown by the API reference. */
  audio: JsonObject | null;
  /** Nullable; shape not shown by the API reference. */
  transcription_data: JsonObject | null;
  is_paid_partnership: boolean | null;
  readonly [field: string]: unknown;
}

/** E27 response: every post of the user, in one response. */
export type ThreadtextPostsPage = ScrapeEnvelope<{
  posts: KeyedCollection<WireForm<ThreadtextPost>>;
}>;
