import { describe, expect, it } from 'vitest';
import { expectFields } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';

const SEARCH = '/v1/scrape/search/search';

const sandboxes = useSandboxes();

const results = (body: Body) => fromKeyed(body.data.results);
/** The operation table: `page` + 1 up to 11, stop at an empty page. */
const nextPage = (body: Body, query: Record<string, string | number>) => {
  const page = Number(query.page ?? 1);
  return results(body).length === 0 || page === 11 ? undefined : { ...query, page: page + 1 };
};

describe('web search', () => {
  it('answers with the envelope but no endpoint', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'typescript streams' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, data: { success: true } });
    expect('endpoint' in body).toBe(false);
  });

  it('gives 10 results a page, each with a title, a url and mostly a description', async () => {
    const { body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'typescript-n110' });
    const list = results(body);
    expect(list).toHaveLength(10);
    expectFields(list, { title: 'string', url: 'string', description: 'string?' });
    const all = (await walk(sandboxes.sandbox.url, SEARCH, { query: 'typescript-n110' }, { records: results, next: nextPage })).records;
    expect(all.some((result) => !('description' in result))).toBe(true);
    expect(all.some((result) => typeof result.description === 'string')).toBe(true);
  });

  it('walks exactly the -n results over pages, stopping at the first empty page', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, SEARCH, { query: 'streams-n35' }, { records: results, next: nextPage });
    expect(records).toHaveLength(35);
    expect(new Set(records.map((result) => result.url)).size).toBe(35);
    expect(pages).toBe(5);
    expect(last.data.results).toEqual({});
  });

  it('caps a walk at 110 results over pages 1 to 11', async () => {
    const { records, pages } = await walk(sandboxes.sandbox.url, SEARCH, { query: 'streams-n500' }, { records: results, next: nextPage });
    expect(records).toHaveLength(110);
    expect(new Set(records.map((result) => result.url)).size).toBe(110);
    expect(pages).toBe(11);
  });

  it('starts each page after the first with the last result of the page before under the duplicate fault', async () => {
    const first = await get(sandboxes.duplicating.url, SEARCH, { query: 'streams-n35', page: 1 });
    const second = await get(sandboxes.duplicating.url, SEARCH, { query: 'streams-n35', page: 2 });
    expect(results(second.body)).toHaveLength(11);
    expect(results(second.body)[0]).toEqual(results(first.body).at(-1));
  });

  it.each([[0], [12], ['two']])('refuses page=%s, free of charge', async (page) => {
    await sandboxes.expectFreeRefusal(SEARCH, { query: 'streams', page }, { error: `Invalid value for page: ${page}`, endpoint: 'search/search', credits_required: 1 });
  });

  it('refuses a date_posted outside last-hour to last-year', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'streams', date_posted: 'last-decade' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid value for date_posted: last-decade');
  });

  it('refuses a region that is not a 2-letter code', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SEARCH, { query: 'streams', region: 'USA' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid value for region: USA');
  });

  it('refuses a request without query with the exact message', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, SEARCH, { page: 1 });
    expect(status).toBe(400);
    expect(body.error).toBe('Missing required parameter: query');
  });
});
