/**
 * The short-video platform: a profile (E2), a profile's videos (E3, integer `max_cursor`), popular
 * videos by country (E4, page numbers) and the replies to a comment (E5, integer offset `cursor`).
 */
import { EPOCH_SECONDS } from '../clock.ts';
import {
  Rng,
  hash,
  keyed,
  grownBy,
  newestFirstSeconds,
  recordSeconds,
  pageIndices,
  serialId,
  sizeOf,
  unixSecondsAgo,
} from '../data.ts';
import { envelope } from '../envelope.ts';
import { flag, integer, oneOf, optional, required } from '../params.ts';
import { SandboxValidationError, type SandboxOperation, type SandboxRequest } from '../platform.ts';

const VIDEOS_PAGE = 30;
const POPULAR_PAGE = 20;
const REPLIES_PAGE = 20;
const CDN = 'https://p16-sign.shortvideo.example';

/** API reference E4: the 24 country codes of popular videos, with the names `region` carries. */
const COUNTRIES: Record<string, string> = {
  AU: 'Australia', BR: 'Brazil', CA: 'Canada', EG: 'Egypt', FR: 'France', DE: 'Germany',
  ID: 'Indonesia', IL: 'Israel', IT: 'Italy', JP: 'Japan', MY: 'Malaysia', PH: 'Philippines',
  RU: 'Russia', SA: 'Saudi Arabia', SG: 'Singapore', KR: 'South Korea', ES: 'Spain', TW: 'Taiwan',
  TH: 'Thailand', TR: 'Turkey', AE: 'United Arab Emirates', GB: 'United Kingdom', US: 'United States',
  VN: 'Vietnam',
};
const COUNTRY_CODES = Object.keys(COUNTRIES);

/** A 19-digit id, unique per (resource, index) so that a walk never repeats one by chance. */
function numericId(resource: string, index: number): string {
  return `7${serialId(resource, index, 8)}`;
}

/** Large counts are shown rounded in `stats` (exact, as strings, in `statsV2`). */
function rounded(count: number): number {
  if (count < 10_000) return count;
  const magnitude = 10 ** (String(count).length - 2);
  return Math.round(count / magnitude) * magnitude;
}

function avatar(rng: Rng, id: string, size: number) {
  const uri = `tos-maliva-avt-0068/${id}~${size}x${size}`;
  return {
    uri,
    url_list: keyed([`${CDN}/${uri}.webp`, `${CDN}/${uri}.jpeg`]),
    width: size,
    height: size,
    url_prefix: null,
  };
}

function profile(request: SandboxRequest) {
  const handle = required(request.query, 'handle').replace(/^@/, '');
  const rng = new Rng(request.seed, 'shortvideo/profile', handle);
  const id = rng.digits(19);
  const counts = {
    followerCount: rng.int(0, 25_000_000),
    followingCount: rng.int(0, 3_000),
    heart: rng.int(0, 900_000_000),
    heartCount: 0,
    videoCount: rng.int(0, 4_000),
    diggCount: rng.int(0, 50_000),
    friendCount: rng.int(0, 800),
  };
  counts.heartCount = counts.heart;
  const stats = Object.fromEntries(Object.entries(counts).map(([name, value]) => [name, rounded(value)]));
  const statsV2 = Object.fromEntries(Object.entries(counts).map(([name, value]) => [name, String(value)]));
  const avatarUri = `tos-maliva-avt-0068/${id}`;
  const createTime = unixSecondsAgo(rng, 3_000);
  return envelope('shortvideo/profile', {
    user: {
      id,
      shortId: rng.bool(0.3) ? rng.digits(8) : '',
      uniqueId: handle,
      nickname: rng.words(2),
      avatarLarger: `${CDN}/${avatarUri}~1080x1080.jpeg`,
      avatarMedium: `${CDN}/${avatarUri}~720x720.jpeg`,
      avatarThumb: `${CDN}/${avatarUri}~100x100.jpeg`,
      signature: rng.sentence(),
      createTime,
      verified: rng.bool(0.1),
      secUid: `MS4wLjABAAAA${rng.token(40)}`,
      ftc: false,
      relation: 0,
      openFavorite: rng.bool(0.3),
      bioLink: { link: `https://${handle}.example`, risk: rng.int(0, 3) },
      commentSetting: rng.int(0, 3),
      commerceUserInfo: { commerceUser: rng.bool(0.2) },
      duetSetting: rng.int(0, 3),
      stitchSetting: rng.int(0, 3),
      privateAccount: false,
      secret: false,
      isADVirtual: false,
      roomId: rng.bool(0.2) ? rng.digits(19) : '',
      uniqueIdModifyTime: Math.min(EPOCH_SECONDS, createTime + rng.int(0, 86_400 * 300)),
      ttSeller: rng.bool(0.1),
      downloadSetting: rng.int(0, 3),
      profileTab: { showMusicTab: rng.bool(), showQuestionTab: rng.bool(), showPlayListTab: rng.bool() },
      followingVisibility: rng.int(1, 2),
      recommendReason: '',
      nowInvitationCardUrl: '',
      nickNameModifyTime: Math.min(EPOCH_SECONDS, createTime + rng.int(0, 86_400 * 300)),
      isEmbedBanned: false,
      canExpPlaylist: rng.bool(),
      profileEmbedPermission: rng.int(0, 2),
      language: rng.pick(['en', 'de', 'fr', 'es', 'ja']),
      eventList: {},
      suggestAccountBind: false,
      isOrganization: rng.int(0, 1),
      UserStoryStatus: rng.int(0, 1),
    },
    stats,
    statsV2,
    itemList: {},
  });
}

/**
 * E3's integer cursor: a descending millisecond timestamp that encodes the offset. Each resource
 * gets its own base, so a cursor from another profile (or a made-up number) is refused.
 */
function cursorBase(resource: string): number {
  return EPOCH_SECONDS * 1000 - (hash(resource) % 1_000_000) * 1000;
}
const CURSOR_STEP = 1_000;

function decodeMaxCursor(resource: string, value: string | undefined, total: number): number {
  if (value === undefined || value === '0') return 0;
  const offset = (cursorBase(resource) - Number(value)) / CURSOR_STEP;
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(offset) || offset < 0 || offset > total) {
    throw new SandboxValidationError('Invalid cursor');
  }
  return offset;
}

function author(rng: Rng, handle: string) {
  const uid = rng.digits(19);
  return {
    uid,
    short_id: '0',
    nickname: rng.words(2),
    signature: rng.sentence(),
    unique_id: handle,
    sec_uid: `MS4wLjABAAAA${rng.token(40)}`,
    follower_count: rng.int(0, 25_000_000),
    following_count: rng.int(0, 3_000),
    aweme_count: rng.int(0, 4_000),
    total_favorited: rng.int(0, 900_000_000),
    custom_verify: rng.bool(0.1) ? 'Verified account' : '',
    avatar_larger: avatar(rng, uid, 1080),
    avatar_thumb: avatar(rng, uid, 100),
    avatar_medium: avatar(rng, uid, 720),
    avatar_168x168: avatar(rng, uid, 168),
    avatar_300x300: avatar(rng, uid, 300),
    verification_type: rng.int(0, 1),
    is_block: false,
    is_blocked: false,
    secret: 0,
    prevent_download: rng.bool(0.1),
    with_commerce_entry: rng.bool(0.2),
    region: rng.pick(COUNTRY_CODES),
  };
}

function videos(request: SandboxRequest) {
  const { query } = request;
  const handle = required(query, 'handle').replace(/^@/, '');
  const userId = optional(query, 'user_id');
  const sortBy = oneOf(query, 'sort_by', ['latest', 'popular'], 'latest');
  const region = optional(query, 'region');
  flag(query, 'trim');
  const resource = ['shortvideo/videos', handle, userId, sortBy, region].join('|');
  const base = sizeOf(handle);
  const total = base + request.growth;
  const offset = decodeMaxCursor(resource, optional(query, 'max_cursor'), total);
  const accountRng = new Rng(request.seed, 'shortvideo/account', handle);
  const account = author(accountRng, handle);
  const items = pageIndices(total, VIDEOS_PAGE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    const awemeId = numericId(resource, index);
    // 19 digits from 7…, as the platform's ids run: past 2^53 and within int64.
    const musicId = `7${rng.digits(19).slice(1)}`;
    return {
      aweme_id: awemeId,
      desc: `${rng.sentence()} #${rng.words(1)}`,
      create_time: recordSeconds(request.clock, rng, index, () => newestFirstSeconds(rng, index, base, 3_600)),
      author: account,
      music: {
        // Sent as a JSON number, as the platform sends it: a JSON.parse reader rounds it.
        id: BigInt(musicId),
        id_str: musicId,
        title: `original sound - ${handle}`,
        author: account.nickname,
        album: '',
        cover_large: avatar(rng, musicId, 720),
        cover_medium: avatar(rng, musicId, 200),
        cover_thumb: avatar(rng, musicId, 100),
        duration: rng.int(5, 180),
        is_original: rng.bool(),
      },
      statistics: {
        aweme_id: awemeId,
        comment_count: rng.int(0, 50_000),
        digg_count: rng.int(0, 2_000_000) + grownBy(request.growth, index),
        play_count: rng.int(0, 90_000_000) + grownBy(request.growth, index),
        share_count: rng.int(0, 90_000),
        collect_count: rng.int(0, 90_000),
      },
      share_url: `https://www.shortvideo.example/@${handle}/video/${awemeId}`,
      region: account.region,
    };
  });
  const next = Math.min(total, offset + VIDEOS_PAGE);
  return envelope('shortvideo/videos', {
    max_cursor: cursorBase(resource) - next * CURSOR_STEP,
    has_more: next < total ? 1 : 0,
    status_code: 0,
    aweme_list: keyed(items),
  });
}

function popular(request: SandboxRequest) {
  const { query } = request;
  const period = oneOf(query, 'period', ['7', '30'], '7');
  const page = integer(query, 'page', 1, 1_000_000, 1);
  const orderBy = oneOf(query, 'orderBy', ['like', 'hot', 'comment', 'repost'], 'like');
  const countryCode = oneOf(query, 'countryCode', COUNTRY_CODES, 'US');
  const resource = ['shortvideo/videos/popular', period, orderBy, countryCode].join('|');
  const total = sizeOf(resource, 100, 500) + request.growth;
  const offset = (page - 1) * POPULAR_PAGE;
  const list = pageIndices(total, POPULAR_PAGE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    const id = numericId(resource, index);
    return {
      country_code: countryCode,
      cover: `${CDN}/obj/tos-useast2a-p-0037/${rng.token(32)}.jpeg`,
      duration: rng.int(5, 180),
      id,
      item_id: id,
      item_url: `https://www.shortvideo.example/@${rng.token(8)}/video/${id}`,
      region: COUNTRIES[countryCode],
      title: `${rng.sentence()} #${rng.words(1)}`,
    };
  });
  return envelope('shortvideo/videos/popular', {
    pagination: { has_more: offset + POPULAR_PAGE < total, limit: POPULAR_PAGE, page, total_count: total },
    videos: keyed(list),
  });
}

function commentReplies(request: SandboxRequest) {
  const { query } = request;
  const commentId = required(query, 'comment_id', 'Shortvideo comment ID is required', { endpoint: 'comment_replies' });
  const url = required(query, 'url');
  const resource = ['shortvideo/comment-replies', commentId, url].join('|');
  const total = sizeOf(commentId) + request.growth;
  const cursorValue = optional(query, 'cursor') ?? '0';
  const offset = Number(cursorValue);
  if (!/^\d{1,16}$/.test(cursorValue) || offset > total) throw new SandboxValidationError('Invalid cursor');
  const awemeId = /(\d{6,})/.exec(url)?.[1] ?? String(hash(url));
  const list = pageIndices(total, REPLIES_PAGE, offset, request.duplicates, request.growth).map((index) => replyOf(request, { resource, commentId, awemeId }, index));
  const next = Math.min(total, offset + REPLIES_PAGE);
  const rng = new Rng(request.seed, resource, 'page', offset);
  return envelope('shortvideo/comment-replies', {
    comments: keyed(list),
    cursor: next,
    has_more: next < total ? 1 : 0,
    total,
    status_code: 0,
    status_msg: '',
    extra: { fatal_item_ids: null, logid: `2025112200${rng.token(22).toUpperCase()}`, now: request.clock.now * 1000 },
    log_pb: { impr_id: `2025112200${rng.token(22).toUpperCase()}` },
  });
}

/** Reply `index` of a comment, the same for the same seed, resource and index. */
function replyOf(request: SandboxRequest, { resource, commentId, awemeId }: { resource: string; commentId: string; awemeId: string }, index: number) {
  const rng = new Rng(request.seed, resource, index);
  const cid = numericId(resource, index);
  const uid = rng.digits(19);
  const handle = `${rng.words(1)}${rng.token(4)}`;
  const text = rng.sentence(2, 12);
  return {
    aweme_id: awemeId,
    cid,
    text,
    create_time: recordSeconds(request.clock, rng, index, () => EPOCH_SECONDS - rng.int(0, 86_400 * 60)),
    digg_count: rng.int(0, 5_000),
    status: 1,
    user: replyAuthor(rng, uid, handle),
    reply_id: commentId,
    user_digged: rng.int(0, 1),
    reply_comment: rng.nullable(keyed([{ cid: numericId(`${resource}|quoted`, index), text: rng.sentence(2, 8) }]), 0.85),
    text_extra: rng.bool(0.2) ? keyed([{ start: 0, end: 5, type: 0, user_id: rng.digits(19) }]) : {},
    label_list: rng.nullable(keyed([{ type: 1, text: 'Creator' }]), 0.8),
    reply_to_reply_id: index > 0 && rng.bool(0.3) ? '7' + rng.digits(18) : '0',
    is_author_digged: rng.bool(0.1),
    stick_position: 0,
    user_buried: false,
    collect_stat: 0,
    trans_btn_style: 0,
    share_info: {
      url: '',
      desc: `${handle}'s comment: ${text}`,
      title: text,
      acl: { code: 0, extra: '{}' },
    },
    image_list: rng.nullable(keyed([{ origin_url: { uri: rng.token(12), url_list: keyed([`${CDN}/${rng.token(12)}.jpeg`]) } }]), 0.9),
    comment_language: 'en',
    is_comment_translatable: rng.bool(),
    no_show: false,
    comment_post_item_ids: rng.nullable(keyed([awemeId]), 0.9),
    thread_id: 0,
    thread_has_more: false,
    fold_status: 0,
    is_high_purchase_intent: false,
  };
}

/** A reply's author: its fields drawn from the reply's own sequence, in the order the reply draws them. */
function replyAuthor(rng: Rng, uid: string, handle: string) {
  return {
    uid,
    short_id: '0',
    nickname: rng.words(2),
    signature: null,
    avatar_thumb: { uri: `100x100/${uid}`, url_list: keyed([`${CDN}/100x100/${uid}.webp`]), url_prefix: null },
    unique_id: handle,
    sec_uid: `MS4wLjABAAAA${rng.token(40)}`,
    custom_verify: '',
    enterprise_verify_reason: '',
    predicted_age_group: rng.pick(['', 'adult']),
    region: null,
    language: null,
    bio_url: null,
  };
}

export const operations: SandboxOperation[] = [
  { id: 'shortvideo/profile', operation: 'profile', handle: profile },
  { id: 'shortvideo/videos', operation: 'videos', handle: videos },
  { id: 'shortvideo/videos/popular', operation: 'popular videos', handle: popular },
  { id: 'shortvideo/comment-replies', operation: 'comment replies', handle: commentReplies },
];
