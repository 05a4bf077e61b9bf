/**
 * Shared pieces of the client suites: a sandbox per suite, a client pointed at it with short
 * backoff, the walks every paginated operation is tested with, and a tiny `node:http` test server
 * for answers the sandbox never gives (a repeated cursor, a config error, a hanging socket).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Client, type ClientEvent, type ClientOptions, createClient } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { stringifyExact } from '../../src/exact-json.ts';

/** A client of `sandbox` whose retries wait at most a few milliseconds. */
export function clientOf(sandbox: Sandbox, options: ClientOptions = {}): Client {
  return createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, retry: { retries: 6, minDelayMs: 1, maxDelayMs: 5 }, ...options });
}

export async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

/** Charged requests of the sandbox's first account so far. */
export function charged(sandbox: Sandbox): number {
  return sandbox.requests.charged[sandbox.apiKey] ?? 0;
}

export interface Walk {
  id: string;
  params: Record<string, string | number>;
  /** Records of a full walk: the `-n` count of the identifier. */
  count: number;
}

/** One walk per paginated operation, each a few pages long. */
export const PAGED_WALKS: readonly Walk[] = [
  { id: 'shortvideo/videos', params: { handle: 'creator-n95' }, count: 95 },
  { id: 'shortvideo/comment-replies', params: { comment_id: '7312-n45', url: 'https://shortvideo.example/@a/video/1' }, count: 45 },
  { id: 'shortvideo-shop/products', params: { url: 'https://shop.example/store-n47' }, count: 47 },
  { id: 'socialnet/profile/reels', params: { url: 'https://socialnet.example/page-n33' }, count: 33 },
  { id: 'socialnet/group/posts', params: { group_id: 'group-n10' }, count: 10 },
  { id: 'socialnet-marketplace/search', params: { lat: 40.7, lng: -74, query: 'bike-n50' }, count: 50 },
  { id: 'videosite/channel/shorts', params: { handle: '@chan-n100' }, count: 100 },
  { id: 'videosite/video/comments', params: { url: 'https://videosite.example/watch?v=abc-n45' }, count: 45 },
  { id: 'microblog/comments', params: { url: 'https://microblog.example/u/status/1-n45' }, count: 45 },
  { id: 'search-ad-library/company-ads', params: { domain: 'acme.example-n90' }, count: 90 },
  { id: 'socialnet-ad-library/search', params: { query: 'shoes-n65' }, count: 65 },
  { id: 'photoshare/search/hashtag', params: { hashtag: '#travel-n50' }, count: 50 },
  { id: 'forum/post/comments', params: { url: 'https://forum.example/r/x/comments/abc/post-n40' }, count: 40 },
  { id: 'forum/subforum', params: { subforum: 'ts-n250' }, count: 250 },
  { id: 'search/search', params: { query: 'q-n57' }, count: 57 },
];

/** The unpaged operations that still return a list: their whole list in one response. */
export const LIST_WALKS: readonly Walk[] = [
  { id: 'videosite/video/transcript', params: { url: 'https://videosite.example/watch?v=abc-n20' }, count: 20 },
  { id: 'professional/search/posts', params: { query: 'ai-n12' }, count: 12 },
  { id: 'threadtext/user-posts', params: { handle: 'user-n9' }, count: 9 },
];

/** The operations that yield exactly one record. */
export const SINGLE_WALKS: readonly Omit<Walk, 'count'>[] = [
  { id: 'shortvideo/profile', params: { handle: 'creator' } },
  { id: 'microblog/tweet/transcript', params: { url: 'https://microblog.example/u/status/1' } },
  { id: 'microblog/community', params: { url: 'https://microblog.example/i/communities/1' } },
  { id: 'photoshare/highlight-detail', params: { id: '17912345678' } },
  { id: 'photoshare/post-info', params: { url: 'https://photoshare.example/p/abc' } },
];

/** A stable identity of a record, for comparing walks. */
export function identity(record: unknown): string {
  return stringifyExact(record)!;
}

/** Fields that name a record, most specific first (a comment reply's `aweme_id` is its video's). */
const ID_FIELDS = ['cid', 'aweme_id', 'product_id', 'ad_archive_id', 'creativeId', 'rest_id', 'id', 'page_id', 'startMs', 'url', 'transcript'];

/** A record's id, read the same way whichever dialect it came from. */
export function idOf(record: unknown): string {
  const fields = record as Record<string, unknown>;
  for (const name of ID_FIELDS) {
    const value = fields[name];
    if (typeof value === 'string' || typeof value === 'number') return String(value);
  }
  const user = fields.user as { id?: unknown } | undefined;
  // A record without any id would compare equal to every other one: a test must not pass on that.
  if (typeof user?.id !== 'string' && typeof user?.id !== 'number') throw new Error(`no id field in ${JSON.stringify(record).slice(0, 120)}`);
  return String(user.id);
}

export interface TestServer {
  url: string;
  /** What the server received: path with query, and headers. */
  received: Array<{ url: string; headers: IncomingMessage['headers']; remotePort: number | undefined }>;
  close(): Promise<void>;
}

/** A plain `node:http` server on loopback answering with `handler` (a test server, not a mock of our code). */
export async function testServer(handler: (request: IncomingMessage, response: ServerResponse, index: number) => void): Promise<TestServer> {
  const received: TestServer['received'] = [];
  const server = createServer((request, response) => {
    received.push({ url: request.url ?? '', headers: request.headers, remotePort: request.socket.remotePort });
    handler(request, response, received.length - 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `body` as JSON with `status`. */
export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** A small resource of every operation, for tests that walk each one once. */
export const SAMPLES: Record<string, Record<string, string>> = {
  'shortvideo/profile': { handle: 'creator' },
  'shortvideo/videos': { handle: 'creator-n30' },
  'shortvideo/videos/popular': { countryCode: 'US' },
  'shortvideo/comment-replies': { comment_id: '7345', url: 'https://shortvideo.example/@a/video/1-n30' },
  'shortvideo-shop/products': { url: 'https://shop.example/store/x-n30' },
  'socialnet/profile/reels': { url: 'https://socialnet.example/page-n30' },
  'socialnet/group/posts': { url: 'https://socialnet.example/groups/g-n30' },
  'socialnet-marketplace/search': { lat: '40.7', lng: '-74', query: 'bike-n30' },
  'socialnet-marketplace/location-search': { query: 'new york' },
  'videosite/channel/shorts': { handle: 'chan-n30' },
  'videosite/video/comments': { url: 'https://videosite.example/watch?v=x-n30' },
  'videosite/video/transcript': { url: 'https://videosite.example/watch?v=x' },
  'microblog/tweet/transcript': { url: 'https://microblog.example/u/status/123' },
  'microblog/community': { url: 'https://microblog.example/i/communities/123' },
  'microblog/comments': { url: 'https://microblog.example/u/status/123-n30' },
  'search-ad-library/company-ads': { domain: 'acme-n30' },
  'socialnet-ad-library/search': { query: 'shoes-n30' },
  'photoshare/transcript': { url: 'https://photoshare.example/p/abc' },
  'photoshare/search/hashtag': { hashtag: 'food-n30' },
  'photoshare/highlight-detail': { id: '123456' },
  'photoshare/post-info': { url: 'https://photoshare.example/p/abc' },
  'forum/post/comments': { url: 'https://forum.example/r/x/comments/abc/title-n30' },
  'forum/subforum': { subforum: 'typescript-n30' },
  'professional/search/posts': { query: 'ai' },
  'search/search': { query: 'ai' },
  'threadtext/user-posts': { handle: 'someone' },
};

/** The service's top-level envelope: the payload beside `success`, no `data`, `credits_used` or `endpoint`. */
export function topLevel(payload: object): object {
  return { success: true, ...payload, credits_remaining: 9_000, credits_charged: 1 };
}

/** The `ignored-continuation` events `client` reports from here on. */
export function ignoredEvents(client: Client): ClientEvent[] {
  const events: ClientEvent[] = [];
  client.events$.subscribe((event) => {
    if (event.type === 'ignored-continuation') events.push(event);
  });
  return events;
}
