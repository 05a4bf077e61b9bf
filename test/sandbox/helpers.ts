/**
 * Small helpers for the sandbox suites: the pair of sandboxes each suite runs against, one raw GET
 * over real HTTP, a page walk, and a reader for keyed collections that fails loudly when a "list" is
 * not keyed the API reference 2.2 way.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';

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

/** A keyed collection (API reference 2.2) as an array, after checking its keys are "0", "1", … in order. */
export function fromKeyed(collection: Body): Body[] {
  expect(collection).toBeTypeOf('object');
  expect(Array.isArray(collection)).toBe(false);
  const keys = Object.keys(collection);
  expect(keys).toEqual(keys.map((_, index) => String(index)));
  return Object.values(collection);
}

export interface WalkOptions {
  /** The records of one page body. */
  records: (body: Body) => Body[];
  /** The query of the next page, or `undefined` when the walk is over. */
  next: (body: Body, query: Record<string, string | number>) => Record<string, string | number> | undefined;
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

export interface Sandboxes {
  /** A sandbox on a free port, started with the options given to `useSandboxes`. */
  readonly sandbox: Sandbox;
  /** A sandbox with the duplicate fault on, for the page-boundary repeats a client must drop. */
  readonly duplicating: Sandbox;
  /** The credits left on the account of `sandbox`. */
  credits(): number;
  /**
   * Sends one request to `sandbox` and checks that it is refused with 400, that the body is right
   * (`expected` is the `error` message, or the whole body), and that no credit was spent.
   */
  expectFreeRefusal(path: string, query: Record<string, string | number>, expected: string | Body): Promise<void>;
}

/**
 * Starts the two sandboxes of a suite before its tests and closes them after. The suite reads them
 * through the returned getters, because they exist only once `beforeAll` has run.
 */
export function useSandboxes(options: Omit<SandboxOptions, 'port'> = {}): Sandboxes {
  let sandbox: Sandbox | undefined;
  let duplicating: Sandbox | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox({ ...options, port: 0 });
    duplicating = await startSandbox({ port: 0, faults: { duplicates: true } });
  });
  afterAll(async () => {
    await sandbox?.close();
    await duplicating?.close();
  });
  const started = (server: Sandbox | undefined): Sandbox => {
    if (server === undefined) throw new Error('the sandboxes start in beforeAll; read them inside a test');
    return server;
  };
  const sandboxes: Sandboxes = {
    get sandbox() {
      return started(sandbox);
    },
    get duplicating() {
      return started(duplicating);
    },
    credits() {
      return sandboxes.sandbox.balance(sandboxes.sandbox.apiKey).credits;
    },
    async expectFreeRefusal(path, query, expected) {
      const before = sandboxes.credits();
      const { status, body } = await get(sandboxes.sandbox.url, path, query);
      expect(status).toBe(400);
      if (typeof expected === 'string') expect(body.error).toBe(expected);
      else expect(body).toEqual(expected);
      expect(sandboxes.credits()).toBe(before);
    },
  };
  return sandboxes;
}
