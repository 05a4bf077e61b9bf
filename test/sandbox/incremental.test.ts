/**
 * A scheduled incremental dataset over many rounds of sandbox time, as a team runs one against a real
 * feed: each round `advance()` adds posts, the export runs again into the same dataset, and every walk's
 * high-water mark moves to the newest post while the run buys only the new pages and one more.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { datasetInfo, toDataset } from '../../src/export/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

const PAGE = 25; // posts per page with `trim`
const ADDED = 60; // posts per round: two pages and ten of a third
const ROUNDS = 6;

/**
 * Listings of five years (`timeframe=all`), so their posts lie days apart: the spacing that once dated
 * added posts past the machine's clock within a round or two, where no mark moves.
 */
const WALKS = ['rounds-n300', 'rounds-n120', 'rounds-n75'].map((subforum) => ({ subforum, sort: 'new', timeframe: 'all', trim: true }) as const);

describe('an incremental dataset over rounds of sandbox time', () => {
  const dir = join(scratchDir(), 'rounds');
  let sandbox: Sandbox;
  let client: Client;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;
  const export_ = () => toDataset(WALKS.map((params) => client.forum.subforum(params)), dir);

  /** Per subforum, the mark the dataset records. */
  async function marks(): Promise<Map<string, number>> {
    const [operation] = (await datasetInfo(dir)).operations;
    return new Map(operation.marks.map((mark) => [mark.params.subforum, mark.mark]));
  }

  /** Per subforum, the newest post the listing serves now, in Unix ms. */
  async function newest(): Promise<Map<string, number>> {
    const entries = await Promise.all(
      WALKS.map(async (params) => {
        for await (const post of client.forum.subforum(params)) return [params.subforum, post.created_utc * 1000] as const;
        throw new Error(`${params.subforum} served no post`);
      }),
    );
    return new Map(entries);
  }

  it('moves every walk to its newest post each round and buys the new pages plus one per walk', async () => {
    expect((await export_()).complete).toBe(true);
    let before = await marks();
    expect(before).toEqual(await newest());
    for (let round = 1; round <= ROUNDS; round++) {
      sandbox.advance({ records: ADDED });
      const spent = charged();
      expect((await export_()).complete).toBe(true);
      expect(charged() - spent, `credits in round ${round}`).toBe(WALKS.length * (Math.floor(ADDED / PAGE) + 1));
      const after = await marks();
      expect(after, `marks after round ${round}`).toEqual(await newest());
      for (const [subforum, mark] of after) expect(mark, `${subforum} in round ${round}`).toBeGreaterThan(before.get(subforum)!);
      expect(Math.max(...after.values())).toBeLessThanOrEqual(Date.now());
      before = after;
    }
  });
});
