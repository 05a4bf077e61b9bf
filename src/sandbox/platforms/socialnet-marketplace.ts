/**
 * The social network's marketplace: listings around a coordinate (E9, 24 a page behind
 * `data.cursor` / `data.has_next_page`) and the places to search around (E10, one response).
 * Neither response carries `endpoint` (API reference 2.1).
 */
import { Rng, decodeCursor, encodeCursor, hash, keyed, pageIndices, serialId, sizeOf } from '../data.ts';
import { envelope } from '../envelope.ts';
import { decimal, invalid, optional, required } from '../params.ts';
import { SandboxValidationError, type SandboxOperation, type SandboxRequest } from '../platform.ts';

const PAGE_SIZE = 24;
const SITE = 'https://www.socialnet.example';
const CDN = 'https://scontent.socialnet.example';
const CATEGORIES = ['bicycles', 'furniture', 'electronics', 'instruments', 'garden', 'toys', 'vehicles'];
const PLACES: Array<[city: string, state: string, lat: number, lng: number, postal: string]> = [
  ['Austin', 'TX', 30.2672, -97.7431, '78701'],
  ['Portland', 'OR', 45.5152, -122.6784, '97201'],
  ['Denver', 'CO', 39.7392, -104.9903, '80202'],
  ['Boston', 'MA', 42.3601, -71.0589, '02108'],
  ['Chicago', 'IL', 41.8781, -87.6298, '60601'],
  ['Seattle', 'WA', 47.6062, -122.3321, '98101'],
  ['Atlanta', 'GA', 33.749, -84.388, '30303'],
  ['Madison', 'WI', 43.0731, -89.4012, '53703'],
];

function coordinate(query: URLSearchParams, name: 'lat' | 'lng', limit: number): number {
  const message = name === 'lat' ? 'lat is required and must be a number' : undefined;
  const value = decimal(query, name, message);
  if (value === undefined) throw new SandboxValidationError(message ?? `Missing required parameter: ${name}`);
  if (Math.abs(value) > limit) {
    if (message !== undefined) throw new SandboxValidationError(message);
    invalid(name, String(query.get(name)));
  }
  return value;
}

function nonNegative(query: URLSearchParams, name: string): number | undefined {
  const value = decimal(query, name);
  if (value !== undefined && value < 0) invalid(name, String(query.get(name)));
  return value;
}

function search(request: SandboxRequest) {
  const { query } = request;
  const lat = coordinate(query, 'lat', 90);
  const lng = coordinate(query, 'lng', 180);
  const text = optional(query, 'query');
  const radius = nonNegative(query, 'radius_km');
  const minPrice = nonNegative(query, 'min_price') ?? 0;
  const maxPrice = nonNegative(query, 'max_price') ?? 2_000;
  if (maxPrice < minPrice) invalid('max_price', String(query.get('max_price')));
  // The remaining filters have no value set in the API reference: any text is taken, and it shapes the result set.
  const filters = ['condition', 'delivery_method', 'date_listed', 'availability', 'sort_by'].map((name) => optional(query, name));
  const resource = ['socialnet-marketplace/search', lat, lng, text, radius, minPrice, maxPrice, ...filters].join('|');
  const total = sizeOf(text ?? `${lat},${lng}`) + request.growth;
  const offset = decodeCursor(resource, optional(query, 'cursor'));
  const place = PLACES[hash(`${lat},${lng}`) % PLACES.length];
  const listings = pageIndices(total, PAGE_SIZE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(request.seed, resource, index);
    const id = serialId(resource, index, 6);
    const amount = Math.round((minPrice + rng.next() * (maxPrice - minPrice)) * 100) / 100;
    const reduced = rng.bool(0.2);
    const sold = rng.bool(0.05);
    return {
      id,
      url: `${SITE}/marketplace/item/${id}/`,
      title: text ? `${text.replace(/-n\d+$/, '')} ${rng.words(2)}` : rng.words(3),
      category_id: String(1_000_000 + CATEGORIES.indexOf(rng.pick(CATEGORIES))),
      story_type: 'POST',
      story_key: rng.digits(16),
      price: {
        formatted_amount: `$${amount.toFixed(amount % 1 === 0 ? 0 : 2)}`,
        amount_with_offset_in_currency: Math.round(amount * 100),
        amount,
      },
      strikethrough_price: reduced
        ? { formatted_amount: `$${(amount * 1.25).toFixed(0)}`, amount: (amount * 1.25).toFixed(2) }
        : null,
      location: {
        city: place[0],
        state: place[1],
        display_name: `${place[0]}, ${place[1]}`,
        city_page_id: String(100_000_000 + PLACES.indexOf(place)),
      },
      primary_photo: { id: rng.digits(16), url: `${CDN}/v/t45.5328-4/${rng.token(24)}.jpg` },
      is_hidden: false,
      is_live: !sold,
      is_pending: rng.bool(0.05),
      is_sold: sold,
      is_viewer_seller: false,
      delivery_types: keyed(rng.bool(0.3) ? ['IN_PERSON', 'SHIPPING'] : ['IN_PERSON']),
    };
  });
  const next = Math.min(total, offset + PAGE_SIZE);
  return envelope(null, { listings: keyed(listings), cursor: encodeCursor(resource, next), has_next_page: next < total });
}

function locationSearch(request: SandboxRequest) {
  const text = required(request.query, 'query', 'Search query parameter is required');
  // Not paginated, so the `-n` size rule does not apply: a handful of places, as the service answers.
  const total = 1 + (hash(text) % 8);
  // A search for a city the sandbox knows finds that city first, as the real search would.
  const named = PLACES.findIndex(([city]) => city.toLowerCase().startsWith(text.trim().toLowerCase()));
  const first = named >= 0 ? named : hash(text);
  const locations = Array.from({ length: total }, (_, index) => {
    const rng = new Rng(request.seed, 'socialnet-marketplace/location-search', text, index);
    const [city, state, lat, lng, postal] = PLACES[(first + index) % PLACES.length];
    const latitude = Math.round((lat + (rng.next() - 0.5) * 0.2) * 10_000) / 10_000;
    const longitude = Math.round((lng + (rng.next() - 0.5) * 0.2) * 10_000) / 10_000;
    return {
      name: index === 0 ? city : `${city} ${rng.pick(['Heights', 'Park', 'Village', 'Downtown', 'East', 'West'])}`,
      subtitle: `${state}, United States`,
      page_id: rng.digits(15),
      city,
      postal_code: postal,
      latitude,
      longitude,
      multi_line_address: { line_1: `${city}, ${state}`, line_2: 'United States' },
    };
  });
  return envelope(null, { locations: keyed(locations) });
}

export const operations: SandboxOperation[] = [
  { id: 'socialnet-marketplace/search', operation: 'search', handle: search },
  { id: 'socialnet-marketplace/location-search', operation: 'location search', handle: locationSearch },
];
