/**
 * High-water marks against feeds as real services serve them (the sandbox's feed faults): a pinned
 * post, a garbage time, the year 9999, a post out of order, a post without its id. Every run's
 * purchases are counted on the sandbox's side; the dataset is read back by DuckDB and held against
 * the whole listing as the sandbox serves it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox, type SandboxDialect, type SandboxFaults } from '../../src/sandbox/index.ts';
import { parseSandboxArgs, SANDBOX_HELP } from '../../src/sandbox/cli.ts';
import { renderHelp } from '../../src/cli/help.ts';
import { toDataset } from '../../src/export/index.ts';
import { DatasetDestination } from '../../src/dataset/destination.ts';
import { stableKeyOf } from '../../src/operations/record-meta.ts';
import type { OperationSpec } from '../../src/operations/spec.ts';
import { findOperation, OPERATIONS, type OperationId } from '../../src/operations/table.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { SAMPLES } from '../client/helpers.ts';

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `marks-${++counter}`);
const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;

const DIALECTS: SandboxDialect[] = ['spec', 'service'];

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function open(faults: SandboxFaults, dialect: SandboxDialect): Promise<{ client: Client; charged: () => number; sandbox: Sandbox }> {
  const started = await startSandbox({ port: 0, faults, dialect });
  sandbox = started;
  const client = createClient({ apiKey: started.apiKey, baseUrl: started.url });
  return { client, sandbox: started, charged: () => started.requests.charged[started.apiKey] ?? 0 };
}

/** Every post id the listing serves now, walked in full. */
async function listingIds(client: Client, params: Parameters<Client['forum']['subforum']>[0]): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const post of client.forum.subforum(params)) ids.add(String(post.id));
  return ids;
}

async function datasetIds(dir: string): Promise<string[]> {
  return (await query(`SELECT id FROM ${table(dir)}`)).map((row) => String(row.id));
}

// 25 posts a page (trim); a week's posts, so a run's new posts are dated in the past, as a real feed's are.
const subforum = (name: string) => ({ subforum: name, sort: 'new', timeframe: 'week', trim: true }) as const;

describe('a newest-first dataset walk over an odd feed', () => {
  const cases: [string, SandboxFaults][] = [
    ['a garbage-time record (created_utc -1)', { garbageTime: true }],
    ['a record dated in the year 9999', { futureTime: true }],
    ['a pinned old post at the top', { pinned: true }],
    ['a post out of order (400 days older than its place)', { outOfOrder: true }],
  ];
  const runs = cases.flatMap(([what, faults]) => DIALECTS.map((dialect) => [what, dialect, faults] as const));

  it.each(runs)('with %s among new posts, buys every new page and loses no post across runs (%s dialect)', async (_what, dialect, faults) => {
    const { client, sandbox, charged } = await open(faults, dialect);
    const dir = freshDir();
    const params = subforum(`odd-feed-${dialect}-n240`);
    const bought: number[] = [];
    for (const added of [0, 100, 100]) {
      sandbox.advance({ records: added });
      const before = charged();
      const summary = await toDataset(client.forum.subforum(params), dir);
      expect(summary.complete).toBe(true);
      bought.push(charged() - before);
    }
    // 100 new posts are 4 pages; one more shows the walk reached what the dataset holds.
    expect(bought[1]).toBe(5);
    expect(bought[2]).toBe(5);
    const ids = await datasetIds(dir);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(await listingIds(client, params));
    expect(ids).toHaveLength(440);
  });

  it.each(DIALECTS)('keeps a mark that an odd record cannot move past the newest believable time (%s dialect)', async (dialect) => {
    const { client } = await open({ futureTime: true, garbageTime: true }, dialect);
    const dir = freshDir();
    await toDataset(client.forum.subforum(subforum(`mark-${dialect}-n120`)), dir);
    const [{ odd, newest }] = await query(
      `SELECT count(*) FILTER (WHERE created_utc < 946684800 OR created_utc > epoch(now())) AS odd,
              max(created_utc) FILTER (WHERE created_utc BETWEEN 946684800 AND epoch(now())) AS newest FROM ${table(dir)}`,
    );
    expect(Number(odd)).toBeGreaterThanOrEqual(2);
    const walks = join(dir, '_dataset', 'forum__subforum', 'walks');
    const marks = readdirSync(walks).map((name) => (JSON.parse(readFileSync(join(walks, name), 'utf8')) as { mark: number }).mark);
    expect(marks).toEqual([Number(newest) * 1000]);
  });

  it.each(DIALECTS)('with every feed fault on, a channel of shorts (ISO times) loses no short across runs (%s dialect)', async (dialect) => {
    const { client, sandbox, charged } = await open({ pinned: true, garbageTime: true, futureTime: true, outOfOrder: true }, dialect);
    const dir = freshDir();
    const params = { handle: `odd-shorts-${dialect}-n200` };
    const bought: number[] = [];
    for (const added of [0, 150, 150]) {
      sandbox.advance({ records: added });
      const before = charged();
      await toDataset(client.videosite.channelShorts(params), dir);
      bought.push(charged() - before);
    }
    // 48 shorts a page (the pinned one makes the first 49): 150 new shorts fill 3 pages and 6 of a fourth, which ends in held ones.
    expect(bought.slice(1)).toEqual([4, 4]);
    const truth = new Set<string>();
    for await (const short of client.videosite.channelShorts(params)) truth.add(String(short.id));
    const ids = await datasetIds(dir);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(truth);
    expect(ids).toHaveLength(500);
  });
});

describe('records without a usable key', () => {
  it.each(DIALECTS)('are keyed by their permalink, so three runs with counters growing never multiply them (%s dialect)', async (dialect) => {
    const { client, sandbox } = await open({ keyless: true }, dialect);
    const dir = freshDir();
    // `top` is not newest first: every run walks it all again, and every run's scores differ.
    const params = { subforum: `keyless-${dialect}-n150`, sort: 'top', trim: true } as const;
    for (const added of [0, 10, 10]) {
      sandbox.advance({ records: added });
      await toDataset(client.forum.subforum(params), dir);
    }
    const rows = await query(`SELECT permalink, score, id FROM ${table(dir)}`);
    let served = 0;
    let keyless = 0;
    const scores = new Map<string, number>();
    for await (const post of client.forum.subforum(params)) {
      served++;
      if (post.id === null) keyless++;
      scores.set(post.permalink, post.score);
    }
    expect(keyless).toBeGreaterThan(3);
    expect(rows).toHaveLength(served);
    expect(new Set(rows.map((row) => row.permalink)).size).toBe(served);
    expect(rows.filter((row) => row.id === null)).toHaveLength(keyless);
    // The last run's values replaced the older ones, keyless records too.
    for (const row of rows) expect(row.score).toBe(scores.get(String(row.permalink)));
  });

  it('are set aside and counted when the operation names no stable key for them', async () => {
    const { client } = await open({}, 'spec');
    const dir = freshDir();
    // Web results are keyed by url; one without a url has nothing that names it across runs.
    const summary = await toDataset(client.search.web({ query: 'socialstream' }), dir, { transform: (records) => withoutUrlEvery(records, 3) });
    const [{ rows }] = await query(`SELECT count(*) AS rows FROM ${table(dir)}`);
    expect(summary.dataset?.setAside).toBeGreaterThan(0);
    expect(Number(rows) + summary.dataset!.setAside).toBe(summary.records);
  });
});

async function* withoutUrlEvery(records: AsyncIterable<unknown>, n: number): AsyncGenerator<unknown> {
  let index = 0;
  for await (const record of records) yield index++ % n === 0 ? { ...(record as object), url: null } : record;
}

describe('backfill bounds', () => {
  it.each(DIALECTS)('since: a newest-first walk buys no page wholly older, and writes nothing older (%s dialect)', async (dialect) => {
    const { client, charged } = await open({}, dialect);
    const params = subforum(`since-${dialect}-n300`);
    const pages: number[][] = [];
    for await (const batch of client.forum.subforum(params).pageBatches()) pages.push(batch.records.map((post) => post.created_utc * 1000));
    const since = new Date(pages[5][10]);
    // The walk stops at the first page that ends in five posts older than `since`: the ones after are older still.
    const last = pages.findIndex((times) => times.slice(-5).every((time) => time < since.getTime()));
    expect(last).toBe(5);
    const expected = pages.flat().filter((time) => time >= since.getTime()).length;

    const before = charged();
    const dir = freshDir();
    const summary = await toDataset(client.forum.subforum(params), dir, { since });
    expect(charged() - before).toBe(last + 1);
    // No page it bought is wholly older than `since`.
    expect(pages.slice(0, last + 1).every((times) => times.some((time) => time >= since.getTime()))).toBe(true);
    const [{ rows, oldest }] = await query(`SELECT count(*) AS rows, min(created_utc) AS oldest FROM ${table(dir)}`);
    expect(Number(rows)).toBe(expected);
    expect(summary.records).toBe(expected);
    expect(Number(oldest) * 1000).toBeGreaterThanOrEqual(since.getTime());
  });

  it('until: writes only records before it, and a later run without bounds adds the newer ones', async () => {
    const { client, charged } = await open({}, 'spec');
    const params = subforum('until-n200');
    const times: number[] = [];
    for await (const post of client.forum.subforum(params)) times.push(post.created_utc * 1000);
    const until = new Date(times[60]).toISOString();
    const dir = freshDir();
    await toDataset(client.forum.subforum(params), dir, { until });
    const [{ rows, newest }] = await query(`SELECT count(*) AS rows, max(created_utc) AS newest FROM ${table(dir)}`);
    expect(Number(rows)).toBe(times.filter((time) => time < Date.parse(until)).length);
    expect(Number(newest) * 1000).toBeLessThan(Date.parse(until));
    const before = charged();
    await toDataset(client.forum.subforum(params), dir);
    // The mark stands under `until`: the newer posts are bought, and the walk stops once it reaches what is held.
    expect(charged() - before).toBeLessThanOrEqual(Math.ceil(61 / 25) + 1);
    expect(new Set(await datasetIds(dir))).toEqual(await listingIds(client, params));
  });

  it('refuses bounds that are not dates, or a since not before until, before any request', async () => {
    const { client, charged } = await open({}, 'spec');
    const dir = freshDir();
    await expect(toDataset(client.forum.subforum(subforum('bad-bounds')), dir, { since: 'last month' })).rejects.toThrow(/since must be an ISO 8601 date/);
    await expect(toDataset(client.forum.subforum(subforum('bad-bounds')), dir, { since: '2025-10-01', until: '2025-09-01' })).rejects.toThrow(
      /since must be before until/,
    );
    expect(charged()).toBe(0);
  });
});

describe("the operation table's stable keys", () => {
  it.each((OPERATIONS as readonly OperationSpec[]).filter((op) => op.stableKey !== undefined).map((op) => [op.id as OperationId]))(
    '%s: the first field set is carried by every record of a page in both dialects, and tells them apart',
    async (id) => {
      const op = findOperation(id)!;
      const first = { ...op, stableKey: { ...op.stableKey!, fields: op.stableKey!.fields.slice(0, 1) } };
      for (const dialect of DIALECTS) {
        const { client } = await open({}, dialect);
        const keys: (string | undefined)[] = [];
        for await (const record of client.stream(id, SAMPLES[id], { maxPages: 1 })) keys.push(stableKeyOf(first, record, SAMPLES[id]));
        expect(keys.length).toBeGreaterThan(0);
        expect(keys.filter((key) => key === undefined)).toEqual([]);
        expect(new Set(keys).size).toBe(keys.length);
        await sandbox?.close();
        sandbox = undefined;
      }
    },
  );
});

describe('what a page tells a newest-first walk of a dataset that has a mark', () => {
  const op = findOperation('forum/subforum')!;
  const params = { subforum: 'page-evidence-n60', sort: 'new', timeframe: 'week', trim: true } as const;
  const walkParams = { subforum: params.subforum, sort: 'new', timeframe: 'week', trim: 'true' };
  const HOUR = 3_600;

  async function destination(): Promise<{ inspect: (records: object[]) => 'more' | 'stop'; mark: number; newestId: string }> {
    const { client } = await open({}, 'spec');
    const dir = freshDir();
    await toDataset(client.forum.subforum(params), dir);
    const [{ id, created_utc }] = await query(`SELECT id, created_utc FROM ${table(dir)} ORDER BY created_utc DESC LIMIT 1`);
    const held = new DatasetDestination(dir, op, { walks: [walkParams] });
    await held.recover(false);
    return { inspect: (records) => held.inspect({ params: walkParams, done: false }, records), mark: Number(created_utc), newestId: String(id) };
  }

  it('a short page wholly under the mark by more than a day, or held by key, stops the walk', async () => {
    const { inspect, mark, newestId } = await destination();
    expect(inspect([{ id: 'older', created_utc: mark - 30 * HOUR }])).toBe('stop');
    expect(inspect([{ id: newestId, created_utc: mark }, { id: 'older', created_utc: mark - 30 * HOUR }])).toBe('stop');
  });

  it('a page that ends in five held posts stops the walk, whatever new posts stand above them', async () => {
    const { inspect, mark } = await destination();
    const olderPosts = (n: number) => Array.from({ length: n }, (_, index) => ({ id: `older-${index}`, created_utc: mark - (30 + index) * HOUR }));
    const fresh = { id: 'fresh', created_utc: mark + HOUR };
    expect(inspect([fresh, fresh, ...olderPosts(5)])).toBe('stop');
    expect(inspect([fresh, ...olderPosts(4)])).toBe('more');
    expect(inspect([...olderPosts(5), fresh])).toBe('more');
  });

  it('a post under the mark by less than a day whose key the dataset lacks (it appeared late) does not', async () => {
    const { inspect, mark } = await destination();
    expect(inspect([{ id: 'late', created_utc: mark - HOUR }, { id: 'older', created_utc: mark - 30 * HOUR }])).toBe('more');
  });

  it.each([
    ['a garbage time', -1],
    ['a time in the year 9999', 253_402_300_799],
    ['no time at all', undefined],
  ])('a post with %s whose key the dataset lacks does not', async (_what, time) => {
    const { inspect, mark } = await destination();
    expect(inspect([{ id: 'odd', created_utc: time }, { id: 'older', created_utc: mark - 30 * HOUR }])).toBe('more');
  });
});

describe('socialstream sandbox --feed', () => {
  it('turns the feed faults on by name, or all of them, and refuses a word it does not know', () => {
    expect(parseSandboxArgs(['--feed', 'pinned,garbage-time']).faults).toEqual({ pinned: true, garbageTime: true });
    expect(parseSandboxArgs(['--fault-rate', '0.1', '--feed', 'all']).faults).toEqual({
      rate: 0.1,
      pinned: true,
      garbageTime: true,
      futureTime: true,
      outOfOrder: true,
      keyless: true,
    });
    expect(() => parseSandboxArgs(['--feed', 'sticky'])).toThrow(/--feed takes pinned, garbage-time, future-time, out-of-order, keyless or all, got "sticky"/);
    expect(renderHelp(SANDBOX_HELP)).toMatch(/--feed LIST/);
  });
});
