/**
 * Group commit with hand-off (issue 28, items 1 and 4; docs/datasets.md "Group commit"): a writer that
 * finishes while another holds the publish lock leaves its pages to that publish and returns; they
 * are durable, published by whoever publishes next, and never bought again. The publish lock is
 * held here as a live writer holds it (the lock folder, signed by this process).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { toDataset, type ExportLocks } from '../../src/export/index.ts';
import { PASS_COMMITS } from '../../src/dataset/commit.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

const KEY = 'sk_live_sandbox_group_commit';
let sandbox: Sandbox;
let client: Client;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 100_000 }] });
  client = createClient({ apiKey: KEY, baseUrl: sandbox.url });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `commit-${++counter}`);
const META = '_dataset/forum__subforum';
const charged = () => sandbox.requests.charged[KEY] ?? 0;

/** Holds the publish lock as a live writer of this machine does, until the returned function lets go. */
function holdPublishLock(dir: string): () => void {
  const lock = join(dir, META, 'lock');
  mkdirSync(lock, { recursive: true });
  writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname() }));
  return () => rmSync(lock, { recursive: true, force: true });
}

function walk(dir: string, subforum: string, options: { handOff?: boolean; runId?: string } = {}) {
  return toDataset(client.forum.subforum({ subforum, sort: 'new' }), dir, { writer: `walk-${subforum}`, runId: options.runId ?? 'run-1', resume: true, handOff: options.handOff ?? false });
}

async function counts(dir: string): Promise<{ rows: number; keys: number }> {
  const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true)`);
  return { rows: rows as number, keys: keys as number };
}

describe('group commit with hand-off', () => {
  it('leaves a finished walk to the publish in progress, durable, and the next publish takes it with its own', async () => {
    const dir = freshDir();
    await walk(dir, 'seed-n10');
    const release = holdPublishLock(dir);
    const handed = await walk(dir, 'gca-n60', { handOff: true });
    expect(handed.complete).toBe(true);
    expect(handed.dataset).toBeUndefined();
    expect(readdirSync(join(dir, META, 'commits'))).toEqual(['walk-gca-n60.json']);
    expect(await counts(dir)).toEqual({ rows: 10, keys: 10 });
    release();
    // Another writer's publish takes every commit waiting.
    const other = await walk(dir, 'gcb-n40');
    expect(other.dataset?.added).toBe(40);
    expect(await counts(dir)).toEqual({ rows: 110, keys: 110 });
    expect(existsSync(join(dir, META, 'commits', 'walk-gca-n60.json'))).toBe(false);
  });

  it('publishes a walk’s own handed-off pages when the walk opens again, and buys nothing for a run it finished', async () => {
    const dir = freshDir();
    const release = holdPublishLock(dir);
    await walk(dir, 'gcc-n75', { handOff: true });
    expect(existsSync(join(dir, 'forum'))).toBe(false);
    release();
    const before = charged();
    const again = await walk(dir, 'gcc-n75', { handOff: true });
    expect(again.complete).toBe(true);
    expect(charged()).toBe(before);
    expect(await counts(dir)).toEqual({ rows: 75, keys: 75 });
    // Published while the walk's new run opens, before it has settled its own: still the dataset's default layout.
    expect(JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')).partitioning).toEqual({ by: 'month', column: '_date' });
    expect(readdirSync(join(dir, 'forum/subforum')).every((folder) => /^_date=\d{4}-\d{2}$/.test(folder))).toBe(true);
  });

  it('takes the next run of a handed-off walk from the mark its pages set: one page, not the walk again', async () => {
    const dir = freshDir();
    const release = holdPublishLock(dir);
    await walk(dir, 'gcd-n200', { handOff: true });
    release();
    const before = charged();
    const next = await walk(dir, 'gcd-n200', { runId: 'run-2' });
    expect(next.complete).toBe(true);
    expect(charged() - before).toBe(1);
    expect(await counts(dir)).toEqual({ rows: 200, keys: 200 });
  });

  it(`takes at most ${PASS_COMMITS} commits a pass: the rest go in the next, and every record once`, async () => {
    const dir = freshDir();
    const release = holdPublishLock(dir);
    const waiting = PASS_COMMITS + 6;
    for (let n = 0; n < waiting; n++) await walk(dir, `gcp${n}-n3`, { handOff: true });
    release();
    // Watches the passes form: each one's claim names the commits it took.
    const publishing = join(dir, META, 'publishing');
    const claims = new Map<string, number>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const pass of existsSync(publishing) ? readdirSync(publishing) : []) {
          try {
            const claim = JSON.parse(readFileSync(join(publishing, pass, 'claim.json'), 'utf8')) as { commits: unknown[] };
            claims.set(pass, Math.max(claims.get(pass) ?? 0, claim.commits.length));
          } catch {
            // Not written yet, or gone: the next look reads it.
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const leader = await walk(dir, 'gcp-leader-n3');
    watching = false;
    await watch;
    expect(leader.dataset?.added).toBe(3);
    expect(await counts(dir)).toEqual({ rows: 3 * (waiting + 1), keys: 3 * (waiting + 1) });
    expect(claims.size).toBeGreaterThanOrEqual(2);
    expect(Math.max(...claims.values())).toBeLessThanOrEqual(PASS_COMMITS);
    expect(readdirSync(join(dir, META, 'commits'))).toEqual([]);
  });

  it('keeps the receipts of handed-off walks out of commits/, which every walk lists, and reads one an older version left there', async () => {
    const dir = freshDir();
    const release = holdPublishLock(dir);
    await walk(dir, 'gcl-n20', { handOff: true });
    release();
    await walk(dir, 'gcm-n10');
    // gcl's receipt waits for gcl's next run, beside no commit.
    expect(readdirSync(join(dir, META, 'commits'))).toEqual([]);
    const receipt = JSON.parse(readFileSync(join(dir, META, 'receipts', 'walk-gcl-n20.json'), 'utf8')) as { changes: { added: number } };
    expect(receipt.changes.added).toBe(20);
    // A writer waits on its commit, and a pass of an older version takes it, leaving its receipt where that version did.
    const held = holdPublishLock(dir);
    const waiting = walk(dir, 'gcn-n5');
    const commit = join(dir, META, 'commits', 'walk-gcn-n5.json');
    while (!existsSync(commit)) await new Promise((resolve) => setTimeout(resolve, 10));
    writeFileSync(join(dir, META, 'commits', 'walk-gcn-n5.done.json'), JSON.stringify({ ...receipt, changes: { ...receipt.changes, added: 7, writer: 'walk-gcn-n5' } }));
    rmSync(commit);
    const summary = await waiting;
    held();
    expect(summary.dataset?.added).toBe(7);
    expect(existsSync(join(dir, META, 'commits', 'walk-gcn-n5.done.json'))).toBe(false);
  });

  it('waits for the publish instead without handOff: its summary says what it changed', async () => {
    const dir = freshDir();
    const release = holdPublishLock(dir);
    let returned = false;
    const waiting = walk(dir, 'gce-n30').finally(() => (returned = true));
    // Its commit is left, and it waits on the lock rather than return.
    while (!existsSync(join(dir, META, 'commits', 'walk-gce-n30.json'))) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(returned).toBe(false);
    release();
    const summary = await waiting;
    expect(summary.dataset?.added).toBe(30);
    expect(await counts(dir)).toEqual({ rows: 30, keys: 30 });
  });
});

describe('a publish that lost its lock', () => {
  /** Locks as a queue's leases behave, with a fence that says whether the publish lock is still held. */
  const leases = (held: boolean): ExportLocks => ({
    output: async () => ({ release: async () => undefined }),
    publish: (_path, fn) => fn(async () => held),
    tryPublish: async (_path, fn) => ({ value: await fn(async () => held) }),
  });

  it('publishes nothing once its lease is gone (another worker took the lock), and its pages are published on resume, bought once', async () => {
    const dir = freshDir();
    const run = (held: boolean) =>
      toDataset(client.forum.subforum({ subforum: 'gcf-n50', sort: 'new' }), dir, { writer: 'walk-gcf', runId: 'run-1', resume: true, locks: leases(held) });
    const before = charged();
    await expect(run(false)).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining('lost its lease') });
    const bought = charged() - before;
    expect(bought).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'forum'))).toBe(false);
    expect(existsSync(join(dir, META, 'publish.json'))).toBe(false);
    expect(readdirSync(join(dir, META, 'publishing')).length).toBe(0);
    const resumed = await run(true);
    expect(resumed.complete).toBe(true);
    expect(resumed.dataset?.added).toBe(50);
    expect(charged() - before).toBe(bought);
    expect(await counts(dir)).toEqual({ rows: 50, keys: 50 });
  });
});

describe('publishes over different partitions', () => {
  /** Holds a partition's lock as a live publish of this machine does, until the returned function lets go. */
  function holdPartitionLock(dir: string, partition: string): () => void {
    const lock = join(dir, META, 'locks', `partition-${partition}`);
    mkdirSync(lock, { recursive: true });
    writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname() }));
    return () => rmSync(lock, { recursive: true, force: true });
  }
  const partitions = (dir: string) => readdirSync(join(dir, 'forum/subforum')).map((name) => name.replace('_date=', ''));

  it('go at once: a walk publishes while another publish holds a partition it does not touch, and waits for one it touches', async () => {
    const dir = freshDir();
    const early = { until: '2023-01-01' };
    const late = { since: '2023-01-01' };
    const walkIn = (subforum: string, bounds: { since?: string; until?: string }) =>
      toDataset(client.forum.subforum({ subforum, sort: 'new' }), dir, { writer: `walk-${subforum}-${bounds.since ?? 'to'}-${bounds.until ?? 'now'}`, runId: 'run-1', resume: true, ...bounds });
    await walkIn('gcp-n60', early);
    const held = partitions(dir);
    expect(held.every((partition) => partition < '2023-01')).toBe(true);
    // Another publish is rewriting the parts of every partition before 2023 (this test holds their locks as it would).
    const releases = held.map((partition) => holdPartitionLock(dir, partition));
    const other = await walkIn('gcp-n60', late);
    expect(other.dataset?.added).toBeGreaterThan(0);
    expect(partitions(dir).filter((partition) => partition >= '2023-01').length).toBeGreaterThan(0);

    // A walk whose records fall before 2023 waits for those partitions, then publishes.
    let returned = false;
    const waiting = walkIn('gcq-n60', early).finally(() => (returned = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(returned).toBe(false);
    for (const release of releases) release();
    expect((await waiting).dataset?.added).toBeGreaterThan(0);
    const [{ rows, keys }] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS keys FROM read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true)`);
    expect(rows).toBe(keys);
    expect(readdirSync(join(dir, META, 'publishing'))).toEqual([]);
  });

  it('a pass that died after it claimed commits is dropped by the next pass formed, which takes its commits', async () => {
    const dir = freshDir();
    await walk(dir, 'seed-n10');
    const release = holdPublishLock(dir);
    await walk(dir, 'gcr-n40', { handOff: true });
    const commit = JSON.parse(readFileSync(join(dir, META, 'commits', 'walk-gcr-n40.json'), 'utf8')) as { id: string };
    // What a pass killed -9 while it formed leaves: its folder with its claim, and its lock signed by a process now gone.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    mkdirSync(join(dir, META, 'publishing', 'dead-pass'), { recursive: true });
    writeFileSync(join(dir, META, 'publishing', 'dead-pass', 'claim.json'), JSON.stringify({ commits: [{ writer: 'walk-gcr-n40', id: commit.id }] }));
    mkdirSync(join(dir, META, 'locks', 'pass-dead-pass'), { recursive: true });
    writeFileSync(join(dir, META, 'locks', 'pass-dead-pass', 'owner.json'), JSON.stringify({ pid: dead, host: hostname() }));
    release();
    const other = await walk(dir, 'gcs-n30');
    expect(other.dataset?.added).toBe(30);
    expect(await counts(dir)).toEqual({ rows: 80, keys: 80 });
    expect(existsSync(join(dir, META, 'commits', 'walk-gcr-n40.json'))).toBe(false);
    expect(readdirSync(join(dir, META, 'publishing'))).toEqual([]);
  });
});

describe('many walks of one process publishing into one dataset at once', () => {
  it.each([
    ['handing off, as a queue worker’s walks do', true],
    ['waiting for their own pages', false],
  ])('%s, publish every pass they form, their own and each other’s, leaving no pass or lock behind', async (_, handOff) => {
    const dir = freshDir();
    const names = Array.from({ length: 8 }, (_, index) => `gcm${index}${handOff ? 'h' : 'w'}-n${40 + index * 10}`);
    // A leader goes on forming passes for the walks that finish meanwhile.
    const summaries = await Promise.all(names.map((subforum) => walk(dir, subforum, { handOff })));
    expect(summaries.every((summary) => summary.complete)).toBe(true);
    // A walk returns once nothing it could take waits, or another leads: when the last returns, every pass is published.
    const total = names.reduce((sum, name) => sum + Number(name.split('-n')[1]), 0);
    expect(await counts(dir)).toEqual({ rows: total, keys: total });
    // Each walk that waited is told what its own pages added, whichever pass took them.
    if (!handOff) expect(summaries.map((summary) => summary.dataset?.added)).toEqual(names.map((name) => Number(name.split('-n')[1])));
    expect(readdirSync(join(dir, META, 'publishing'))).toEqual([]);
    expect(readdirSync(join(dir, META, 'commits'))).toEqual([]);
    expect(existsSync(join(dir, META, 'locks')) ? readdirSync(join(dir, META, 'locks')) : []).toEqual([]);
  });
});
