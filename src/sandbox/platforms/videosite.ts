/**
 * The video site: a channel's shorts (E11, 48 a page), a video's top-level comments (E12, 20 a page,
 * at most 1,000 with `order=top` and 7,000 with `newest`) and a video's transcript (E13, one response).
 * Continuations are `data.continuationToken`, absent on the last page.
 */
import { EPOCH_SECONDS } from '../clock.ts';
import { Rng, compactCount, decodeCursor, encodeCursor, hash, isoFromSeconds, grownBy, keyed, newestFirstSeconds, pageIndices, recordSeconds, sizeOf } from '../data.ts';
import { feedIso, keyless, withPinned } from '../feed.ts';
import { envelope } from '../envelope.ts';
import { invalid, oneOf, optional, required } from '../params.ts';
import { SandboxValidationError, type SandboxOperation, type SandboxRequest } from '../platform.ts';

const SHORTS_PAGE = 48;
const COMMENTS_PAGE = 20;
/** API reference E12 / 8: how many comments the video site lets anyone page through, per order. */
export const COMMENT_CAPS = { top: 1_000, newest: 7_000 } as const;
const SITE = 'https://www.videosite.example';
const CDN = 'https://yt3.videosite.example';
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** An 11-character video id, unique per (resource, index): 6 characters of resource, 5 of index. */
function videoId(resource: string, index: number): string {
  const digits = (value: number, length: number) => {
    let out = '';
    for (let i = 0; i < length; i++) {
      out = ID_ALPHABET[value % 64] + out;
      value = Math.floor(value / 64);
    }
    return out;
  };
  // Records added by `advance()` have negative indices: they take the top of the 5-character range.
  return digits(hash(resource), 6) + digits(index < 0 ? 64 ** 5 + index : index, 5);
}

function relativeText(secondsAgo: number): string {
  const units: Array<[number, string]> = [[31_536_000, 'year'], [2_592_000, 'month'], [604_800, 'week'], [86_400, 'day'], [3_600, 'hour'], [60, 'minute']];
  for (const [size, name] of units) {
    const n = Math.floor(secondsAgo / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? '' : 's'} ago`;
  }
  return 'just now';
}

function shorts(request: SandboxRequest) {
  const { query } = request;
  const handle = optional(query, 'handle');
  const channelId = optional(query, 'channelId');
  if (handle === undefined && channelId === undefined) {
    throw new SandboxValidationError('Missing required parameter: handle or channelId');
  }
  const sort = oneOf(query, 'sort', ['newest', 'popular'], 'newest');
  const identifier = handle ?? channelId ?? '';
  const resource = ['videosite/channel/shorts', handle, channelId, sort].join('|');
  const base = sizeOf(identifier);
  const total = base + request.growth;
  const offset = decodeCursor(resource, optional(query, 'continuationToken'));
  const indices = pageIndices(total, SHORTS_PAGE, offset, request.duplicates, request.growth);
  const list = withPinned(indices, request.feed, offset, total, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    const id = videoId(resource, index);
    const views = rng.int(0, 50_000_000) + grownBy(request.growth, index);
    const comments = rng.int(0, 20_000);
    const likes = rng.int(0, 2_000_000);
    return {
      type: 'short',
      id: keyless(request.feed, index) ? null : id,
      url: `${SITE}/shorts/${id}`,
      title: `${rng.sentence(3, 9)} #shorts`,
      description: rng.nullable(rng.sentence(6, 20), 0.3),
      viewCountText: `${compactCount(views)} views`,
      viewCountInt: views,
      commentCountText: compactCount(comments),
      commentCountInt: comments,
      likeCountText: compactCount(likes),
      likeCountInt: likes,
      publishDate: feedIso(request.feed, index, recordSeconds(request.clock, rng, index, () => newestFirstSeconds(rng, index, base, 43_200))),
      genre: rng.pick(['Entertainment', 'Education', 'Music', 'Howto & Style', 'Sports', 'Comedy']),
    };
  });
  const next = offset + SHORTS_PAGE;
  return envelope('videosite/channel/shorts', {
    videos: {},
    shorts: keyed(list),
    channels: {},
    playlists: {},
    shelves: {},
    lives: {},
    ...(next < total ? { continuationToken: encodeCursor(resource, next) } : {}),
  });
}

function comments(request: SandboxRequest) {
  const { query } = request;
  const url = required(query, 'url');
  const order = oneOf(query, 'order', ['top', 'newest'], 'top');
  const resource = ['videosite/video/comments', url, order].join('|');
  const base = sizeOf(url);
  const total = Math.min(base + request.growth, COMMENT_CAPS[order]);
  const offset = decodeCursor(resource, optional(query, 'continuationToken'));
  const list = pageIndices(total, COMMENTS_PAGE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    // Newest first by index; top comments are spread over the video's life.
    const publishedAt = recordSeconds(request.clock, rng, index, () =>
      order === 'newest' ? newestFirstSeconds(rng, index, base, 1_800) : EPOCH_SECONDS - rng.int(60, 86_400 * 400),
    );
    const secondsAgo = request.clock.now - publishedAt;
    const name = `@${rng.words(1)}${rng.token(4)}`;
    const channelId = `UC${rng.token(22)}`;
    return {
      id: `Ugz${videoId(resource, index)}${rng.token(8)}`,
      content: rng.sentence(2, 30),
      publishedTimeText: relativeText(secondsAgo),
      publishedTime: isoFromSeconds(publishedAt),
      replyLevel: 0,
      author: {
        name,
        channelId,
        isVerified: rng.bool(0.05),
        isCreator: rng.bool(0.02),
        avatarUrl: `${CDN}/ytc/${rng.token(32)}=s88-c-k-c0x00ffffff-no-rj`,
        channelUrl: `${SITE}/${name}`,
      },
      engagement: { likes: rng.int(0, 50_000) + grownBy(request.growth, index), replies: rng.int(0, 300) },
    };
  });
  const next = offset + COMMENTS_PAGE;
  return envelope('videosite/video/comments', {
    comments: keyed(list),
    ...(next < total ? { continuationToken: encodeCursor(resource, next) } : {}),
  });
}

function msText(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

function transcript(request: SandboxRequest) {
  const { query } = request;
  const url = required(query, 'url');
  const language = optional(query, 'language') ?? 'en';
  if (!/^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$/.test(language)) invalid('language', language);
  const rng = new Rng(request.seed, 'videosite/video/transcript', url, language);
  // A single response: the `-n` rule sets the number of segments, within reason.
  const count = Math.min(sizeOf(url, 8, 80), 5_000);
  let at = 0;
  const segments = Array.from({ length: count }, () => {
    const length = rng.int(1_200, 6_000);
    const segment = { text: rng.sentence(3, 12).toLowerCase().replace(/\.$/, ''), startMs: String(at), endMs: String(at + length), startTimeText: msText(at) };
    at += length;
    return segment;
  });
  return envelope('videosite/video/transcript', {
    type: 'transcript',
    url,
    transcript: keyed(segments),
    transcript_only_text: segments.map((segment) => segment.text).join(' '),
  });
}

export const operations: SandboxOperation[] = [
  { id: 'videosite/channel/shorts', operation: 'channel shorts', handle: shorts },
  { id: 'videosite/video/comments', operation: 'video comments', handle: comments },
  { id: 'videosite/video/transcript', operation: 'video transcript', handle: transcript },
];
