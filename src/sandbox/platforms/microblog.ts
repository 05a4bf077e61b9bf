/**
 * Microblog: a post's AI transcript (E14, slow), a community (E15) and the replies to a post (E16).
 * Replies come as a timeline (docs/wire.md "Microblog comment timeline"): post entries and cursor
 * entries inside `result.instructions[].entries[]`, the only arrays API reference 2.2 allows in `data`.
 */
import { EPOCH_SECONDS, type SandboxClockReading } from '../clock.ts';
import { Rng, decodeCursor, encodeCursor, hash, keyed, pageIndices, recordSeconds, sizeOf, unixSecondsAgo } from '../data.ts';
import { envelope } from '../envelope.ts';
import { required } from '../params.ts';
import type { SandboxOperation, SandboxRequest } from '../platform.ts';

const COMMENTS_PAGE_SIZE = 20;

/** The post id of a `/status/<digits>` URL, or a stable one derived from the URL. */
function postIdOf(url: string): string {
  return /\/status\/(\d+)/.exec(url)?.[1] ?? new Rng('post-id', url).digits(19);
}

function transcript(request: SandboxRequest) {
  const url = required(request.query, 'url');
  const rng = new Rng(request.seed, 'microblog/transcript', url);
  const sentences: string[] = [];
  for (let i = rng.int(2, 6); i > 0; i--) sentences.push(rng.sentence());
  return envelope('microblog/tweet/transcript', { transcript: sentences.join(' ') });
}

function community(request: SandboxRequest) {
  const url = required(request.query, 'url');
  const rng = new Rng(request.seed, 'microblog/community', url);
  const restId = /\/communities\/(\d+)/.exec(url)?.[1] ?? rng.digits(19);
  const creatorId = rng.digits(19);
  return envelope('microblog/community', {
    __typename: 'Community',
    name: rng.words(2),
    description: rng.sentence(),
    role: 'NonMember',
    rest_id: restId,
    id: Buffer.from(`Community:${restId}`).toString('base64'),
    join_policy: rng.pick(['Open', 'RestrictedJoin']),
    is_member: false,
    is_nsfw: rng.bool(0.05),
    member_count: rng.int(10, 2_000_000),
    created_at: (EPOCH_SECONDS - rng.int(86_400, 5 * 365 * 86_400)) * 1000 + rng.int(0, 999),
    actions: { join_action_result: { __typename: 'CommunityJoinAction' }, id: Buffer.from(`Actions:${restId}`).toString('base64') },
    creator_results: {
      result: {
        __typename: 'User',
        id: Buffer.from(`User:${creatorId}`).toString('base64'),
        is_blue_verified: rng.bool(),
        core: { screen_name: rng.token(10) },
        verification: { verified: rng.bool(0.1) },
      },
      id: Buffer.from(`UserResults:${creatorId}`).toString('base64'),
    },
    rules: communityRules(rng),
    custom_banner_media: communityBanner(rng, restId, 'custom'),
    default_banner_media: communityBanner(rng, restId, 'default'),
    members_facepile_results: memberFacepile(rng),
    invites_result: { __typename: 'CommunityInvitesUnavailable' },
    join_requests_result: { __typename: 'CommunityJoinRequestsUnavailable' },
    trending_hashtags_slice: { __typename: 'Slice', items: {} },
  });
}

/** A community's banner image, its palette drawn from the community's sequence. */
function communityBanner(rng: Rng, restId: string, kind: string) {
  return {
    media_info: {
      __typename: 'ApiImage',
      color_info: {
        palette: keyed(
          Array.from({ length: rng.int(1, 4) }, () => ({
            rgb: { red: rng.int(0, 255), green: rng.int(0, 255), blue: rng.int(0, 255) },
            percentage: Math.round(rng.next() * 10_000) / 100,
          })),
        ),
      },
      original_img_url: `https://media.microblog.example/community_banner_img/${restId}/${kind}.jpg`,
      original_img_width: 1200,
      original_img_height: 480,
    },
    id: Buffer.from(`ApiMedia:${kind}:${restId}`).toString('base64'),
  };
}

/** A community's rules, none to five. */
function communityRules(rng: Rng) {
  return keyed(
    Array.from({ length: rng.int(0, 5) }, (_, index) => {
      const ruleId = rng.digits(19);
      return { rest_id: ruleId, description: rng.sentence(), name: `Rule ${index + 1}: ${rng.words(3)}`, id: Buffer.from(`CommunityRule:${ruleId}`).toString('base64') };
    }),
  );
}

/** The faces shown of a community's members, none to six. */
function memberFacepile(rng: Rng) {
  return keyed(
    Array.from({ length: rng.int(0, 6) }, () => {
      const memberId = rng.digits(19);
      return {
        result: {
          __typename: 'User',
          avatar: { image_url: `https://media.microblog.example/profile_images/${memberId}/normal.jpg` },
          id: Buffer.from(`User:${memberId}`).toString('base64'),
        },
        id: Buffer.from(`UserResults:${memberId}`).toString('base64'),
      };
    }),
  );
}

/** One reply to the post: a post result as the timeline carries it (API reference 2.4 "Microblog comments"). */
function reply(seed: string, url: string, postId: string, index: number, clock: SandboxClockReading) {
  const rng = new Rng(seed, 'microblog/comments', url, index);
  const restId = `${BigInt(postId) + BigInt(index + 1)}`;
  const userId = rng.digits(18);
  const screenName = `${rng.words(1)}_${rng.token(6)}`;
  // A long post's `full_text` is cut; its whole text is in `note_tweet`.
  const long = rng.bool(0.1);
  const text = long ? Array.from({ length: 5 }, () => rng.sentence(12, 20)).join(' ') : rng.sentence(3, 30);
  const hashtags = Array.from({ length: rng.int(0, 2) }, () => ({ text: rng.words(1), indices: keyed([0, 0]) }));
  return {
    __typename: 'Tweet',
    rest_id: restId,
    core: {
      user_results: {
        result: {
          __typename: 'User',
          rest_id: userId,
          is_blue_verified: rng.bool(0.3),
          legacy: {
            screen_name: screenName,
            name: rng.words(2),
            description: rng.sentence(),
            created_at: unixSecondsAgo(rng, 12 * 365),
            followers_count: rng.int(0, 500_000),
            friends_count: rng.int(0, 5_000),
            statuses_count: rng.int(1, 100_000),
            favourites_count: rng.int(0, 200_000),
            listed_count: rng.int(0, 500),
            media_count: rng.int(0, 2_000),
          },
        },
      },
    },
    legacy: {
      id_str: restId,
      full_text: long ? `${text.slice(0, 275)}…` : text,
      created_at: recordSeconds(clock, rng, index, () => unixSecondsAgo(rng, 30)),
      favorite_count: rng.int(0, 5_000),
      reply_count: rng.int(0, 200),
      retweet_count: rng.int(0, 1_000),
      quote_count: rng.int(0, 100),
      bookmark_count: rng.int(0, 300),
      conversation_id_str: postId,
      in_reply_to_status_id_str: postId,
      user_id_str: userId,
      lang: 'en',
      entities: { hashtags: keyed(hashtags), urls: {}, user_mentions: {}, symbols: {} },
      extended_entities: { media: {} },
    },
    ...(long ? { note_tweet: { note_tweet_results: { result: { text } } } } : {}),
  };
}

function comments(request: SandboxRequest) {
  const url = required(request.query, 'url');
  const resource = `${request.seed}|microblog/comments|${url}`;
  const postId = postIdOf(url);
  const total = sizeOf(url) + request.growth;
  const offset = decodeCursor(resource, request.query.get('cursor'));
  // Past the end a page holds cursor entries only: that empty page is how a walk learns it is done.
  const indices = offset < total ? pageIndices(total, COMMENTS_PAGE_SIZE, offset, request.duplicates, request.growth) : [];
  const next = Math.min(total, offset + COMMENTS_PAGE_SIZE);
  const bottom = encodeCursor(resource, next);
  const entries: unknown[] = indices.map((index) => {
    const result = reply(request.seed, url, postId, index, request.clock);
    return {
      entryId: `tweet-${result.rest_id}`,
      sortIndex: String(hash(`${url}|${index}`)),
      content: {
        entryType: 'TimelineTimelineItem',
        itemContent: { itemType: 'TimelineTweet', tweet_results: { result } },
      },
    };
  });
  entries.push(
    { entryId: `cursor-top-${offset}`, content: { entryType: 'TimelineTimelineCursor', value: encodeCursor(resource, offset), cursorType: 'Top' } },
    { entryId: `cursor-bottom-${next}`, content: { entryType: 'TimelineTimelineCursor', value: bottom, cursorType: 'Bottom' } },
  );
  return envelope('microblog/comments', {
    error: false,
    cursor: { bottom },
    result: { instructions: [{ type: 'TimelineAddEntries', entries }] },
  });
}

export const operations: SandboxOperation[] = [
  { id: 'microblog/tweet/transcript', operation: 'tweet transcript', slow: true, handle: transcript },
  { id: 'microblog/community', operation: 'community', handle: community },
  { id: 'microblog/comments', operation: 'comments', handle: comments },
];
