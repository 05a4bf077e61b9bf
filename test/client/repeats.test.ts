import { describe, expect, it } from 'vitest';
import { createClient, PaginationLoopError } from '../../src/index.ts';
import { collect, json, testServer } from './helpers.ts';

const KEY = 'sk_live_sandbox_repeats';

describe('a walk whose pages repeat under ever-new cursors', () => {
  it('raises PaginationLoopError once 5 pages in a row repeat earlier ones, naming no cursor', async () => {
    const cursor = 'c'.repeat(500);
    const server = await testServer((_request, response, index) =>
      json(response, 200, {
        success: true,
        data: { success: true, posts: { 0: { id: 'a' }, 1: { id: 'b' } }, after: `${cursor}${index}` },
        credits_used: 1,
      }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: KEY });
    try {
      const error = await collect(client.forum.subforum({ subforum: 'same' })).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(PaginationLoopError);
      expect((error as Error).message).toMatch(/5 pages in a row repeated records of earlier pages/);
      expect((error as Error).message).not.toContain(cursor);
      expect(server.received).toHaveLength(6);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('goes on while each page brings records of its own', async () => {
    const server = await testServer((_request, response, index) =>
      json(response, 200, {
        success: true,
        data: { success: true, posts: { 0: { id: `p${index}` } }, ...(index < 30 ? { after: `next${index}` } : {}) },
        credits_used: 1,
      }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: KEY });
    try {
      expect(await collect(client.forum.subforum({ subforum: 'fresh' }))).toHaveLength(31);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
