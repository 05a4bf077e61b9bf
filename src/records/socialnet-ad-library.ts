/** Records of the social network's ad library (API reference 2.4): ad search results (E18). */
import type { JsonObject, JsonValue, KeyedCollection, ScrapeEnvelope, WireForm } from './common.ts';

/** A card of a carousel ad (`snapshot.cards` item); the API reference also mentions watermarked variants. */
export interface AdCard {
  body: string;
  cta_type: string;
  caption: string;
  link_description: string;
  link_url: string;
  title: string;
  cta_text: string;
  /** Not typed by the API reference: `null` when the card has no such media. */
  video_hd_url: string | null;
  video_sd_url: string | null;
  video_preview_image_url: string | null;
  original_image_url: string | null;
  resized_image_url: string | null;
  readonly [field: string]: unknown;
}

/**
 * What the ad looked like (`snapshot`). The API reference lists these, "further nullable fields", and does not
 * show the complete list, so other fields are kept. Fields the API reference names without a type are strings
 * where the name says text or a URL, and any JSON value (`JsonValue`) where it does not.
 */
export interface AdSnapshot {
  page_id: string;
  page_name: string;
  page_profile_uri: string;
  page_profile_picture_url: string;
  cta_text: string;
  cta_type: string;
  display_format: string;
  link_description: string;
  link_url: string;
  title: string;
  body: { text: string };
  page_like_count: number;
  /** Category names; shape not shown by the API reference. */
  page_categories: JsonValue;
  /** Shape not shown by the API reference. */
  images: JsonValue;
  /** Shape not shown by the API reference. */
  videos: JsonValue;
  cards: AdCard[];
  is_reshared: boolean;
  /** Shape not shown by the API reference. */
  extra_links: JsonValue;
  /** Shape not shown by the API reference. */
  extra_texts: JsonValue;
  /** Shape not shown by the API reference. */
  extra_images: JsonValue;
  /** Shape not shown by the API reference. */
  extra_videos: JsonValue;
  /** Shape not shown by the API reference. */
  ec_certificates: JsonValue;
  readonly [field: string]: unknown;
}

/** An ad found by a search: a record of `socialnetAdLibrary.search` (E18 `data.searchResults` item). */
export interface AdSearchResult {
  ad_archive_id: string;
  page_id: string;
  page_name: string;
  /** Nullable; the number of ads in this ad's collation. */
  collation_count: number | null;
  /** Nullable. */
  collation_id: string | null;
  /** Nullable. */
  report_count: number | null;
  /** Nullable; a label such as a state-media notice. */
  state_media_run_label: string | null;
  is_active: boolean;
  has_user_reported: boolean;
  page_is_deleted: boolean;
  /** An object in the API reference; the service sends an empty one as `[]`. */
  menu_items: JsonObject | JsonValue[];
  impressions_with_index: {
    impressions_text: string | null;
    impressions_index: number;
  };
  snapshot: AdSnapshot;
}

/** E18 response: a page of results; `cursor` is absent on the last page. */
export type AdSearchPage = ScrapeEnvelope<{
  searchResults: KeyedCollection<WireForm<AdSearchResult>>;
  cursor?: string;
}>;
