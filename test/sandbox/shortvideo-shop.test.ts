import { describe, expect, it } from 'vitest';
import { expectFields } from './field-types.ts';
import { get, useSandboxes, walk, type Body } from './helpers.ts';

const PRODUCTS = '/v1/scrape/shortvideo-shop/products';
const STORE = 'https://www.shortvideo.example/shop/store/acme-goods/7495';

const sandboxes = useSandboxes();

const productsWalk = {
  records: (body: Body) => body.products,
  next: (body: Body, query: Record<string, string | number>) => (body.has_more ? { ...query, cursor: body.cursor } : undefined),
};
const IMAGE = { height: 'integer', width: 'integer', uri: 'string', url_list: 'array' };

describe('shortvideo shop products', () => {
  it('answers success, shopInfo, products, cursor and has_more at the top, without data or credits_used', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, PRODUCTS, { url: `${STORE}-n45` });
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['cursor', 'has_more', 'products', 'shopInfo', 'success']);
    expect(body.success).toBe(true);
    expectFields(body, { cursor: 'string', has_more: 'boolean', products: 'array', shopInfo: 'object' });
  });

  it('still charges one credit although the body says nothing of credits', async () => {
    const before = sandboxes.credits();
    await get(sandboxes.sandbox.url, PRODUCTS, { url: STORE });
    expect(sandboxes.credits()).toBe(before - 1);
  });

  it('gives shopInfo every field the API reference lists, with arrays for store_sub_score and url_list', async () => {
    const { body } = await get(sandboxes.sandbox.url, PRODUCTS, { url: STORE });
    const strings = ['seller_id', 'global_seller_id', 'shop_name', 'creator_name', 'shop_link', 'shop_rating', 'worst_rating',
      'best_rating', 'region', 'shop_slogan', 'desc', 'format_sold_count', 'format_global_sold_count', 'format_followers_count',
      'format_video_count', 'display_on_sell_product_count', 'global_sold_count', 'followers_count', 'video_count'];
    expectFields(body.shopInfo, {
      ...Object.fromEntries(strings.map((name) => [name, 'string'])),
      sold_count: 'integer',
      on_sell_product_count: 'integer',
      review_count: 'integer',
      enable_follow: 'boolean',
      shop_logo: 'object',
      store_sub_score: 'array',
    });
    expectFields(body.shopInfo.shop_logo, IMAGE);
    expectFields(body.shopInfo.store_sub_score, {
      score: 'number', type: 'integer', score_percentage: 'string', high_light_tag: 'integer', platform_rate_type: 'integer',
    });
  });

  it('gives every product the fields the API reference lists, with their types', async () => {
    const { body } = await get(sandboxes.sandbox.url, PRODUCTS, { url: STORE, region: 'GB' });
    const products = body.products;
    expectFields(products, {
      product_id: 'string', title: 'string', image: 'object', product_price_info: 'object', rate_info: 'object',
      sold_info: 'object', seller_info: 'object', seo_url: 'object',
    });
    expectFields(products.map((p: Body) => p.image), IMAGE);
    const priceStrings = ['sku_id', 'currency_name', 'currency_symbol', 'sale_price_decimal', 'origin_price_decimal',
      'sale_price_format', 'origin_price_format', 'discount_format', 'discount_decimal', 'reduce_price_format',
      'single_product_price_format', 'single_product_price_decimal', 'sale_price_integer_part_format',
      'sale_price_decimal_part_format', 'decimal_point_symbol'];
    const prices = products.map((p: Body) => p.product_price_info);
    expectFields(prices, {
      ...Object.fromEntries(priceStrings.map((name) => [name, 'string'])),
      symbol_position: 'integer',
      show_currency_space: 'boolean',
      currency_show_mode: 'integer',
      promotion_deduction_details: 'object',
    });
    expectFields(prices.map((p: Body) => p.promotion_deduction_details), {
      seller_subtotal_deduction: 'string', seller_subtotal_deduction_decimal: 'string',
    });
    expect(prices.every((p: Body) => p.currency_name === 'GBP')).toBe(true);
    expectFields(products.map((p: Body) => p.rate_info), { score: 'number', review_count: 'string' });
    expectFields(products.map((p: Body) => p.sold_info), { sold_count: 'integer' });
    expectFields(products.map((p: Body) => p.seller_info), { seller_id: 'string', shop_name: 'string', shop_logo: 'object' });
    expectFields(products.map((p: Body) => p.seo_url), {
      updated_at: 'string', canonical_url: 'string', slug: 'string', type: 'integer', version: 'integer',
    });
  });

  it('answers pages of 20 products', async () => {
    const { body } = await get(sandboxes.sandbox.url, PRODUCTS, { url: `${STORE}-n45` });
    expect(body.products).toHaveLength(20);
    expect(body.has_more).toBe(true);
  });

  it('walks exactly the -n count with no product twice', async () => {
    const { records, pages, last } = await walk(sandboxes.sandbox.url, PRODUCTS, { url: `${STORE}-n45` }, productsWalk);
    expect(records).toHaveLength(45);
    expect(new Set(records.map((p) => p.product_id)).size).toBe(45);
    expect(pages).toBe(3);
    expect(last.has_more).toBe(false);
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, PRODUCTS, { url: `${STORE}-n45` }, productsWalk);
    expect(records).toHaveLength(47);
    expect(records[20].product_id).toBe(records[19].product_id);
    expect(new Set(records.map((p) => p.product_id)).size).toBe(45);
  });

  it('refuses a missing url without charging', async () => {
    await sandboxes.expectFreeRefusal(PRODUCTS, {}, { error: 'Missing required parameter: url', endpoint: 'shortvideo-shop/products', credits_required: 1 });
  });

  it('refuses an unknown region and sort_by', async () => {
    expect((await get(sandboxes.sandbox.url, PRODUCTS, { url: STORE, region: 'USA' })).body.error).toBe('Invalid value for region: USA');
    expect((await get(sandboxes.sandbox.url, PRODUCTS, { url: STORE, sort_by: 'cheap' })).body.error).toBe('Invalid value for sort_by: cheap');
  });

  it('refuses a cursor from another region of the same store', async () => {
    const us = await get(sandboxes.sandbox.url, PRODUCTS, { url: `${STORE}-n45` });
    const { status, body } = await get(sandboxes.sandbox.url, PRODUCTS, { url: `${STORE}-n45`, region: 'DE', cursor: us.body.cursor });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });
});
