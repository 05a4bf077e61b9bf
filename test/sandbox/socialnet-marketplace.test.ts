import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const SEARCH = '/v1/scrape/socialnet-marketplace/search';
const LOCATIONS = '/v1/scrape/socialnet-marketplace/location-search';
const AUSTIN = { lat: '30.2672', lng: '-97.7431' };

const sandboxes = useSandboxes();

const searchWalk = {
  records: (body: Body) => fromKeyed(body.data.listings),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.has_next_page ? { ...query, cursor: body.data.cursor } : undefined,
};

describe('socialnet marketplace search', () => {
  it('answers with the envelope but no endpoint', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SEARCH, AUSTIN);
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, data: { success: true } });
    expect('endpoint' in body).toBe(false);
  });

  it('answers pages of 24 keyed listings with cursor and has_next_page', async () => {
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, query: 'bike-n50' });
    expect(fromKeyed(body.data.listings)).toHaveLength(24);
    expectFields(body.data, { cursor: 'string', has_next_page: 'boolean' });
    expect(body.data.has_next_page).toBe(true);
  });

  it('gives every listing the fields the API reference lists, with their types', async () => {
    const { records } = await walk(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, query: 'chair-n120' }, searchWalk);
    const strings = ['id', 'url', 'title', 'category_id', 'story_type', 'story_key'];
    const booleans = ['is_hidden', 'is_live', 'is_pending', 'is_sold', 'is_viewer_seller'];
    expectFields(records, {
      ...Object.fromEntries(strings.map((name) => [name, 'string'])),
      ...Object.fromEntries(booleans.map((name) => [name, 'boolean'])),
      price: 'object',
      strikethrough_price: 'object|null',
      location: 'object',
      primary_photo: 'object',
      delivery_types: 'keyed',
    });
    expectSometimesNull(records, 'strikethrough_price');
    expectFields(records.map((l) => l.price), { formatted_amount: 'string', amount_with_offset_in_currency: 'integer', amount: 'number' });
    expectFields(records.map((l) => l.strikethrough_price).filter((p) => p !== null), { formatted_amount: 'string', amount: 'string' });
    expectFields(records.map((l) => l.location), { city: 'string', state: 'string', display_name: 'string', city_page_id: 'string' });
    expectFields(records.map((l) => l.primary_photo), { id: 'string', url: 'string' });
    expect(records.flatMap((l) => fromKeyed(l.delivery_types))).toContain('IN_PERSON');
  });

  it('keeps prices within min_price and max_price', async () => {
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, min_price: 10, max_price: 20 });
    for (const listing of fromKeyed(body.data.listings)) {
      expect(listing.price.amount).toBeGreaterThanOrEqual(10);
      expect(listing.price.amount).toBeLessThanOrEqual(20);
    }
  });

  it('walks exactly the -n count of the query with no listing twice', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, query: 'bike-n50' }, searchWalk);
    expect(records).toHaveLength(50);
    expect(new Set(records.map((l) => l.id)).size).toBe(50);
    expect(pages).toBe(3);
    expect(last.data.has_next_page).toBe(false);
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, SEARCH, { ...AUSTIN, query: 'bike-n50' }, searchWalk);
    expect(records).toHaveLength(52);
    expect(records[24].id).toBe(records[23].id);
  });

  it('refuses a missing or non-numeric lat with the API reference message, free', async () => {
    const before = sandboxes.credits();
    const queries: Array<Record<string, string>> = [{ lng: '-97.7' }, { lat: 'north', lng: '-97.7' }, { lat: '1e999', lng: '0' }, { lat: '91', lng: '0' }];
    for (const query of queries) {
      const { status, body } = await get(sandboxes.sandbox.url, SEARCH, query);
      expect(status).toBe(400);
      expect(body).toEqual({ error: 'lat is required and must be a number', endpoint: 'socialnet-marketplace/search', credits_required: 1 });
    }
    expect(sandboxes.credits()).toBe(before);
  });

  it('refuses a missing or non-numeric lng', async () => {
    expect((await get(sandboxes.sandbox.url, SEARCH, { lat: '30' })).body.error).toBe('Missing required parameter: lng');
    expect((await get(sandboxes.sandbox.url, SEARCH, { lat: '30', lng: 'west' })).body.error).toBe('Invalid value for lng: west');
  });

  it('refuses a negative or non-numeric price and a max below the min', async () => {
    expect((await get(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, min_price: -1 })).body.error).toBe('Invalid value for min_price: -1');
    expect((await get(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, max_price: 'cheap' })).body.error).toBe('Invalid value for max_price: cheap');
    expect((await get(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, min_price: 50, max_price: 10 })).body.error).toBe('Invalid value for max_price: 10');
  });

  it('refuses a cursor from a search with other filters', async () => {
    const first = await get(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, query: 'bike-n50' });
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { ...AUSTIN, query: 'bike-n50', condition: 'new', cursor: first.body.data.cursor });
    expect(body.error).toBe('Invalid cursor');
  });
});

describe('socialnet marketplace location search', () => {
  it('answers with the envelope but no endpoint', async () => {
    const { body } = await get(sandboxes.sandbox.url, LOCATIONS, { query: 'austin' });
    expect(body).toMatchObject({ success: true, credits_used: 1, data: { success: true } });
    expect('endpoint' in body).toBe(false);
  });

  it('gives every location the fields the API reference lists, with their types', async () => {
    const locations = [];
    for (const query of ['austin', 'portland', 'denver', 'springfield']) {
      locations.push(...fromKeyed((await get(sandboxes.sandbox.url, LOCATIONS, { query })).body.data.locations));
    }
    expectFields(locations, {
      name: 'string', subtitle: 'string', page_id: 'string', city: 'string', postal_code: 'string',
      latitude: 'number', longitude: 'number', multi_line_address: 'object',
    });
  });

  it('gives coordinates that marketplace search accepts', async () => {
    const [place] = fromKeyed((await get(sandboxes.sandbox.url, LOCATIONS, { query: 'austin' })).body.data.locations);
    const { status } = await get(sandboxes.sandbox.url, SEARCH, { lat: place.latitude, lng: place.longitude });
    expect(status).toBe(200);
  });

  it('refuses a missing query with the API reference message, free', async () => {
    await sandboxes.expectFreeRefusal(LOCATIONS, {}, { error: 'Search query parameter is required', endpoint: 'socialnet-marketplace/location-search', credits_required: 1 });
  });
});
