/**
 * Small helpers for the sandbox suites: one raw GET over real HTTP, a page walk, and a reader for
 * keyed collections that fails loudly when a "list" is not keyed the SPEC 2.2 way.
 */
import { expect } from 'vitest';

/** A JSON body as the tests inspect it: shapes are asserted field by field, so it stays loose. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Body = any;

export interface Reply {
  status: number;
  headers: Headers;
  /** The raw body text (also for non-JSON answers). */
  text: string;
  /** The parsed body, or `undefined` when the text is not JSON. */
  body: Body;
}

export interface GetOptions {
  /** The `X-API-Key` header; `null` sends none. Default `sk_live_sandbox`. */
  key?: string | null;
  headers?: Record<string, string>;
  method?: string;
}

/** One request to the sandbox at `url` (its base URL), e.g. `get(url, '/v1/scrape/shortvideo/profile', { handle })`. */
export async function get(
  url: string,
  path: string,
  query: Record<string, string | number> = {},
  { key = 'sk_live_sandbox', headers = {}, method = 'GET' }: GetOptions = {},
): Promise<Reply> {
  const target = new URL(path, url);
  for (const [name, value] of Object.entries(query)) target.searchParams.set(name, String(value));
  const response = await fetch(target, {
    method,
    headers: { ...(key === null ? {} : { 'x-api-key': key }), ...headers },
  });
  const text = await response.text();
  let body: Body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** A keyed collection (SPEC 2.2) as an array, after checking its keys are "0", "1", … in order. */
export function fromKeyed(collection: Body): Body[] {
  expect(collection).toBeTypeOf('object');
  expect(Array.isArray(collection)).toBe(false);
  const keys = Object.keys(collection);
  expect(keys).toEqual(keys.map((_, index) => String(index)));
  return Object.values(collection);
}

export interface WalkOptions {
  /** The records of one page body. */
  records(body: Body): Body[];
  /** The query of the next page, or `undefined` when the walk is over. */
  next(body: Body, query: Record<string, string | number>): Record<string, string | number> | undefined;
  key?: string;
  /** A safety stop so that a broken continuation fails the test instead of hanging it. */
  maxPages?: number;
}

/** Follows a continuation from the first page to the last, returning every record and the page count. */
export async function walk(
  url: string,
  path: string,
  query: Record<string, string | number>,
  { records, next, key, maxPages = 10_000 }: WalkOptions,
): Promise<{ records: Body[]; pages: number; last: Body }> {
  const all: Body[] = [];
  let current: Record<string, string | number> | undefined = query;
  let pages = 0;
  let last: Body;
  while (current !== undefined) {
    if (pages >= maxPages) throw new Error(`walk of ${path} did not end within ${maxPages} pages`);
    const reply = await get(url, path, current, { key });
    if (reply.status !== 200) throw new Error(`walk of ${path} got ${reply.status}: ${reply.text.slice(0, 200)}`);
    pages += 1;
    last = reply.body;
    all.push(...records(reply.body));
    current = next(reply.body, current);
  }
  return { records: all, pages, last };
}
