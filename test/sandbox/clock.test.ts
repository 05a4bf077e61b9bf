/**
 * The sandbox's virtual clock: the records `advance()` adds are dated by it, each round after the
 * last and never after the machine's clock, however many rounds run and however fast. Read through
 * the client and the operation table's record keys and times, as an analyst would see them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { keyOf, timeOf } from '../../src/operations/record-meta.ts';
import { findOperation, type OperationId } from '../../src/operations/table.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';

/** 2025-11-22T00:00:00Z: the seed's data is dated up to here, where the virtual clock starts (docs/sandbox.md). */
const EPOCH_MS = Date.UTC(2025, 10, 22);
const HOUR_MS = 3_600_000;

/**
 * One small resource of every growing operation whose records carry a time. The forum listings span
 * five years (`timeframe=all`), so their old posts lie days apart: the spacing that once dated added
 * posts years ahead.
 */
const TIMED: Array<[OperationId, Record<string, string>]> = [
  ['shortvideo/videos', { handle: 'clock-n45' }],
  ['shortvideo/comment-replies', { comment_id: '7345-n45', url: 'https://shortvideo.example/@a/video/1' }],
  ['socialnet/profile/reels', { url: 'https://socialnet.example/page-n45' }],
  ['socialnet/group/posts', { url: 'https://socialnet.example/groups/g-n45' }],
  ['videosite/channel/shorts', { handle: 'chan-n45' }],
  ['videosite/video/comments', { url: 'https://videosite.example/watch?v=x-n45', order: 'newest' }],
  ['videosite/video/comments', { url: 'https://videosite.example/watch?v=y-n45', order: 'top' }],
  ['microblog/comments', { url: 'https://microblog.example/u/status/123-n45' }],
  ['search-ad-library/company-ads', { domain: 'acme-n45' }],
  ['photoshare/search/hashtag', { hashtag: 'food-n45' }],
  ['forum/subforum', { subforum: 'clock-n45', sort: 'new', timeframe: 'all' }],
  ['forum/subforum', { subforum: 'clock-n45', sort: 'hot', timeframe: 'all' }],
];

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function open(options: Omit<SandboxOptions, 'port'> = {}): Promise<{ sandbox: Sandbox; client: Client }> {
  const started = await startSandbox({ ...options, port: 0 });
  sandbox = started;
  return { sandbox: started, client: createClient({ apiKey: started.apiKey, baseUrl: started.url }) };
}

/** Every record of a walk, in the order served. */
async function walk(client: Client, id: OperationId, params: Record<string, string>): Promise<unknown[]> {
  const records: unknown[] = [];
  for await (const record of client.stream(id, params)) records.push(record);
  return records;
}

/** Per record key, its time in Unix ms, over a whole walk. */
async function times(client: Client, id: OperationId, params: Record<string, string>): Promise<Map<string, number>> {
  const op = findOperation(id)!;
  return new Map((await walk(client, id, params)).map((record) => [keyOf(op, record)!, timeOf(op, record)!]));
}

const label = ([id, params]: [OperationId, Record<string, string>]) => `${id} ${JSON.stringify(params)}`;

describe('the sandbox clock', () => {
  it('starts at the epoch the seed is dated to and moves an hour per advance', async () => {
    const { sandbox } = await open();
    expect(sandbox.now).toBe(EPOCH_MS);
    sandbox.advance({ records: 10 });
    expect(sandbox.now).toBe(EPOCH_MS + HOUR_MS);
    sandbox.advance({ records: 0 });
    expect(sandbox.now).toBe(EPOCH_MS + 2 * HOUR_MS);
    sandbox.advance({ records: 5, seconds: 86_400 });
    expect(sandbox.now).toBe(EPOCH_MS + 2 * HOUR_MS + 24 * HOUR_MS);
  });

  it('lasts a second per record in a round of more records than an hour has seconds', async () => {
    const { sandbox } = await open();
    sandbox.advance({ records: 5_000 });
    expect(sandbox.now).toBe(EPOCH_MS + 5_000_000);
  });

  it.each(TIMED.map((entry) => [label(entry), ...entry] as const))(
    '%s: each round is dated inside its own hour of the clock, after every earlier record, never after the machine',
    async (_label, id, params) => {
      const { sandbox, client } = await open();
      let seen = await times(client, id, params);
      for (let round = 0; round < 4; round++) {
        const from = sandbox.now;
        sandbox.advance({ records: 30 });
        const served = await times(client, id, params);
        const added = [...served].filter(([key]) => !seen.has(key)).map(([, time]) => time);
        expect(added).toHaveLength(30);
        expect(Math.min(...added)).toBeGreaterThan(Math.max(from, ...seen.values()));
        expect(Math.max(...added)).toBeLessThanOrEqual(sandbox.now);
        expect(Math.max(...added)).toBeLessThanOrEqual(Date.now());
        expect(new Set(added).size).toBe(added.length);
        seen = served;
      }
    },
  );

  it('dates many rounds of many records in the past, each round newer than the last', async () => {
    const { sandbox, client } = await open();
    const params = { subforum: 'long-run-n300', sort: 'new', timeframe: 'all', trim: 'true' };
    let newest = Math.max(...(await times(client, 'forum/subforum', params)).values());
    for (let round = 0; round < 20; round++) {
      sandbox.advance({ records: 100 });
      const first = (await walk(client, 'forum/subforum', params))[0] as { created_utc: number };
      expect(first.created_utc * 1000).toBeGreaterThan(newest);
      expect(first.created_utc * 1000).toBeLessThanOrEqual(Date.now());
      newest = first.created_utc * 1000;
    }
  });

  it('ends a round that would pass the machine clock at it, and later rounds stay with it', async () => {
    const { sandbox, client } = await open();
    const params = { handle: 'catch-up-n45' };
    const before = Date.now();
    sandbox.advance({ records: 20, seconds: 20 * 365 * 86_400 });
    const after = Date.now();
    expect(sandbox.now).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(sandbox.now).toBeLessThanOrEqual(after);
    const caught = await times(client, 'shortvideo/videos', params);
    sandbox.advance({ records: 20 });
    expect(sandbox.now).toBeLessThanOrEqual(Date.now());
    const served = await times(client, 'shortvideo/videos', params);
    const added = [...served].filter(([key]) => !caught.has(key)).map(([, time]) => time);
    expect(added).toHaveLength(20);
    expect(Math.max(...served.values())).toBeLessThanOrEqual(Date.now());
    expect(Math.min(...added)).toBeGreaterThanOrEqual(Math.max(...caught.values()));
  });

  it('serves the same records for the same seed and the same advances', async () => {
    const walks = async (seed: string) => {
      const { sandbox, client } = await open({ seed });
      for (const records of [7, 0, 40]) sandbox.advance({ records });
      const served = await Promise.all(TIMED.map(([id, params]) => walk(client, id, params)));
      await sandbox.close();
      return served;
    };
    const first = await walks('clock');
    expect(await walks('clock')).toEqual(first);
    expect(await walks('another')).not.toEqual(first);
  });

  it('keeps the times of records an earlier advance added', async () => {
    const { sandbox, client } = await open();
    const params = { subforum: 'kept-n45', sort: 'new' };
    sandbox.advance({ records: 10 });
    const earlier = await times(client, 'forum/subforum', params);
    sandbox.advance({ records: 10 });
    const later = await times(client, 'forum/subforum', params);
    for (const [key, time] of earlier) expect(later.get(key)).toBe(time);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses seconds = %s with a TypeError', async (seconds) => {
    const { sandbox } = await open();
    expect(() => sandbox.advance({ records: 1, seconds })).toThrow(/advance: seconds must be a positive integer/);
    expect(sandbox.now).toBe(EPOCH_MS);
  });
});
