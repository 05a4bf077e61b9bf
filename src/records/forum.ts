/**
 * Records of the forum (API reference 2.4): a post's comment tree (E23) and a subforum's posts (E24).
 * The API nests comments (docs/wire.md "Forum comment tree"); the client yields them flattened,
 * depth first, as `ForumComment`s.
 */
import type { KeyedCollection, ScrapeEnvelope, ScrapeEnvelopeWithoutEndpoint } from './common.ts';

/** The post whose comments are listed (E23 `data.post`). */
export interface ForumPost {
  id: string;
  author: string;
  author_fullname: string;
  subforum: string;
  title: string;
  selftext: string;
  selftext_html: string;
  name: string;
  url: string;
  permalink: string;
  /** ISO 8601. */
  created_at_iso: string;
  downs: number;
  ups: number;
  score: number;
  total_awards_received: number;
  num_comments: number;
  /** Unix seconds. */
  created: number;
  /** Unix seconds. */
  created_utc: number;
  /** 0 to 1. */
  upvote_ratio: number;
  subforum_subscribers: number | null;
  is_video: boolean;
  archived: boolean;
  locked: boolean;
  over_18: boolean;
  spoiler: boolean;
}

/** Whether more comments follow, and the `cursor` that fetches them. */
export interface ForumMore {
  has_more: boolean;
  cursor: string;
}

/** The fields every forum comment carries, nested or flattened. */
export interface ForumCommentFields {
  url: string;
  id: string;
  author: string;
  author_fullname: string | null;
  body: string;
  body_html: string;
  /** `t1_<id>`. */
  name: string;
  /** `t3_<post id>` for a top-level comment, `t1_<comment id>` for a reply. */
  parent_id: string;
  permalink: string;
  /** ISO 8601. */
  created_at_iso: string;
  /** Unix seconds. */
  created_utc: number;
  ups: number;
  downs: number;
  score: number;
  collapsed: boolean;
}

/**
 * A comment as the API nests it (E23 `data.comments` item): its replies under `replies.items`, and
 * on the last of a batch of siblings, `more` when further siblings follow.
 */
export interface ForumCommentNode extends ForumCommentFields {
  replies: {
    items: KeyedCollection<ForumCommentNode>;
    /** Further replies of this comment. */
    more: ForumMore;
  };
  /** Further siblings of this comment. */
  more?: ForumMore;
}

/**
 * A comment of a post: a record of `forum.postComments`. The tree is flattened depth first, so each
 * comment comes right after its parent; `replies` and `more` are left out.
 */
export interface ForumComment extends ForumCommentFields {
  /** 0 for a top-level comment, 1 for a reply to it, and so on. */
  depth: number;
}

/**
 * A post of a subforum: a record of `forum.subforum` (E24 `data.posts` item). The API reference lists these
 * "plus flair, awarding, moderation and media fields", which are kept as they come.
 */
export interface SubforumPost {
  id: string;
  /** `t3_<id>`. */
  name: string;
  title: string;
  selftext: string;
  selftext_html: string;
  author: string;
  author_fullname: string;
  subforum: string;
  subforum_name_prefixed: string;
  subforum_id: string;
  subforum_type: string;
  url: string;
  permalink: string;
  domain: string;
  thumbnail: string;
  score: number;
  ups: number;
  downs: number;
  num_comments: number;
  num_crossposts: number;
  /** Unix seconds. */
  created: number;
  /** Unix seconds. */
  created_utc: number;
  subforum_subscribers: number;
  gilded: number;
  total_awards_received: number;
  upvote_ratio: number;
  is_video: boolean;
  over_18: boolean;
  spoiler: boolean;
  locked: boolean;
  archived: boolean;
  stickied: boolean;
  pinned: boolean;
  is_self: boolean;
  quarantine: boolean;
  hidden: boolean;
  saved: boolean;
  readonly [field: string]: unknown;
}

/**
 * A subforum post of a trimmed response (`trim=true`). The API reference says only that the response is
 * "trimmed-down"; these are the fields docs/wire.md "Trimmed subforum posts" keeps.
 */
export type TrimmedSubforumPost = Pick<
  SubforumPost,
  | 'id'
  | 'name'
  | 'title'
  | 'selftext'
  | 'author'
  | 'subforum'
  | 'url'
  | 'permalink'
  | 'score'
  | 'num_comments'
  | 'created_utc'
  | 'over_18'
  | 'is_self'
>;

/** E23 response: the post and one batch of comments with their nested replies. */
export type ForumPostCommentsPage = ScrapeEnvelope<{
  credits_charged: number;
  post: ForumPost;
  comments: KeyedCollection<ForumCommentNode>;
}>;

/** E24 response: a page of posts (no `endpoint`, API reference 2.1); `after` is absent on the last page. */
export type SubforumPage = ScrapeEnvelopeWithoutEndpoint<{
  posts: KeyedCollection<SubforumPost>;
  after?: string;
}>;

/** E24 response to `trim=true`: the same page with trimmed posts. */
export type TrimmedSubforumPage = ScrapeEnvelopeWithoutEndpoint<{
  posts: KeyedCollection<TrimmedSubforumPost>;
  after?: string;
}>;
