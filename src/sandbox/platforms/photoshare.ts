/**
 * Photo-sharing platform: AI transcripts (E19, slow, with a top-level `note`), hashtag search
 * (E20, 24 posts a page), story highlight details (E21) and post details (E22, doubly nested in
 * `data.data.xdt_shortcode_media`).
 */
import { Rng, decodeCursor, encodeCursor, isoFromSeconds, keyed, pageIndices, recordSeconds, sizeOf, unixSecondsAgo } from '../data.ts';
import type { SandboxClockReading } from '../clock.ts';
import { envelope } from '../envelope.ts';
import { invalid, oneOf, optional, required } from '../params.ts';
import { SandboxValidationError, type SandboxOperation, type SandboxRequest } from '../platform.ts';

const HASHTAG_PAGE_SIZE = 24;
const SHORTCODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
const CDN = 'https://cdn.photoshare.example';
const HASHTAG_REQUIRED = 'Hashtag is required (the # is optional)';

function shortcode(rng: Rng): string {
  let out = '';
  for (let i = 0; i < 11; i++) out += SHORTCODE_ALPHABET[rng.int(0, SHORTCODE_ALPHABET.length - 1)];
  return out;
}

/** The shortcode of a `/p/<code>` or `/reel/<code>` URL, or a stable one derived from the URL. */
function shortcodeOf(url: string): string {
  return /\/(?:p|reels?|tv)\/([A-Za-z0-9_-]+)/.exec(url)?.[1] ?? shortcode(new Rng('shortcode', url));
}

function account(rng: Rng) {
  const id = rng.digits(11);
  const username = `${rng.words(1)}.${rng.token(5)}`;
  return { id, username, is_verified: rng.bool(0.1), profile_pic_url: `${CDN}/profile/${id}.jpg` };
}

function transcript(request: SandboxRequest) {
  const url = required(request.query, 'url');
  const rng = new Rng(request.seed, 'photoshare/transcript', url);
  const code = shortcodeOf(url);
  // A carousel has one transcript per item; most posts are a single video.
  const items = rng.bool(0.7) ? 1 : rng.int(2, 4);
  const transcripts = Array.from({ length: items }, () => ({
    id: `${rng.digits(19)}_${rng.digits(10)}`,
    shortcode: code,
    text: rng.bool(0.15) ? null : Array.from({ length: rng.int(1, 4) }, () => rng.sentence()).join(' '),
  }));
  return {
    ...envelope('photoshare/transcript', { transcripts: keyed(transcripts) }),
    note: 'Transcripts are AI-powered and can take 10-30 seconds to generate.',
  };
}

function hashtagPost(resource: string, hashtag: string, reelsOnly: boolean, index: number, clock: SandboxClockReading) {
  const rng = new Rng(resource, index);
  const code = shortcode(rng);
  const isVideo = reelsOnly || rng.bool(0.5);
  const owner = account(rng);
  return {
    id: rng.digits(19),
    __typename: isVideo ? 'GraphVideo' : 'GraphImage',
    shortcode: code,
    url: `https://photoshare.example/${isVideo ? 'reel' : 'p'}/${code}/`,
    caption: `${rng.sentence()} #${hashtag}`,
    thumbnail_src: `${CDN}/${code}/thumb.jpg`,
    display_url: `${CDN}/${code}/display.jpg`,
    video_url: isVideo ? `${CDN}/${code}/video.mp4` : '',
    product_type: isVideo ? 'clips' : 'feed',
    accessibility_caption: rng.nullable(`Photo by ${owner.username}. ${rng.sentence()}`, 0.4),
    location: rng.nullable({ id: rng.digits(9), name: rng.words(2) }, 0.7),
    has_audio: isVideo && rng.bool(0.9),
    is_video: isVideo,
    is_ad: false,
    is_affiliate: rng.bool(0.05),
    is_paid_partnership: rng.bool(0.05),
    video_duration: isVideo ? Math.round(rng.next() * 90_000) / 1000 + 3 : 0,
    taken_at: isoFromSeconds(recordSeconds(clock, rng, index, () => unixSecondsAgo(rng, 60))),
    like_count: rng.int(0, 250_000),
    comment_count: rng.int(0, 3_000),
    clips_music_attribution_info: {
      artist_name: rng.words(2),
      song_name: rng.words(3),
      uses_original_audio: rng.bool(),
      should_mute_audio: false,
      should_mute_audio_reason: '',
      audio_id: rng.digits(16),
    },
    owner: {
      ...owner,
      full_name: rng.words(2),
      is_private: false,
      is_unpublished: false,
      follower_count: rng.int(0, 3_000_000),
      post_count: rng.int(1, 5_000),
    },
    comments: keyed(
      Array.from({ length: rng.int(0, 3) }, () => ({
        id: rng.digits(17),
        text: rng.sentence(2, 12),
        like_count: rng.int(0, 500),
        created_at: isoFromSeconds(unixSecondsAgo(rng, 30)),
        owner: account(rng),
      })),
    ),
  };
}

function hashtag(request: SandboxRequest) {
  const { query } = request;
  const tag = required(query, 'hashtag', HASHTAG_REQUIRED).trim().replace(/^#/, '');
  if (tag === '') throw new SandboxValidationError(HASHTAG_REQUIRED);
  const mediaType = oneOf(query, 'media_type', ['all', 'reels'], 'all');
  const datePosted = optional(query, 'date_posted');
  const resource = [request.seed, 'photoshare/hashtag', tag.toLowerCase(), mediaType, datePosted].join('|');
  const total = sizeOf(tag) + request.growth;
  const offset = decodeCursor(resource, query.get('cursor'));
  const posts = pageIndices(total, HASHTAG_PAGE_SIZE, offset, request.duplicates, request.growth).map((index) =>
    hashtagPost(resource, tag, mediaType === 'reels', index, request.clock),
  );
  const next = offset + HASHTAG_PAGE_SIZE;
  return envelope('photoshare/search/hashtag', {
    hashtag: tag,
    media_type: mediaType,
    posts: keyed(posts),
    ...(next < total ? { cursor: encodeCursor(resource, next) } : {}),
  });
}

function imageCandidates(path: string) {
  return keyed(
    [1080, 640, 320].map((width) => ({ width, height: Math.round((width * 16) / 9), url: `${CDN}/${path}/${width}.jpg` })),
  );
}

function highlightDetail(request: SandboxRequest) {
  const id = required(request.query, 'id');
  if (!/^\d+$/.test(id)) invalid('id', id);
  const rng = new Rng(request.seed, 'photoshare/highlight', id);
  const owner = { ...account(rng), full_name: rng.words(2), is_private: false };
  const user = { pk: owner.id, id: owner.id, username: owner.username, full_name: owner.full_name, is_private: owner.is_private, is_verified: owner.is_verified, profile_pic_url: owner.profile_pic_url };
  const items = Array.from({ length: rng.int(1, 12) }, () => {
    const pk = rng.digits(19);
    const isVideo = rng.bool(0.6);
    const duration = Math.round(rng.next() * 15_000) / 1000 + 1;
    return {
      id: `${pk}_${owner.id}`,
      pk,
      taken_at: unixSecondsAgo(rng, 700),
      media_type: isVideo ? 2 : 1,
      video_versions: isVideo
        ? keyed([{ type: 101, width: 720, height: 1280, url: `${CDN}/stories/${pk}/720.mp4`, id: rng.digits(17) }])
        : null,
      video_duration: isVideo ? duration : null,
      image_versions2: { candidates: imageCandidates(`stories/${pk}`) },
      video_dash_manifest: isVideo ? `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" mediaPresentationDuration="PT${duration}S"></MPD>` : null,
      user,
      owner: user,
      can_reply: false,
      can_reshare: true,
      is_dash_eligible: isVideo ? 1 : 0,
      has_audio: isVideo,
    };
  });
  const createdAt = Math.min(...items.map((item) => item.taken_at));
  const cover = items[0];
  return envelope('photoshare/highlight-detail', {
    id: `highlight:${id}`,
    strong_id__: `highlight:${id}`,
    reel_type: 'highlight_reel',
    highlight_reel_type: 'default',
    title: rng.words(rng.int(1, 2)),
    latest_reel_media: Math.max(...items.map((item) => item.taken_at)),
    created_at: createdAt,
    media_count: items.length,
    media_ids: keyed(items.map((item) => item.pk)),
    cover_media: {
      cropped_image_version: { width: 150, height: 150, url: `${CDN}/highlights/${id}/cover.jpg`, scans_profile: '' },
      crop_rect: keyed([0, 0.21, 1, 0.77]),
      media_id: cover.id,
      full_image_version: null,
      upload_id: null,
    },
    user,
    items: keyed(items),
    is_pinned_highlight: rng.bool(0.2),
    is_archived: false,
    disabled_reply_types: keyed(['story_remix_reply', 'story_selfie_reply']),
    is_converted_to_clips: false,
    can_reply: false,
    can_reshare: true,
  });
}

function postInfo(request: SandboxRequest) {
  const url = required(request.query, 'url');
  const code = shortcodeOf(url);
  const rng = new Rng(request.seed, 'photoshare/post-info', url);
  const isVideo = /\/reels?\//.test(url) || rng.bool(0.4);
  const owner = { ...account(rng), full_name: rng.words(2), is_private: false };
  const width = 1080;
  const height = rng.pick([1080, 1350, 1920]);
  const media = {
    __typename: isVideo ? 'XDTGraphVideo' : 'XDTGraphImage',
    id: rng.digits(19),
    shortcode: code,
    thumbnail_src: `${CDN}/${code}/thumb.jpg`,
    display_url: `${CDN}/${code}/display.jpg`,
    media_preview: rng.nullable(Buffer.from(rng.token(24)).toString('base64'), 0.3),
    dimensions: { height, width },
    display_resources: keyed(
      [640, 750, 1080].map((w) => ({ src: `${CDN}/${code}/${w}.jpg`, config_width: w, config_height: Math.round((w * height) / width) })),
    ),
    dash_info: {
      is_dash_eligible: isVideo,
      video_dash_manifest: isVideo ? '<MPD xmlns="urn:mpeg:dash:schema:mpd:2011"></MPD>' : null,
    },
    sharing_friction_info: { should_have_sharing_friction: false, bloks_app_url: null },
    is_video: isVideo,
    video_url: isVideo ? `${CDN}/${code}/video.mp4` : null,
    video_view_count: isVideo ? rng.int(0, 5_000_000) : null,
    accessibility_caption: rng.nullable(rng.sentence(), 0.5),
    taken_at_timestamp: unixSecondsAgo(rng, 400),
    edge_media_to_caption: { edges: keyed([{ node: { text: rng.sentence(4, 30) } }]) },
    edge_media_preview_like: { count: rng.int(0, 500_000) },
    edge_media_to_parent_comment: { count: rng.int(0, 10_000) },
    owner,
    location: null,
    comments_disabled: false,
    is_ad: false,
    product_type: isVideo ? 'clips' : 'feed',
  };
  return envelope('photoshare/post-info', { data: { xdt_shortcode_media: media }, status: 'ok' });
}

export const operations: SandboxOperation[] = [
  { id: 'photoshare/transcript', operation: 'transcript', slow: true, handle: transcript },
  { id: 'photoshare/search/hashtag', operation: 'hashtag search', handle: hashtag },
  { id: 'photoshare/highlight-detail', operation: 'highlight detail', handle: highlightDetail },
  { id: 'photoshare/post-info', operation: 'post info', handle: postInfo },
];
