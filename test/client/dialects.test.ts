/**
 * Both sandbox dialects serve the same records: `spec` answers as the API reference reads, `service` as the
 * service answers in practice (payload at the top, arrays, the forum's top-level `more`, trimmed
 * bodies, its cursor forms). The client must walk every operation of either to the same record ids
 * and counts: in full, under a limit, and resumed from a checkpoint at every page boundary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, createClient } from '../../src/index.ts';
import { type Sandbox, type SandboxDialect, startSandbox } from '../../src/sandbox/index.ts';
import { collect, idOf, LIST_WALKS, PAGED_WALKS, SINGLE_WALKS, type Walk } from './helpers.ts';

const DIALECTS: readonly SandboxDialect[] = ['spec', 'service'];
const KEY = 'sk_live_sandbox_dialects';

const sandboxes = {} as Record<SandboxDialect, Sandbox>;
const clients = {} as Record<SandboxDialect, Client>;

beforeAll(async () => {
  for (const dialect of DIALECTS) {
    sandboxes[dialect] = await startSandbox({ port: 0, dialect, accounts: [{ apiKey: KEY, credits: 1_000_000 }] });
    clients[dialect] = createClient({ baseUrl: sandboxes[dialect].url, apiKey: KEY, retry: { retries: 0 } });
  }
});
afterAll(async () => {
  for (const dialect of DIALECTS) {
    await clients[dialect].close();
    await sandboxes[dialect].close();
  }
});

const charged = (dialect: SandboxDialect): number => sandboxes[dialect].requests.charged[KEY] ?? 0;

/** The ids of a walk in `dialect`, and the pages it bought. */
async function walkIds(dialect: SandboxDialect, walk: Pick<Walk, 'id' | 'params'>, options = {}): Promise<{ ids: string[]; pages: number }> {
  const before = charged(dialect);
  const records = await collect(clients[dialect].stream(walk.id as never, walk.params as never, options));
  return { ids: records.map(idOf), pages: charged(dialect) - before };
}

/** Walks run in both dialects: each paged one, the trimmed forms, and the unpaged ones. */
const WALKS: readonly Walk[] = [
  ...PAGED_WALKS,
  { id: 'shortvideo/videos', params: { handle: 'trimmed-n95', trim: 'true' }, count: 95 },
  { id: 'forum/subforum', params: { subforum: 'trimmed-n60', trim: 'true' }, count: 60 },
  { id: 'shortvideo/videos/popular', params: { countryCode: 'US' }, count: 0 },
  ...LIST_WALKS,
  { id: 'socialnet-marketplace/location-search', params: { query: 'lyon' }, count: 0 },
  { id: 'photoshare/transcript', params: { url: 'https://photoshare.example/p/abc' }, count: 0 },
  ...SINGLE_WALKS.map((walk) => ({ ...walk, count: 1 })),
];

const label = (walk: Walk): string => `${walk.id}${walk.params.trim ? ' (trimmed)' : ''}`;

/** Walks of one page: they have no page boundary to resume from. */
const ONE_PAGE = new Set<Walk>(WALKS.slice(WALKS.length - LIST_WALKS.length - 2 - SINGLE_WALKS.length));

describe.each(WALKS.map((walk) => ({ walk, name: label(walk) })))('$name in both dialects', ({ walk }) => {
  it('walks in full to the same record ids, none reported as ignored', async () => {
    const [spec, service] = await Promise.all(DIALECTS.map((dialect) => walkIds(dialect, walk)));
    if (walk.count > 0) expect(spec.ids).toHaveLength(walk.count);
    expect(spec.ids.length).toBeGreaterThan(0);
    expect(service.ids).toEqual(spec.ids);
    for (const dialect of DIALECTS) expect(clients[dialect].stats.ignoredContinuations).toBe(0);
  });

  it('stops at a limit after the same records', async () => {
    const full = await walkIds('spec', walk);
    const limit = Math.ceil(full.ids.length / 2);
    for (const dialect of DIALECTS) expect((await walkIds(dialect, walk, { limit })).ids).toEqual(full.ids.slice(0, limit));
  });

  it.skipIf(ONE_PAGE.has(walk))('resumes from a checkpoint at every page boundary to the same records, buying no page twice', async () => {
    for (const dialect of DIALECTS) {
      const clean = await walkIds(dialect, walk);
      expect(clean.pages, `${dialect}: a paged walk`).toBeGreaterThan(1);
      for (let boundary = 1; boundary < clean.pages; boundary++) {
        const before = charged(dialect);
        const first = clients[dialect].stream(walk.id as never, walk.params as never, { maxPages: boundary });
        const head = (await collect(first)).map(idOf);
        const checkpoint = JSON.parse(JSON.stringify(first.checkpoint()));
        const tail = (await collect(clients[dialect].resume(checkpoint))).map(idOf);
        expect([...head, ...tail], `${dialect}, boundary ${boundary}`).toEqual(clean.ids);
        expect(charged(dialect) - before).toBe(clean.pages);
      }
    }
  });
});

describe('the forum tree read through pages() in both dialects', () => {
  it('resumes after its first body to exactly the comments that body did not hold', async () => {
    const walk = PAGED_WALKS.find((each) => each.id === 'forum/post/comments') as Walk;
    for (const dialect of DIALECTS) {
      const clean = await walkIds(dialect, walk);
      const stream = clients[dialect].stream(walk.id as never, walk.params as never);
      let body: unknown;
      for await (const page of stream.pages()) {
        body = page;
        break;
      }
      const inBody = commentIds(body);
      const rest = (await collect(clients[dialect].resume(JSON.parse(JSON.stringify(stream.checkpoint()))))).map(idOf);
      expect(inBody.length).toBeGreaterThan(0);
      expect(rest.filter((id) => inBody.includes(id))).toEqual([]);
      expect([...inBody, ...rest].sort()).toEqual([...clean.ids].sort());
    }
  });
});

/** Every comment id in a raw forum body, at any depth, in either envelope and collection form. */
function commentIds(body: unknown): string[] {
  const ids: string[] = [];
  const visit = (comments: unknown): void => {
    for (const comment of Object.values(comments ?? {}) as Array<{ id: string; replies?: { items?: unknown } }>) {
      ids.push(comment.id);
      visit(comment.replies?.items);
    }
  };
  const top = body as { comments?: unknown; data?: { comments?: unknown } };
  visit(top.comments ?? top.data?.comments);
  return ids;
}
