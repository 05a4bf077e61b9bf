/**
 * Records of the short-video platform's shop (API reference 2.4, E6). The shop's response has no envelope and
 * its lists are real JSON arrays (API reference 2.2), so the page is the same on the wire and in the client.
 */

/** An image of the shop: one picture at several URLs. */
export interface ImageObject {
  height: number;
  width: number;
  uri: string;
  url_list: string[];
}

/** One sub-score of a shop's rating (`shopInfo.store_sub_score` item). */
export interface StoreSubScore {
  score: number;
  type: number;
  score_percentage: string;
  high_light_tag: number;
  platform_rate_type: number;
}

/** The shop whose products are listed (E6 top-level `shopInfo`). */
export interface ShopInfo {
  seller_id: string;
  global_seller_id: string;
  shop_name: string;
  creator_name: string;
  shop_link: string;
  shop_rating: string;
  worst_rating: string;
  best_rating: string;
  region: string;
  shop_slogan: string;
  desc: string;
  /** Formatted for display, e.g. `12.3K`. */
  format_sold_count: string;
  format_global_sold_count: string;
  format_followers_count: string;
  format_video_count: string;
  display_on_sell_product_count: string;
  global_sold_count: string;
  followers_count: string;
  video_count: string;
  sold_count: number;
  on_sell_product_count: number;
  review_count: number;
  enable_follow: boolean;
  shop_logo: ImageObject;
  store_sub_score: StoreSubScore[];
}

/** The price of a product, formatted for display (E6 `product_price_info`). */
export interface ProductPriceInfo {
  sku_id: string;
  symbol_position: number;
  show_currency_space: boolean;
  currency_show_mode: number;
  currency_name: string;
  currency_symbol: string;
  sale_price_decimal: string;
  origin_price_decimal: string;
  sale_price_format: string;
  origin_price_format: string;
  discount_format: string;
  discount_decimal: string;
  reduce_price_format: string;
  single_product_price_format: string;
  single_product_price_decimal: string;
  sale_price_integer_part_format: string;
  sale_price_decimal_part_format: string;
  decimal_point_symbol: string;
  promotion_deduction_details: {
    seller_subtotal_deduction: string;
    seller_subtotal_deduction_decimal: string;
  };
}

/** A product of a shop: a record of `shortvideoShop.products` (E6 `products` item). */
export interface ShopProduct {
  product_id: string;
  title: string;
  image: ImageObject;
  product_price_info: ProductPriceInfo;
  rate_info: {
    score: number;
    /** A count formatted as text. */
    review_count: string;
  };
  sold_info: { sold_count: number };
  seller_info: {
    seller_id: string;
    shop_name: string;
    /** Not typed by the API reference; the shop's logo as in `ShopInfo.shop_logo`. */
    shop_logo: ImageObject;
  };
  seo_url: {
    updated_at: string;
    canonical_url: string;
    slug: string;
    type: number;
    version: number;
  };
}

/**
 * E6 response: a whole page of a shop, with no `data` wrapper and no `credits_used` (API reference 2.1).
 * `cursor` and `has_more` sit at the top level (docs/wire.md).
 */
export interface ShortvideoShopPage {
  success: true;
  shopInfo: ShopInfo;
  products: ShopProduct[];
  /** Send as `cursor` for the next page, while `has_more`. */
  cursor: string;
  has_more: boolean;
}
