/**
 * The social network: a page's reels (E7, `cursor` and `next_page_id` always together, 10 a page)
 * and a public group's posts (E8, `cursor`, 3 a page).
 */
import { Rng, decodeCursor, encodeCursor, isoFromSeconds, grownBy, keyed, newestFirstSeconds, pageIndices, recordSeconds, serialId, sizeOf } from '../data.ts';
import { envelope } from '../envelope.ts';
import { oneOf, optional, required } from '../params.ts';
import { SandboxValidationError, type SandboxOperation, type SandboxRequest } from '../platform.ts';

const REELS_PAGE = 10;
const POSTS_PAGE = 3;
const SITE = 'https://www.socialnet.example';
const CDN = 'https://scontent.socialnet.example';

function numericId(resource: string, index: number, lead = '1'): string {
  return `${lead}${serialId(resource, index, 6)}`;
}

function reels(request: SandboxRequest) {
  const { query } = request;
  const url = required(query, 'url', 'Socialnet page URL is required');
  const cursor = optional(query, 'cursor');
  const nextPageId = optional(query, 'next_page_id');
  // API reference E7: the two values only work together.
  if (cursor !== undefined && nextPageId === undefined) throw new SandboxValidationError('Missing required parameter: next_page_id');
  if (nextPageId !== undefined && cursor === undefined) throw new SandboxValidationError('Missing required parameter: cursor');
  const resource = ['socialnet/profile/reels', url].join('|');
  const base = sizeOf(url);
  const total = base + request.growth;
  const offset = decodeCursor(resource, cursor);
  if (nextPageId !== undefined && decodeCursor(`${resource}|page`, nextPageId) !== offset) {
    throw new SandboxValidationError('Invalid cursor');
  }
  const pageRng = new Rng(request.seed, 'socialnet/page', url);
  const page = {
    id: pageRng.digits(15),
    name: pageRng.words(2).replace(/\b\w/g, (c) => c.toUpperCase()),
    is_verified: pageRng.bool(0.3),
    url,
    image: `${CDN}/v/t39.30808-1/${pageRng.token(24)}.jpg`,
  };
  const list = pageIndices(total, REELS_PAGE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    const videoId = numericId(resource, index);
    const postId = numericId(resource, index, '2');
    return {
      id: videoId,
      post_id: postId,
      feedback_id: Buffer.from(`feedback:${postId}`).toString('base64'),
      video_id: videoId,
      url: `${SITE}/reel/${videoId}`,
      description: rng.sentence(),
      thumbnail: `${CDN}/v/t15.5256-10/${rng.token(24)}.jpg`,
      video_url: `${CDN}/o1/v/t2/f2/m69/${rng.token(32)}.mp4`,
      creation_time: isoFromSeconds(recordSeconds(request.clock, rng, index, () => newestFirstSeconds(rng, index, base, 86_400))),
      view_count: rng.int(0, 5_000_000) + grownBy(request.growth, index),
      play_time_in_ms: rng.int(3_000, 90_000),
      music: { track_title: rng.nullable(`${rng.words(2)} (Original audio)`, 0.4) },
      author: page,
    };
  });
  const next = offset + REELS_PAGE;
  const more = next < total ? { cursor: encodeCursor(resource, next), next_page_id: encodeCursor(`${resource}|page`, next) } : {};
  return envelope('socialnet/profile/reels', { reels: keyed(list), ...more });
}

const SORTS = ['TOP_POSTS', 'RECENT_ACTIVITY', 'CHRONOLOGICAL', 'CHRONOLOGICAL_LISTINGS'] as const;

function groupPosts(request: SandboxRequest) {
  const { query } = request;
  const url = optional(query, 'url');
  const groupId = optional(query, 'group_id');
  if (url === undefined && groupId === undefined) throw new SandboxValidationError('Missing required parameter: url or group_id');
  const sortBy = oneOf(query, 'sort_by', SORTS, 'TOP_POSTS');
  const identifier = url ?? groupId ?? '';
  const resource = ['socialnet/group/posts', url, groupId, sortBy].join('|');
  const base = sizeOf(identifier);
  const total = base + request.growth;
  const offset = decodeCursor(resource, optional(query, 'cursor'));
  const group = groupId ?? new Rng(request.seed, 'socialnet/group', identifier).digits(15);
  const list = pageIndices(total, POSTS_PAGE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    const id = numericId(resource, index);
    const publishTime = recordSeconds(request.clock, rng, index, () => newestFirstSeconds(rng, index, base, 7_200));
    // A comment on a post `advance()` added is not dated after the clock.
    const latest = index < 0 ? request.clock.now : Infinity;
    const video = rng.bool(0.25);
    const comments = Array.from({ length: rng.int(0, 3) }, (_, n) => ({
      id: Buffer.from(`comment:${id}_${n}`).toString('base64'),
      text: rng.sentence(2, 10),
      publishTime: Math.min(publishTime + rng.int(60, 86_400), latest),
      author: {
        id: rng.digits(15),
        name: rng.words(2),
        gender: rng.pick(['MALE', 'FEMALE', 'NEUTER']),
        url: rng.nullable(`${SITE}/profile.php?id=${rng.digits(15)}`, 0.3),
      },
    }));
    return {
      id,
      text: rng.sentence(6, 30),
      url: `${SITE}/groups/${group}/posts/${id}/`,
      author: { __typename: 'User', name: rng.words(2), short_name: rng.words(1), id: rng.digits(15) },
      reactionCount: rng.int(0, 20_000) + grownBy(request.growth, index),
      commentCount: comments.length + rng.int(0, 500),
      videoViewCount: video ? rng.int(0, 1_000_000) : null,
      publishTime,
      videoDetails: video ? { id: rng.digits(16), duration_ms: rng.int(3_000, 600_000) } : {},
      image: rng.nullable({ uri: `${CDN}/v/t39.30808-6/${rng.token(24)}.jpg`, width: 960, height: 720 }, 0.5),
      topComments: keyed(comments),
    };
  });
  const next = offset + POSTS_PAGE;
  return envelope('socialnet/group/posts', {
    posts: keyed(list),
    ...(next < total ? { cursor: encodeCursor(resource, next) } : {}),
  });
}

export const operations: SandboxOperation[] = [
  { id: 'socialnet/profile/reels', operation: 'profile reels', handle: reels },
  { id: 'socialnet/group/posts', operation: 'group posts', handle: groupPosts },
];
