/**
 * Records of the video site (API reference 2.4): channel shorts (E11), video comments (E12) and transcript
 * segments (E13).
 */
import type { JsonObject, KeyedCollection, ScrapeEnvelope } from './common.ts';

/** A short video of a channel: a record of `videosite.channelShorts` (E11 `data.shorts` item). */
export interface ChannelShort {
  type: 'short';
  id: string;
  url: string;
  title: string;
  /** Formatted for display, e.g. `1.2M views`. */
  viewCountText: string;
  commentCountText: string;
  likeCountText: string;
  genre: string;
  viewCountInt: number;
  commentCountInt: number;
  likeCountInt: number;
  /** `null` in listings; the full text comes from a video-details operation. */
  description: string | null;
  /** ISO 8601 with UTC offset. */
  publishDate: string;
}

/** A top-level comment of a video: a record of `videosite.videoComments` (E12 `data.comments` item). */
export interface VideoComment {
  id: string;
  content: string;
  /** Relative text, e.g. `2 days ago`. */
  publishedTimeText: string;
  /** ISO 8601. */
  publishedTime: string;
  replyLevel: number;
  author: {
    name: string;
    channelId: string;
    isVerified: boolean;
    isCreator: boolean;
    avatarUrl: string;
    channelUrl: string;
  };
  engagement: { likes: number; replies: number };
  /** Fields the API reference never names, kept as sent (the service adds e.g. `isPinned`). */
  readonly [field: string]: unknown;
}

/**
 * One timed line of a video's transcript: a record of `videosite.videoTranscript`
 * (E13 `data.transcript` item). Times are milliseconds from the start, sent as decimal strings.
 */
export interface TranscriptSegment {
  text: string;
  /** Milliseconds from the start of the video, as a decimal string. */
  startMs: string;
  /** Milliseconds from the start of the video, as a decimal string. */
  endMs: string;
  /** Display form of the start, e.g. `1:05`. */
  startTimeText: string;
}

/** E11 response: a page of shorts. The other collections are empty; the token is absent at the end. */
export type ChannelShortsPage = ScrapeEnvelope<{
  shorts: KeyedCollection<ChannelShort>;
  videos: KeyedCollection<JsonObject>;
  channels: KeyedCollection<JsonObject>;
  playlists: KeyedCollection<JsonObject>;
  shelves: KeyedCollection<JsonObject>;
  lives: KeyedCollection<JsonObject>;
  continuationToken?: string;
}>;

/** E12 response: a page of about 20 comments; the token is absent at the end. */
export type VideoCommentsPage = ScrapeEnvelope<{
  comments: KeyedCollection<VideoComment>;
  continuationToken?: string;
}>;

/** E13 response: a whole transcript. */
export type VideoTranscriptPage = ScrapeEnvelope<{
  type: string;
  url: string;
  transcript: KeyedCollection<TranscriptSegment>;
  /** The whole text in one string. */
  transcript_only_text: string;
}>;
