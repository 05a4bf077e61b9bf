/**
 * The social network's ad library: ad search (E18), 30 results a page behind `data.cursor`, which is
 * absent on the last page.
 */
import { Rng, decodeCursor, encodeCursor, keyed, pageIndices, serialId, sizeOf } from '../data.ts';
import { envelope } from '../envelope.ts';
import { invalid, isoDate, optional, required } from '../params.ts';
import type { SandboxOperation, SandboxRequest } from '../platform.ts';

const PAGE_SIZE = 30;
const SITE = 'https://www.socialnet.example';
const CDN = 'https://scontent.socialnet.example';

function card(rng: Rng, title: string, link: string) {
  const image = `${CDN}/v/t39.35426-6/${rng.token(24)}.jpg`;
  const video = rng.bool(0.3);
  return {
    body: rng.sentence(),
    cta_type: 'SHOP_NOW',
    caption: new URL(link).hostname,
    link_description: rng.sentence(3, 8),
    link_url: link,
    title,
    cta_text: 'Shop now',
    video_hd_url: video ? `${CDN}/v/t42.1790-2/${rng.token(24)}_hd.mp4` : null,
    video_sd_url: video ? `${CDN}/v/t42.1790-2/${rng.token(24)}_sd.mp4` : null,
    video_preview_image_url: video ? image : null,
    original_image_url: video ? null : image,
    resized_image_url: video ? null : image.replace('.jpg', '_s600x600.jpg'),
    watermarked_video_hd_url: video ? `${CDN}/v/t42.1790-2/${rng.token(24)}_hd_wm.mp4` : null,
    watermarked_video_sd_url: video ? `${CDN}/v/t42.1790-2/${rng.token(24)}_sd_wm.mp4` : null,
    watermarked_resized_image_url: video ? null : image.replace('.jpg', '_wm.jpg'),
  };
}

function search(request: SandboxRequest) {
  const { query } = request;
  const text = required(query, 'query');
  // The API reference names no value sets for these filters: any text is taken, and it shapes the result set.
  const [searchType, adType, status, mediaType, sortBy] = ['search_type', 'ad_type', 'status', 'media_type', 'sort_by'].map(
    (name) => optional(query, name),
  );
  const country = optional(query, 'country');
  if (country !== undefined && !/^([A-Za-z]{2}|ALL)$/.test(country)) invalid('country', country);
  const start = isoDate(query, 'start_date');
  const end = isoDate(query, 'end_date');
  if (start !== undefined && end !== undefined && end < start) invalid('end_date', end);
  const resource = ['socialnet-ad-library/search', text, searchType, adType, country, status, mediaType, start, end, sortBy].join('|');
  const total = sizeOf(text) + request.growth;
  const offset = decodeCursor(resource, optional(query, 'cursor'));
  const results = pageIndices(total, PAGE_SIZE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    const pageId = rng.digits(15);
    const pageName = rng.words(2).replace(/\b\w/g, (c) => c.toUpperCase());
    const title = `${text.replace(/-n\d+$/, '')} ${rng.words(2)}`;
    const link = `https://${rng.words(1)}-${rng.token(4)}.example/`;
    const active = status === 'ACTIVE' ? true : status === 'INACTIVE' ? false : rng.bool(0.6);
    return {
      ad_archive_id: serialId(resource, index, 6),
      collation_count: rng.nullable(rng.int(1, 12), 0.4),
      collation_id: rng.nullable(rng.digits(16), 0.4),
      page_id: pageId,
      page_name: pageName,
      is_active: active,
      has_user_reported: false,
      report_count: null,
      page_is_deleted: false,
      state_media_run_label: null,
      menu_items: {},
      impressions_with_index: { impressions_text: rng.nullable('<1K', 0.7), impressions_index: rng.int(-1, 5) },
      snapshot: {
        page_id: pageId,
        page_name: pageName,
        page_profile_uri: `${SITE}/${pageName.replace(/\s+/g, '')}/`,
        page_profile_picture_url: `${CDN}/v/t39.35426-6/${rng.token(24)}.jpg`,
        cta_text: 'Shop now',
        cta_type: 'SHOP_NOW',
        display_format: rng.pick(['IMAGE', 'VIDEO', 'DCO', 'CAROUSEL']),
        link_description: rng.sentence(3, 8),
        link_url: link,
        title,
        body: { text: rng.sentence(8, 24) },
        page_like_count: rng.int(0, 3_000_000),
        page_categories: keyed([rng.pick(['Shopping & retail', 'Product/service', 'Brand'])]),
        images: keyed([]),
        videos: keyed([]),
        cards: keyed(Array.from({ length: rng.int(0, 3) }, () => card(rng, title, link))),
        is_reshared: false,
        extra_links: keyed([]),
        extra_texts: keyed([]),
        extra_images: keyed([]),
        extra_videos: keyed([]),
        ec_certificates: keyed([]),
        byline: null,
        caption: new URL(link).hostname,
        disclaimer_label: null,
        country_iso_code: null,
      },
    };
  });
  const next = offset + PAGE_SIZE;
  return envelope('socialnet-ad-library/search', {
    searchResults: keyed(results),
    ...(next < total ? { cursor: encodeCursor(resource, next) } : {}),
  });
}

export const operations: SandboxOperation[] = [
  { id: 'socialnet-ad-library/search', operation: 'search', handle: search },
];
