/**
 * The record types against real data. The sandbox is written from the API reference independently of these
 * types, and the client turns its pages into records with its own code; each value, fetched over
 * real HTTP, is handed to the TypeScript compiler as the initial value of a constant of its type. A
 * field of the wrong type, a listed field missing, or an unlisted field on a record the API reference closes is a
 * compile error, so a mistake on any of the three sides shows here.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { type SandboxDialect, startSandbox } from '../../src/sandbox/index.ts';
import { compile, recordsIndex, type CompileError } from './compile.ts';

interface PageSample {
  /** Operation id, the path below `/v1/scrape/`. */
  op: string;
  query: Record<string, string>;
  /** The type the page must satisfy, exported by `src/records/index.ts`. */
  type: string;
}

function page(op: string, query: Record<string, string>, type = `PagesByOperation['${op}']`): PageSample {
  return { op, query, type };
}

// Identifiers ending in -n3 keep pages small; each page still holds several records.
const pageSamples: PageSample[] = [
  page('shortvideo/profile', { handle: 'creator' }),
  page('shortvideo/videos', { handle: 'creator-n3' }),
  page('shortvideo/videos/popular', { countryCode: 'US' }),
  page('shortvideo/comment-replies', { comment_id: '7345', url: 'https://shortvideo.example/@a/video/1-n3' }),
  page('shortvideo-shop/products', { url: 'https://shop.example/store/x-n3' }),
  page('socialnet/profile/reels', { url: 'https://socialnet.example/page-n3' }),
  page('socialnet/group/posts', { url: 'https://socialnet.example/groups/g-n3' }),
  page('socialnet-marketplace/search', { lat: '40.7', lng: '-74', query: 'bike-n3' }),
  page('socialnet-marketplace/location-search', { query: 'new york' }),
  page('videosite/channel/shorts', { handle: 'chan-n3' }),
  page('videosite/video/comments', { url: 'https://videosite.example/watch?v=x-n3' }),
  page('videosite/video/transcript', { url: 'https://videosite.example/watch?v=x' }),
  page('microblog/tweet/transcript', { url: 'https://microblog.example/u/status/123' }),
  page('microblog/community', { url: 'https://microblog.example/i/communities/123' }),
  page('microblog/comments', { url: 'https://microblog.example/u/status/123-n3' }),
  page('search-ad-library/company-ads', { domain: 'acme-n3' }),
  page('socialnet-ad-library/search', { query: 'shoes-n3' }),
  page('photoshare/transcript', { url: 'https://photoshare.example/p/abc' }),
  page('photoshare/search/hashtag', { hashtag: 'food-n3' }),
  page('photoshare/highlight-detail', { id: '123456' }),
  page('photoshare/post-info', { url: 'https://photoshare.example/p/abc' }),
  page('forum/post/comments', { url: 'https://forum.example/r/x/comments/abc/title-n8' }),
  page('forum/subforum', { subforum: 'typescript-n3' }),
  page('forum/subforum', { subforum: 'typescript-n3', trim: 'true' }, 'TrimmedSubforumPage'),
  page('professional/search/posts', { query: 'ai' }),
  page('search/search', { query: 'ai' }),
  page('threadtext/user-posts', { handle: 'someone' }),
];

interface RecordSample {
  label: string;
  /** The type every record must satisfy, exported by `src/records/index.ts`. */
  type: string;
  records: (client: Client) => AsyncIterable<unknown>;
}

function records(op: string, walk: (client: Client) => AsyncIterable<unknown>, type = `RecordsByOperation['${op}']`): RecordSample {
  return { label: op, type, records: walk };
}

// Two pages where there are pages, so records from a continued request are checked too.
const two = { maxPages: 2 };
const recordSamples: RecordSample[] = [
  records('shortvideo/profile', (c) => c.shortvideo.profile({ handle: 'creator' })),
  records('shortvideo/videos', (c) => c.shortvideo.videos({ handle: 'creator-n33' }, two)),
  records('shortvideo/videos/popular', (c) => c.shortvideo.popularVideos({ countryCode: 'US' }, { maxPages: 1 })),
  records('shortvideo/comment-replies', (c) => c.shortvideo.commentReplies({ comment_id: '7345', url: 'https://shortvideo.example/@a/video/1-n23' }, two)),
  records('shortvideo-shop/products', (c) => c.shortvideoShop.products({ url: 'https://shop.example/store/x-n23' }, two)),
  records('socialnet/profile/reels', (c) => c.socialnet.profileReels({ url: 'https://socialnet.example/page-n13' }, two)),
  records('socialnet/group/posts', (c) => c.socialnet.groupPosts({ url: 'https://socialnet.example/groups/g-n5' }, two)),
  records('socialnet-marketplace/search', (c) => c.socialnetMarketplace.search({ lat: 40.7, lng: -74, query: 'bike-n27' }, two)),
  records('socialnet-marketplace/location-search', (c) => c.socialnetMarketplace.locationSearch({ query: 'new york' })),
  records('videosite/channel/shorts', (c) => c.videosite.channelShorts({ handle: 'chan-n50' }, two)),
  records('videosite/video/comments', (c) => c.videosite.videoComments({ url: 'https://videosite.example/watch?v=x-n23' }, two)),
  records('videosite/video/transcript', (c) => c.videosite.videoTranscript({ url: 'https://videosite.example/watch?v=x' })),
  records('microblog/tweet/transcript', (c) => c.microblog.tweetTranscript({ url: 'https://microblog.example/u/status/123' })),
  records('microblog/community', (c) => c.microblog.community({ url: 'https://microblog.example/i/communities/123' })),
  records('microblog/comments', (c) => c.microblog.comments({ url: 'https://microblog.example/u/status/123-n23' }, two)),
  records('search-ad-library/company-ads', (c) => c.searchAdLibrary.companyAds({ domain: 'acme-n43' }, two)),
  records('socialnet-ad-library/search', (c) => c.socialnetAdLibrary.search({ query: 'shoes-n33' }, two)),
  records('photoshare/transcript', (c) => c.photoshare.transcript({ url: 'https://photoshare.example/p/abc' })),
  records('photoshare/search/hashtag', (c) => c.photoshare.hashtag({ hashtag: 'food-n27' }, two)),
  records('photoshare/highlight-detail', (c) => c.photoshare.highlightDetail({ id: '123456' })),
  records('photoshare/post-info', (c) => c.photoshare.postInfo({ url: 'https://photoshare.example/p/abc' })),
  records('forum/post/comments', (c) => c.forum.postComments({ url: 'https://forum.example/r/x/comments/abc/title-n40' }, two)),
  records('forum/subforum', (c) => c.forum.subforum({ subforum: 'typescript-n3' })),
  records('professional/search/posts', (c) => c.professional.searchPosts({ query: 'ai' })),
  records('search/search', (c) => c.search.web({ query: 'ai' }, two)),
  records('threadtext/user-posts', (c) => c.threadtext.userPosts({ handle: 'someone' })),
];

const virtualDir = fileURLToPath(new URL('./sandbox-shapes/', import.meta.url));
const pageFile = (index: number) => `${virtualDir}page${index}.ts`;
const recordsFile = (index: number, dialect: SandboxDialect = 'spec') => `${virtualDir}${dialect}-records${index}.ts`;
const DIALECTS: readonly SandboxDialect[] = ['spec', 'service'];

/** A source declaring `value` as a constant of `type`; `PagesByOperation['x']` imports its map. */
function declaration(type: string, value: string): string {
  const name = /^\w+/.exec(type)?.[0] ?? type;
  return `import type { ${name} } from ${JSON.stringify(recordsIndex)};\nexport const value: ${type} = ${value};\n`;
}

/** `value` as TypeScript source: JSON, with a bigint as a bigint literal (`7471256031625273857n`), so its field's type must allow one. */
function typescriptLiteral(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? `\u0000bigint:${item}` : item)).replace(/"\\u0000bigint:(-?\d+)"/g, '$1n');
}

const pages: Array<{ status: number; body: string }> = [];
const yielded: Record<SandboxDialect, Array<{ count: number; error: string }>> = { spec: [], service: [] };
let errors: CompileError[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const sandbox = await startSandbox({ port: 0 });
  closers.push(() => sandbox.close());
  const sources = new Map<string, string>();
  for (const [index, { op, query, type }] of pageSamples.entries()) {
    const response = await fetch(`${sandbox.url}/v1/scrape/${op}?${new URLSearchParams(query)}`, {
      headers: { 'X-API-Key': sandbox.apiKey },
    });
    const body = await response.text();
    pages[index] = { status: response.status, body: body.slice(0, 300) };
    if (response.ok) sources.set(pageFile(index), declaration(type, body));
  }
  // The records are the same types whichever envelope and collection forms the service answers in.
  for (const dialect of DIALECTS) {
    const server = dialect === 'spec' ? sandbox : await startSandbox({ port: 0, dialect });
    if (server !== sandbox) closers.push(() => server.close());
    const client = createClient({ baseUrl: server.url, apiKey: server.apiKey });
    for (const [index, { type, records: walk }] of recordSamples.entries()) {
      const collected: unknown[] = [];
      try {
        for await (const record of walk(client)) collected.push(record);
        yielded[dialect][index] = { count: collected.length, error: '' };
        sources.set(recordsFile(index, dialect), declaration(`${type}[]`, typescriptLiteral(collected)));
      } catch (error) {
        yielded[dialect][index] = { count: collected.length, error: String(error) };
      }
    }
    await client.close();
  }
  // One program for every value keeps the suite fast.
  errors = compile(sources);
});

afterAll(async () => {
  for (const close of closers) await close();
});

function errorsIn(file: string): string[] {
  return errors.filter((error) => error.file === file).map((error) => error.message);
}

describe('a raw sandbox page', () => {
  it.each(pageSamples.map((sample, index) => ({ index, label: `${sample.op}${sample.query.trim ? ' (trimmed)' : ''}` })))(
    'of $label matches its page type',
    ({ index }) => {
      expect(pages[index].status, pages[index].body).toBe(200);
      expect(errorsIn(pageFile(index))).toEqual([]);
    },
  );
});

describe.each(DIALECTS)('the records the client yields from the %s dialect', (dialect) => {
  it.each(recordSamples.map((sample, index) => ({ index, label: sample.label })))('of $label match their record type', ({ index }) => {
    expect(yielded[dialect][index].error).toBe('');
    expect(yielded[dialect][index].count).toBeGreaterThan(0);
    expect(errorsIn(recordsFile(index, dialect))).toEqual([]);
  });
});

describe('the generated sources', () => {
  it('compile with no error outside the values checked above', () => {
    const records = DIALECTS.flatMap((dialect) => [...recordSamples.keys()].map((index) => recordsFile(index, dialect)));
    const checked = new Set([...pageSamples.keys()].map(pageFile).concat(records));
    expect(errors.filter((error) => !checked.has(error.file))).toEqual([]);
  });
});
