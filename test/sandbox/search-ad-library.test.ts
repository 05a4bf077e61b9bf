import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const ADS = '/v1/scrape/search-ad-library/company-ads';

const sandboxes = useSandboxes();

const records = (body: Body) => fromKeyed(body.data.ads);
const nextCursor = (body: Body, query: Record<string, string | number>) =>
  body.data.cursor === undefined ? undefined : { ...query, cursor: body.data.cursor };

describe('search ad library company ads', () => {
  it('answers with the envelope but no endpoint', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, ADS, { domain: 'acme.example' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, data: { success: true } });
    expect('endpoint' in body).toBe(false);
  });

  it('gives every ad the fields the API reference lists, with their types', async () => {
    const { body } = await get(sandboxes.sandbox.url, ADS, { domain: 'acme.example-n120' });
    const ads = records(body);
    expectFields(ads, {
      advertiserId: 'string',
      creativeId: 'string',
      adUrl: 'string',
      advertiserName: 'string',
      domain: 'string',
      format: 'string',
      imageUrl: 'string|null',
      firstShown: 'iso',
      lastShown: 'iso',
    });
    expectSometimesNull(ads, 'imageUrl');
    expect(new Set(ads.map((ad) => ad.format))).toEqual(new Set(['image', 'video', 'text']));
    expect(ads.every((ad) => ad.domain === 'acme.example-n120')).toBe(true);
  });

  it('gives 40 ads a page', async () => {
    const { body } = await get(sandboxes.sandbox.url, ADS, { advertiser_id: 'AR0123-n100' });
    expect(records(body)).toHaveLength(40);
    expect(records(body).every((ad) => ad.advertiserId === 'AR0123-n100')).toBe(true);
  });

  it('walks exactly the -n ads with no duplicates, the last page without a cursor', async () => {
    const { records: ads, pages, last } = await walk(sandboxes.sandbox.url, ADS, { domain: 'acme.example-n100' }, { records, next: nextCursor });
    expect(ads).toHaveLength(100);
    expect(new Set(ads.map((ad) => ad.creativeId)).size).toBe(100);
    expect(pages).toBe(3);
    expect('cursor' in last.data).toBe(false);
  });

  it('shows ads only inside the start_date to end_date window', async () => {
    const { records: ads } = await walk(
      sandboxes.sandbox.url,
      ADS,
      { domain: 'acme.example-n80', start_date: '2025-03-01', end_date: '2025-03-31' },
      { records, next: nextCursor },
    );
    expect(ads).toHaveLength(80);
    for (const ad of ads) {
      expect(Date.parse(ad.firstShown)).toBeGreaterThanOrEqual(Date.parse('2025-03-01T00:00:00Z'));
      expect(Date.parse(ad.lastShown)).toBeLessThan(Date.parse('2025-04-01T00:00:00Z'));
      expect(Date.parse(ad.lastShown)).toBeGreaterThanOrEqual(Date.parse(ad.firstShown));
    }
  });

  it('starts each page after the first with the last ad of the page before under the duplicate fault', async () => {
    const first = await get(sandboxes.duplicating.url, ADS, { domain: 'acme.example-n100' });
    const second = await get(sandboxes.duplicating.url, ADS, { domain: 'acme.example-n100', cursor: first.body.data.cursor });
    expect(records(second.body)).toHaveLength(41);
    expect(records(second.body)[0]).toEqual(records(first.body).at(-1));
  });

  it('accepts political ads when a region is given', async () => {
    const { status } = await get(sandboxes.sandbox.url, ADS, { domain: 'acme.example', topic: 'political', region: 'US' });
    expect(status).toBe(200);
  });

  it('refuses political ads without a region, free of charge', async () => {
    await sandboxes.expectFreeRefusal(ADS, { domain: 'acme.example', topic: 'political' }, { error: 'Missing required parameter: region', endpoint: 'search-ad-library/company-ads', credits_required: 1 });
  });

  it('refuses a request with neither domain nor advertiser_id, naming both', async () => {
    await sandboxes.expectFreeRefusal(ADS, { topic: 'all' }, 'Missing required parameter: domain or advertiser_id');
  });

  it.each([
    ['topic', 'sports'],
    ['region', 'USA'],
    ['start_date', '2025/03/01'],
    ['end_date', '2025-02-30'],
  ])('refuses %s=%s as an invalid value', async (name, value) => {
    const { status, body } = await get(sandboxes.sandbox.url, ADS, { domain: 'acme.example', [name]: value });
    expect(status).toBe(400);
    expect(body.error).toBe(`Invalid value for ${name}: ${value}`);
  });

  it('refuses an end_date before the start_date', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, ADS, { domain: 'acme.example', start_date: '2025-03-10', end_date: '2025-03-01' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid value for end_date: 2025-03-01');
  });

  it('refuses a cursor issued for another company', async () => {
    const first = await get(sandboxes.sandbox.url, ADS, { domain: 'acme.example-n100' });
    const { status, body } = await get(sandboxes.sandbox.url, ADS, { domain: 'other.example-n100', cursor: first.body.data.cursor });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });
});
