/** Records of the social network's marketplace (API reference 2.4): listings (E9) and locations (E10). */
import type { JsonObject, JsonValue, KeyedCollection, ScrapeEnvelopeWithoutEndpoint, WireForm } from './common.ts';

/** A listing's asking price. */
export interface ListingPrice {
  /** Formatted for display, e.g. `$1,200`. */
  formatted_amount: string;
  /** The amount in the currency's smallest unit (e.g. cents). */
  amount_with_offset_in_currency: number;
  amount: number;
}

/** A listing around a coordinate: a record of `socialnetMarketplace.search` (E9 `data.listings` item). */
export interface MarketplaceListing {
  id: string;
  url: string;
  title: string;
  category_id: string;
  story_type: string;
  story_key: string;
  price: ListingPrice;
  /** The earlier price, struck through; `null` (or absent) when there is none. Its `amount` is a string. */
  strikethrough_price?: { formatted_amount: string; amount: string } | null;
  location: {
    city: string;
    state: string;
    display_name: string;
    city_page_id: string;
  };
  primary_photo: { id: string; url: string };
  is_hidden: boolean;
  is_live: boolean;
  is_pending: boolean;
  is_sold: boolean;
  is_viewer_seller: boolean;
  /** e.g. `IN_PERSON`. */
  delivery_types: string[];
  /** Fields the API reference never names, kept as sent (the service adds e.g. `if_gk_just_listed_tag_on_search_feed`). */
  readonly [field: string]: unknown;
}

/**
 * A city or region with its coordinates: a record of `socialnetMarketplace.locationSearch`
 * (E10 `data.locations` item). Pass `latitude`/`longitude` as `lat`/`lng` to the search.
 */
export interface MarketplaceLocation {
  name: string;
  subtitle: string;
  page_id: string;
  city: string;
  postal_code: string;
  latitude: number;
  longitude: number;
  /** An object in the API reference; the service sends an empty one as `[]`. */
  multi_line_address: JsonObject | JsonValue[];
}

/** E9 response: a page of listings (no `endpoint`, API reference 2.1). */
export type MarketplaceSearchPage = ScrapeEnvelopeWithoutEndpoint<{
  listings: KeyedCollection<WireForm<MarketplaceListing>>;
  /** Send as `cursor` for the next page. */
  cursor: string;
  has_next_page: boolean;
}>;

/** E10 response: every matching location (no `endpoint`, API reference 2.1). */
export type MarketplaceLocationsPage = ScrapeEnvelopeWithoutEndpoint<{
  locations: KeyedCollection<MarketplaceLocation>;
}>;
