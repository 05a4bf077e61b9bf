import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const SEARCH = '/v1/scrape/socialnet-ad-library/search';

const sandboxes = useSandboxes();

const searchWalk = {
  records: (body: Body) => fromKeyed(body.data.searchResults),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.cursor !== undefined ? { ...query, cursor: body.data.cursor } : undefined,
};

describe('socialnet ad library search', () => {
  it('answers with the envelope, endpoint socialnet-ad-library/search and 30 keyed results', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'running shoes-n70' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'socialnet-ad-library/search', data: { success: true } });
    expect(fromKeyed(body.data.searchResults)).toHaveLength(30);
    expect(typeof body.data.cursor).toBe('string');
  });

  it('gives every result the fields the API reference lists, with their types', async () => {
    const { records } = await walk(sandboxes.sandbox.url, SEARCH, { query: 'coffee-n90' }, searchWalk);
    expectFields(records, {
      ad_archive_id: 'string', page_id: 'string', page_name: 'string',
      collation_count: 'integer|null', collation_id: 'string|null', report_count: 'integer|null', state_media_run_label: 'string|null',
      is_active: 'boolean', has_user_reported: 'boolean', page_is_deleted: 'boolean',
      menu_items: 'object', impressions_with_index: 'object', snapshot: 'object',
    });
    expectSometimesNull(records, 'collation_count');
    expectSometimesNull(records, 'collation_id');
    expectFields(records.map((r) => r.impressions_with_index), { impressions_text: 'string|null', impressions_index: 'integer' });
    const snapshots = records.map((r) => r.snapshot);
    const strings = ['page_id', 'page_name', 'page_profile_uri', 'page_profile_picture_url', 'cta_text', 'cta_type',
      'display_format', 'link_description', 'link_url', 'title'];
    expectFields(snapshots, {
      ...Object.fromEntries(strings.map((name) => [name, 'string'])),
      body: 'object', page_like_count: 'integer', page_categories: 'keyed', images: 'keyed', videos: 'keyed', cards: 'keyed',
      is_reshared: 'boolean', extra_links: 'keyed', extra_texts: 'keyed', extra_images: 'keyed', extra_videos: 'keyed',
      ec_certificates: 'keyed',
    });
    expectFields(snapshots.map((s) => s.body), { text: 'string' });
    const cards = snapshots.flatMap((s) => fromKeyed(s.cards));
    const cardStrings = ['body', 'cta_type', 'caption', 'link_description', 'link_url', 'title', 'cta_text'];
    const cardUrls = ['video_hd_url', 'video_sd_url', 'video_preview_image_url', 'original_image_url', 'resized_image_url',
      'watermarked_video_hd_url', 'watermarked_video_sd_url', 'watermarked_resized_image_url'];
    expectFields(cards, {
      ...Object.fromEntries(cardStrings.map((name) => [name, 'string'])),
      ...Object.fromEntries(cardUrls.map((name) => [name, 'string|null'])),
    });
    expectSometimesNull(cards, 'video_hd_url');
  });

  it('walks exactly the -n count of the query with no result twice', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, SEARCH, { query: 'coffee-n65' }, searchWalk);
    expect(records).toHaveLength(65);
    expect(new Set(records.map((r) => r.ad_archive_id)).size).toBe(65);
    expect(pages).toBe(3);
    expect('cursor' in last.data).toBe(false);
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, SEARCH, { query: 'coffee-n65' }, searchWalk);
    expect(records).toHaveLength(67);
    expect(records[30].ad_archive_id).toBe(records[29].ad_archive_id);
  });

  it('marks every result active when status is ACTIVE', async () => {
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'coffee', status: 'ACTIVE' });
    expect(fromKeyed(body.data.searchResults).every((r) => r.is_active)).toBe(true);
  });

  it('refuses a missing query without charging', async () => {
    await sandboxes.expectFreeRefusal(SEARCH, { country: 'US' }, { error: 'Missing required parameter: query', endpoint: 'socialnet-ad-library/search', credits_required: 1 });
  });

  it('refuses dates that are not real YYYY-MM-DD days and an end before the start', async () => {
    expect((await get(sandboxes.sandbox.url, SEARCH, { query: 'q', start_date: '2025-02-30' })).body.error).toBe('Invalid value for start_date: 2025-02-30');
    expect((await get(sandboxes.sandbox.url, SEARCH, { query: 'q', end_date: '22/11/2025' })).body.error).toBe('Invalid value for end_date: 22/11/2025');
    const reversed = await get(sandboxes.sandbox.url, SEARCH, { query: 'q', start_date: '2025-06-01', end_date: '2025-01-01' });
    expect(reversed.body.error).toBe('Invalid value for end_date: 2025-01-01');
  });

  it('refuses a country that is not a 2-letter code', async () => {
    expect((await get(sandboxes.sandbox.url, SEARCH, { query: 'q', country: 'USA' })).body.error).toBe('Invalid value for country: USA');
  });
});
