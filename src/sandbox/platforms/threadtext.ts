/** Text-post platform: a user's posts (E27), all in one response. */
import { Rng, keyed, sizeOf, unixSecondsAgo } from '../data.ts';
import { envelope } from '../envelope.ts';
import { required } from '../params.ts';
import type { SandboxOperation, SandboxRequest } from '../platform.ts';

/** An unpaged response honours `-n<digits>` up to this many records, so one body stays small. */
const MAX_RECORDS = 1_000;
const CDN = 'https://cdn.threadtext.example';

function fragment(rng: Rng) {
  const kind = rng.pick(['plaintext', 'plaintext', 'link', 'mention', 'tag'] as const);
  const word = rng.words(1);
  return {
    fragment_type: kind,
    plaintext: kind === 'mention' ? `@${word}` : kind === 'tag' ? `#${word}` : kind === 'link' ? `${word}.example` : `${rng.sentence()} `,
    link_fragment: kind === 'link' ? { uri: `https://${word}.example/`, display_text: `${word}.example` } : null,
    mention_fragment: kind === 'mention' ? { mentioned_user: { username: word, id: rng.digits(11) } } : null,
    tag_fragment: kind === 'tag' ? { display_text: word, tag_id: rng.digits(17) } : null,
    linkified_web_url: kind === 'link' ? `https://${word}.example/` : null,
  };
}

function userPosts(request: SandboxRequest) {
  const handle = required(request.query, 'handle').trim().replace(/^@/, '');
  const resource = [request.seed, 'threadtext/user-posts', handle.toLowerCase()].join('|');
  const profile = new Rng(resource, 'user');
  const userPk = profile.digits(11);
  const user = {
    pk: userPk,
    id: userPk,
    username: handle,
    profile_pic_url: `${CDN}/profile/${userPk}.jpg`,
    is_verified: profile.bool(0.2),
    text_post_app_is_private: false,
    has_onboarded_to_text_post_app: true,
    friendship_status: null,
    transparency_label: null,
    transparency_product: null,
    transparency_product_enabled: false,
  };
  const total = Math.min(sizeOf(handle, 5, 30), MAX_RECORDS);
  const posts = Array.from({ length: total }, (_, index) => {
    const rng = new Rng(resource, index);
    const pk = rng.digits(19);
    const fragments = Array.from({ length: rng.int(1, 4) }, () => fragment(rng));
    const withImage = rng.bool(0.4);
    return {
      id: `${pk}_${userPk}`,
      pk,
      code: rng.token(11),
      taken_at: unixSecondsAgo(rng, 200),
      user,
      caption: { text: fragments.map((f) => f.plaintext).join(''), pk: rng.digits(19), has_translation: rng.bool(0.1) },
      caption_is_edited: rng.bool(0.1),
      text_post_app_info: {
        text_fragments: { fragments: keyed(fragments) },
        reshare_count: rng.int(0, 500),
        direct_reply_count: rng.int(0, 900),
        repost_count: rng.int(0, 400),
        quote_count: rng.int(0, 100),
        self_thread_count: rng.int(0, 3),
        reply_control: rng.pick(['everyone', 'accounts_you_follow', 'mentioned_only']),
        is_reply: rng.bool(0.2),
        is_post_unavailable: false,
        share_info: { can_repost: true, can_quote_post: true, is_reposted_by_viewer: false },
        pinned_post_info: { is_pinned_to_profile: index === 0 && rng.bool(0.3), is_pinned_to_parent_post: false },
      },
      image_versions2: {
        candidates: withImage
          ? keyed([1080, 640, 320].map((width) => ({ height: width, width, url: `${CDN}/media/${pk}/${width}.jpg` })))
          : {},
      },
      carousel_media: null,
      audio: null,
      transcription_data: null,
      is_paid_partnership: rng.nullable(false, 0.7),
      like_count: rng.int(0, 40_000),
    };
  });
  return envelope('threadtext/user-posts', { posts: keyed(posts) });
}

export const operations: SandboxOperation[] = [
  { id: 'threadtext/user-posts', operation: 'user posts', handle: userPosts },
];
