/** Records of the professional network (API reference 2.4): post search (E25). */
import type { JsonValue, KeyedCollection, ScrapeEnvelope, WireForm } from './common.ts';

/** A comment shown with a professional post (`comments` item). */
export interface ProfessionalComment {
  /** The commenter's name. */
  author: string;
  text: string;
  /** Link to the commenter's profile. */
  professionalUrl: string;
}

/** A post found by a search: a record of `professional.searchPosts` (E25 `data.posts` item). */
export interface ProfessionalPost {
  url: string;
  name: string;
  /** ISO 8601. */
  datePublished: string;
  description: string;
  /** Shape not shown by the API reference. */
  media: JsonValue;
  /** Image URL, or `null`. */
  image: string | null;
  /** Image URLs. */
  images: string[];
  author: {
    name: string;
    url: string;
    /** Image URL. */
    image: string;
    followers: number;
  };
  comments: ProfessionalComment[];
  likeCount: number;
  commentCount: number;
  /** Video posts only: image URL. */
  thumbnailUrl?: string;
  /** Video posts only: ISO 8601. */
  uploadDate?: string;
  /** Video posts only: the spoken text. */
  transcript?: string;
}

/** E25 response: every post found, in one response. */
export type ProfessionalSearchPage = ScrapeEnvelope<{
  credits_charged: number;
  query: string;
  posts: KeyedCollection<WireForm<ProfessionalPost>>;
}>;
