/**
 * Professional network: post search (E25). One unpaged response carrying `data.credits_charged`
 * (API reference 2.1) and every matching post.
 */
import { Rng, isoFromSeconds, keyed, sizeOf, unixSecondsAgo } from '../data.ts';
import { envelope } from '../envelope.ts';
import { optional, required } from '../params.ts';
import type { SandboxOperation, SandboxRequest } from '../platform.ts';

/** An unpaged response honours `-n<digits>` up to this many records, so one body stays small. */
const MAX_RECORDS = 1_000;
const SITE = 'https://professional.example';

function post(resource: string, query: string, index: number) {
  const rng = new Rng(resource, index);
  const slug = `${rng.words(3).replace(/ /g, '-')}-${rng.digits(19)}`;
  const kind = rng.pick(['text', 'image', 'video'] as const);
  const published = unixSecondsAgo(rng, 90);
  const images = kind === 'image' ? Array.from({ length: rng.int(1, 4) }, (_, i) => `https://media.professional.example/${slug}/${i}.jpg`) : [];
  const authorSlug = `${rng.words(1)}-${rng.token(6)}`;
  const base = {
    url: `${SITE}/posts/${slug}`,
    name: `${rng.sentence(3, 8)} ${query}`,
    datePublished: isoFromSeconds(published),
    description: `${rng.sentence(8, 40)} ${query}`,
    media: kind === 'text' ? null : kind === 'video' ? `https://media.professional.example/${slug}/video.mp4` : images[0],
    image: images[0] ?? null,
    images: keyed(images),
    author: {
      name: rng.words(2).replace(/\b\w/g, (c) => c.toUpperCase()),
      url: `${SITE}/in/${authorSlug}`,
      image: `https://media.professional.example/profile/${authorSlug}.jpg`,
      followers: rng.int(0, 900_000),
    },
    comments: keyed(
      Array.from({ length: rng.int(0, 3) }, () => {
        const commenter = `${rng.words(1)}-${rng.token(6)}`;
        return { author: rng.words(2), text: rng.sentence(2, 20), professionalUrl: `${SITE}/in/${commenter}` };
      }),
    ),
    likeCount: rng.int(0, 20_000),
    commentCount: rng.int(0, 800),
  };
  if (kind !== 'video') return base;
  return {
    ...base,
    thumbnailUrl: `https://media.professional.example/${slug}/thumb.jpg`,
    uploadDate: isoFromSeconds(published),
    transcript: rng.sentence(10, 60),
  };
}

function searchPosts(request: SandboxRequest) {
  const query = required(request.query, 'query');
  const datePosted = optional(request.query, 'date_posted');
  const resource = [request.seed, 'professional/search/posts', query, datePosted].join('|');
  const total = Math.min(sizeOf(query, 5, 25), MAX_RECORDS);
  const posts = Array.from({ length: total }, (_, index) => post(resource, query, index));
  return envelope('professional/search/posts', { credits_charged: 1, query, posts: keyed(posts) });
}

export const operations: SandboxOperation[] = [
  { id: 'professional/search/posts', operation: 'post search', handle: searchPosts },
];
