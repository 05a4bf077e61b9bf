/**
 * The short-video platform's shop: every product of a store (E6). The one operation without the
 * envelope: `success`, `shopInfo`, `products` (a real array), `cursor` and `has_more` at the top.
 */
import { Rng, compactCount, decodeCursor, encodeCursor, pageIndices, recordSeconds, serialId, sizeOf } from '../data.ts';
import type { SandboxClockReading } from '../clock.ts';
import { invalid, oneOf, optional, required } from '../params.ts';
import type { SandboxOperation, SandboxRequest } from '../platform.ts';

const PAGE_SIZE = 20;
const CDN = 'https://p16-oec-va.shop.shortvideo.example';
/** Prices by region; API reference E6 names US, GB, DE, FR, IT "and further ones", so other codes price in USD. */
const CURRENCY: Record<string, [name: string, symbol: string]> = {
  US: ['USD', '$'], GB: ['GBP', '£'], DE: ['EUR', '€'], FR: ['EUR', '€'], IT: ['EUR', '€'], ES: ['EUR', '€'],
  IE: ['EUR', '€'], MX: ['MXN', '$'], JP: ['JPY', '¥'], SG: ['SGD', 'S$'], MY: ['MYR', 'RM'], TH: ['THB', '฿'],
  VN: ['VND', '₫'], PH: ['PHP', '₱'], ID: ['IDR', 'Rp'], BR: ['BRL', 'R$'],
};

/** API reference 2.4's image object; in the shop, `url_list` is a real array. */
function image(rng: Rng, size: number) {
  const uri = `tos-maliva-i-o3syd03w52-us/${rng.token(32)}`;
  return { height: size, width: size, uri, url_list: [`${CDN}/${uri}~tplv-${size}.webp`, `${CDN}/${uri}~tplv-${size}.jpeg`] };
}

function shopInfo(rng: Rng, url: string, region: string, total: number) {
  const sellerId = rng.digits(19);
  const sold = rng.int(0, 3_000_000);
  const globalSold = sold + rng.int(0, 1_000_000);
  const followers = rng.int(0, 2_000_000);
  const videos = rng.int(0, 5_000);
  const name = rng.words(2).replace(/\b\w/g, (c) => c.toUpperCase());
  return {
    seller_id: sellerId,
    global_seller_id: rng.digits(19),
    shop_name: name,
    creator_name: rng.words(1),
    shop_link: url,
    shop_logo: image(rng, 300),
    shop_rating: (rng.int(30, 50) / 10).toFixed(1),
    worst_rating: '1',
    best_rating: '5',
    region,
    shop_slogan: rng.sentence(3, 7),
    desc: rng.sentence(),
    sold_count: sold,
    format_sold_count: compactCount(sold),
    global_sold_count: String(globalSold),
    format_global_sold_count: compactCount(globalSold),
    on_sell_product_count: total,
    display_on_sell_product_count: String(total),
    review_count: rng.int(0, 200_000),
    followers_count: String(followers),
    format_followers_count: compactCount(followers),
    video_count: String(videos),
    format_video_count: compactCount(videos),
    enable_follow: true,
    store_sub_score: [1, 2, 3].map((type) => {
      const score = rng.int(30, 50) / 10;
      return {
        score,
        type,
        score_percentage: `${rng.int(60, 99)}%`,
        high_light_tag: rng.int(0, 1),
        platform_rate_type: rng.int(0, 2),
      };
    }),
  };
}

function product(rng: Rng, index: number, id: string, region: string, seller: { seller_id: string; shop_name: string; shop_logo: unknown }, clock: SandboxClockReading) {
  const [currency, symbol] = CURRENCY[region] ?? CURRENCY.US;
  const origin = rng.int(500, 20_000) / 100;
  const sale = Math.round(origin * rng.int(50, 100)) / 100;
  const title = `${rng.words(4)} ${rng.pick(['set', 'kit', 'pack', 'bundle', 'case'])}`;
  const slug = title.replace(/\s+/g, '-');
  const [whole, fraction] = sale.toFixed(2).split('.');
  return {
    product_id: id,
    title,
    image: image(rng, 600),
    product_price_info: {
      sku_id: rng.digits(19),
      symbol_position: 1,
      show_currency_space: false,
      currency_show_mode: 1,
      currency_name: currency,
      currency_symbol: symbol,
      sale_price_decimal: sale.toFixed(2),
      origin_price_decimal: origin.toFixed(2),
      sale_price_format: `${symbol}${sale.toFixed(2)}`,
      origin_price_format: `${symbol}${origin.toFixed(2)}`,
      discount_format: `-${Math.round((1 - sale / origin) * 100)}%`,
      discount_decimal: (1 - sale / origin).toFixed(2),
      reduce_price_format: `${symbol}${(origin - sale).toFixed(2)}`,
      single_product_price_format: `${symbol}${sale.toFixed(2)}`,
      single_product_price_decimal: sale.toFixed(2),
      sale_price_integer_part_format: `${symbol}${whole}`,
      sale_price_decimal_part_format: fraction,
      decimal_point_symbol: '.',
      promotion_deduction_details: {
        seller_subtotal_deduction: `${symbol}${(origin - sale).toFixed(2)}`,
        seller_subtotal_deduction_decimal: (origin - sale).toFixed(2),
      },
    },
    rate_info: { score: rng.int(30, 50) / 10, review_count: String(rng.int(0, 20_000)) },
    sold_info: { sold_count: rng.int(0, 500_000) },
    seller_info: { seller_id: seller.seller_id, shop_name: seller.shop_name, shop_logo: seller.shop_logo },
    seo_url: {
      updated_at: String(recordSeconds(clock, rng, index, () => 1_763_700_000 - rng.int(0, 10_000_000))),
      canonical_url: `https://www.shortvideo.example/shop/pdp/${slug}/${id}`,
      slug,
      type: 1,
      version: 1,
    },
  };
}

function products(request: SandboxRequest) {
  const { query } = request;
  const url = required(query, 'url');
  const region = (optional(query, 'region') ?? 'US').toUpperCase();
  if (!/^[A-Z]{2}$/.test(region)) invalid('region', region);
  const sortBy = oneOf(query, 'sort_by', ['top', 'new_releases'], 'top');
  const resource = ['shortvideo-shop/products', url, region, sortBy].join('|');
  const total = sizeOf(url) + request.growth;
  const offset = decodeCursor(resource, optional(query, 'cursor'));
  const info = shopInfo(new Rng(request.seed, 'shortvideo-shop/shop', url), url, region, total);
  const list = pageIndices(total, PAGE_SIZE, offset, request.duplicates, request.growth).map((index) =>
    product(new Rng(request.seed, resource, index), index, `17${serialId(resource, index, 7)}`, region, info, request.clock),
  );
  const next = Math.min(total, offset + PAGE_SIZE);
  return { success: true, shopInfo: info, products: list, cursor: encodeCursor(resource, next), has_more: next < total };
}

export const operations: SandboxOperation[] = [
  { id: 'shortvideo-shop/products', operation: 'products', handle: products },
];
