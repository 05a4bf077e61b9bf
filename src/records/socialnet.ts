/** Records of the social network (API reference 2.4): page reels (E7) and group posts (E8). */
import type { JsonObject, KeyedCollection, ScrapeEnvelope, WireForm } from './common.ts';

/** A reel of a public page: a record of `socialnet.profileReels` (E7 `data.reels` item). */
export interface PageReel {
  id: string;
  post_id: string;
  feedback_id: string;
  video_id: string;
  url: string;
  description: string;
  /** Image URL. */
  thumbnail: string;
  video_url: string;
  /** ISO 8601. */
  creation_time: string;
  view_count: number;
  /** Duration in milliseconds. */
  play_time_in_ms: number;
  music: { track_title: string | null };
  author: {
    id: string;
    name: string;
    is_verified: boolean;
    url: string;
    /** Image URL. */
    image: string;
  };
}

/** A comment shown under a group post (`topComments` item). */
export interface GroupPostComment {
  id: string;
  text: string;
  /** Unix seconds, as on the post. */
  publishTime: number;
  author: {
    id: string;
    name: string;
    gender: string;
    url: string | null;
  };
}

/** A post of a public group: a record of `socialnet.groupPosts` (E8 `data.posts` item). */
export interface GroupPost {
  id: string;
  /** Null on posts without text (photos, shares), as the service sends them. */
  text: string | null;
  url: string;
  author: {
    __typename: string;
    name: string;
    short_name: string;
    id: string;
  };
  reactionCount: number;
  commentCount: number;
  /** Nullable; a count when the post has a video. */
  videoViewCount: number | null;
  /** Unix seconds. */
  publishTime: number;
  videoDetails: JsonObject;
  /** Nullable; shape not shown by the API reference. */
  image: JsonObject | string | null;
  topComments: GroupPostComment[];
}

/** E7 response: a page of reels. `cursor` and `next_page_id` are absent on the last page. */
export type PageReelsPage = ScrapeEnvelope<{
  reels: KeyedCollection<PageReel>;
  cursor?: string;
  next_page_id?: string;
}>;

/** E8 response: up to 3 group posts. `cursor` is absent on the last page. */
export type GroupPostsPage = ScrapeEnvelope<{
  posts: KeyedCollection<WireForm<GroupPost>>;
  cursor?: string;
}>;
