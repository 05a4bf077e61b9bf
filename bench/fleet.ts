/**
 * A dataset written by a fleet (issue 28): thousands of walks, each a dataset writer of its own as a
 * queue worker runs it (`writer: walk-<walkName>`, a run id, `resume`, `handOff`: a walk that finishes
 * while another publishes leaves its pages to that publish), many at once into one dataset, then
 * three scheduled rounds (the sandbox `advance`s every feed, every walk runs again). Locks are the
 * local ones here (the queue's are Redis leases, the same code path otherwise).
 *
 * Reports, against DuckDB's own `COPY … PARTITION_BY (_date)` of the same rows:
 * - part files (the bound: buckets × partitions) and bytes;
 * - `GROUP BY _date` and a point lookup by id, each the median of 5 on a fresh connection;
 * - per-walk setup (`recover`: what a walk reads before its first request) with 20, 200 and all
 *   walks in the dataset, measured on the same 20 walks;
 * - per round: median walk time, median setup, credits (at most the new pages + 1 a walk), CPU;
 * - per fill stage, this process's CPU a walk (walks, publishes and the sandbox): it would grow with
 *   the dataset if publishing rewrote it once per few walks;
 * - after the fill, a schema widening: one post whose `score` is a double, served by a tiny service
 *   of this bench's own, widens the column, and its run rewrites every partition's parts to DOUBLE
 *   (`src/dataset/widen.ts`) before it reports: the seconds that takes.
 *
 * With `s3` (issue 41), the same fill is written twice in one invocation, into a local folder and
 * into a bucket on a local s3rver (started here, behind the test proxy that honours conditional
 * writes, so the walks lock the bucket with store leases as a lone writer does; each walk stages in a
 * working folder of the bench's own), and the bench reports instead, for each:
 * - each fill stage's time, the bucket's against the local disk's (the ratio);
 * - per-walk setup with 20, 200 and all walks in the dataset, as above;
 * - the store's requests a walk by kind (`Storage.requests` of each walk's store), for the fill
 *   and for the probe walks (nothing new: one page each);
 * - the part files, listed from the bucket.
 * Past `STORE_FILL` walks the bucket is not filled by walks: the stage is walked into the local
 * folder only, and the bucket then takes that folder's dataset, object by object (what was in the
 * bucket removed first), so the per-walk setup with 2,000 walks is measured on a bucket holding what
 * 2,000 walks leave. Walking them through s3rver, which answers from this process, went at about 12
 * walks a minute between 330 and 460 walks on two loaded cores: the fill alone would take hours.
 *
 *   npx tsx bench/fleet.ts [walks] [posts a walk] [local|s3]      (default 2000 300 local)
 *   npm run bench -- fleet -- 200 300 s3
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createClient } from '../src/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { toDataset } from '../src/export/index.ts';
import { DatasetDestination } from '../src/dataset/destination.ts';
import { walkName } from '../src/operations/walk-name.ts';
import { openStorage } from '../src/dataset/storage/open.ts';
import type { RequestKind } from '../src/dataset/storage/types.ts';
import { BUCKET, startS3 } from './_s3.ts';
import { LockedError } from '../src/errors.ts';
import { mapAtOnce } from '../src/at-once.ts';

const WALKS = Number(process.argv[2] ?? 2_000);
const POSTS = Number(process.argv[3] ?? 300);
const MODE = process.argv[4] ?? 'local';
if (MODE !== 'local' && MODE !== 's3') throw new Error(`bench/fleet: the mode is local or s3, not ${MODE}`);
const ROUNDS = 3;
/** New posts a feed gets between rounds: one new page of 25 (trim), so a walk buys 2 (the new page, the one reaching its mark). */
const NEW_PER_ROUND = 20;
const AT_ONCE = 64;
const PROBE = 20;
/** The walks the `s3` mode fills the bucket with by walking; past them it copies the local fill (above). */
const STORE_FILL = 200;
/** Walks run again after their publish lost its lease (printed as they happen, counted at the end). */
let rerun = 0;

const setupMs: number[] = [];
type Recover = (this: DatasetDestination, restart: boolean) => Promise<void>;
const recover = Object.getOwnPropertyDescriptor(DatasetDestination.prototype, 'recover')!.value as Recover;
DatasetDestination.prototype.recover = async function (this: DatasetDestination, restart: boolean) {
  const started = performance.now();
  try {
    await recover.call(this, restart);
  } finally {
    setupMs.push(performance.now() - started);
  }
};

const KINDS: readonly RequestKind[] = ['GET', 'PUT', 'LIST', 'HEAD', 'DELETE', 'MULTIPART'];
/** Every walk's store requests, added up as its export closes its store (`Storage.requests` counts since it opened). */
const requested: Record<RequestKind, number> = { GET: 0, PUT: 0, LIST: 0, HEAD: 0, DELETE: 0, MULTIPART: 0 };
const close = Object.getOwnPropertyDescriptor(DatasetDestination.prototype, 'close')!.value as (this: DatasetDestination) => Promise<void>;
DatasetDestination.prototype.close = async function (this: DatasetDestination) {
  await close.call(this);
  for (const kind of KINDS) requested[kind] += this.paths.storage.requests[kind];
};

const KEY = 'sk_live_sandbox_bench_fleet';
const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 100_000_000 }] });
const client = createClient({ apiKey: KEY, baseUrl: sandbox.url, maxConcurrentRequests: AT_ONCE });
const root = mkdtempSync(join(tmpdir(), 'socialstream-bench-fleet-'));
const dir = join(root, 'dataset');
const charged = () => sandbox.requests.charged[KEY] ?? 0;
const params = (index: number) => ({ subforum: `s${index}-n${POSTS}`, sort: 'new' as const, trim: true });

/** Where walks write: a dataset's location, and on a store the working folder its writers stage in. */
interface Target {
  location: string;
  work?: string;
}

/** Runs walks `from`..`to`-1 into `target` as a queue's workers would, `AT_ONCE` at a time; each walk's time and setup, and the store's requests. */
async function walks(
  from: number,
  to: number,
  run: string,
  target: Target = { location: dir },
): Promise<{ walkMs: number[]; setupMs: number[]; credits: number; ms: number; cpuMs: number; requests: Record<RequestKind, number> }> {
  const before = charged();
  const requestsBefore = { ...requested };
  const setups = setupMs.length;
  const walkMs: number[] = [];
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = from;
  const walkOnce = (walk: ReturnType<typeof params>, writer: string) =>
    toDataset(client.forum.subforum(walk), target.location, { writer, runId: `fleet:${run}`, resume: true, handOff: true, work: target.work });
  const lane = async () => {
    while (next < to) {
      const index = next++;
      const walk = params(index);
      const begun = performance.now();
      const writer = `walk-${walkName({ subforum: walk.subforum, sort: walk.sort, trim: 'true' })}`;
      const summary = await walkOnce(walk, writer).catch((error: unknown) => {
        // A publish that lost its lease (its process stalled past it) stops with LOCKED: as a queue re-leases such a walk, it runs again.
        if (!(error instanceof LockedError)) throw error;
        rerun++;
        console.log(`walk ${index} ran again: ${error.message}`);
        return walkOnce(walk, writer);
      });
      if (!summary.complete) throw new Error(`walk ${index} did not complete: ${summary.stoppedBy ?? 'failed'}`);
      walkMs.push(performance.now() - begun);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  const used = process.cpuUsage(cpu);
  const requests = Object.fromEntries(KINDS.map((kind) => [kind, requested[kind] - requestsBefore[kind]])) as Record<RequestKind, number>;
  return { walkMs, setupMs: setupMs.slice(setups), credits: charged() - before, ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000, requests };
}

function files(folder: string, extension: string): { count: number; bytes: number } {
  let count = 0;
  let bytes = 0;
  for (const name of readdirSync(folder, { recursive: true }) as string[]) {
    if (!name.endsWith(extension) || name.startsWith('_dataset')) continue;
    count++;
    bytes += statSync(join(folder, name)).size;
  }
  return { count, bytes };
}

async function timed(sql: string): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const started = performance.now();
    await connection.runAndReadAll(sql);
    times.push(performance.now() - started);
    connection.closeSync();
    instance.closeSync();
  }
  return median(times);
}

try {
  if (MODE === 's3') await onStore();
  else await onDisk();
} finally {
  await client.close();
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
}

/** The fleet into a local folder: fill, setup, widening, rounds, and DuckDB against its own COPY. */
async function onDisk(): Promise<void> {
  console.log(`${WALKS} walks of ${POSTS} posts (subforums by month over five years, 25 posts a page), ${AT_ONCE} walks at once, a writer each`);
  const probes: { walks: number; setup: number }[] = [];
  let filled = 0;
  for (const size of [PROBE, 200, WALKS].filter((size, index, all) => size <= WALKS && all.indexOf(size) === index)) {
    const fill = await walks(filled, size, 'fill');
    console.log(`fill to ${size} walks: ${(fill.ms / 1000).toFixed(1)} s, CPU ${(fill.cpuMs / 1000).toFixed(1)} s (${(fill.cpuMs / (size - filled)).toFixed(0)} ms a walk), ${fill.credits} credits, median walk ${median(fill.walkMs).toFixed(0)} ms`);
    filled = size;
    // The same 20 walks again (nothing new: a page each), with `size` walks in the dataset.
    const probe = await walks(0, PROBE, `probe-${size}`);
    probes.push({ walks: size, setup: median(probe.setupMs) });
  }
  console.log(`per-walk setup (median, the same ${PROBE} walks): ${probes.map((probe) => `${probe.walks} walks ${probe.setup.toFixed(2)} ms`).join(', ')}; ` + `×${(probes[probes.length - 1].setup / probes[0].setup).toFixed(2)} from ${probes[0].walks} to ${probes[probes.length - 1].walks}`);

  const widening = await widen();
  console.log(`schema widening (score: integer → double, one post): the run rewrote ${widening.partitions} partitions to the widened types in ${widening.seconds.toFixed(1)} s`);

  const rounds: { round: number; walk: number; setup: number; credits: number; ms: number; cpuMs: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    sandbox.advance({ records: NEW_PER_ROUND });
    const result = await walks(0, WALKS, `round-${round}`);
    rounds.push({ round, walk: median(result.walkMs), setup: median(result.setupMs), credits: result.credits, ms: result.ms, cpuMs: result.cpuMs });
  }
  console.log('round  median walk ms  median setup ms  credits  (at most new pages + 1 a walk)  round s  CPU s');
  for (const row of rounds) {
    console.log(`${String(row.round).padStart(5)}  ${row.walk.toFixed(0).padStart(13)}  ${row.setup.toFixed(2).padStart(15)}  ${String(row.credits).padStart(7)}  ${String(WALKS * 2).padStart(22)}  ${(row.ms / 1000).toFixed(1).padStart(7)}  ${(row.cpuMs / 1000).toFixed(1).padStart(5)}`);
  }
  console.log(`round 3 median walk ×${(rounds[ROUNDS - 1].walk / rounds[0].walk).toFixed(2)} round 1`);

  const copy = join(root, 'copy');
  const glob = (folder: string) => `read_parquet('${folder}/**/*.parquet', hive_partitioning = true, union_by_name = true)`;
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(`COPY (SELECT * FROM ${glob(join(dir, 'forum/subforum'))}) TO '${copy}' (FORMAT parquet, PARTITION_BY (_date))`);
  const [[someId]] = (await connection.runAndReadAll(`SELECT id FROM ${glob(copy)} ORDER BY id LIMIT 1 OFFSET 777`)).getRows();
  connection.closeSync();
  instance.closeSync();
  const ours = files(join(dir, 'forum/subforum'), '.parquet');
  const theirs = files(copy, '.parquet');
  const partitions = readdirSync(join(dir, 'forum/subforum')).length;
  const group = (folder: string) => `SELECT _date, count(*) FROM ${glob(folder)} GROUP BY _date`;
  const lookup = (folder: string) => `SELECT * FROM ${glob(folder)} WHERE id = '${String(someId)}'`;
  const [groupOurs, groupTheirs, lookupOurs, lookupTheirs] = [await timed(group(join(dir, 'forum/subforum'))), await timed(group(copy)), await timed(lookup(join(dir, 'forum/subforum'))), await timed(lookup(copy))];
  console.log(`part files: ${ours.count} (${partitions} partitions × 1 bucket: bound ${partitions}); DuckDB's COPY PARTITION_BY: ${theirs.count}`);
  console.log(`bytes: ${(ours.bytes / 1e6).toFixed(1)} MB against ${(theirs.bytes / 1e6).toFixed(1)} MB (×${(ours.bytes / theirs.bytes).toFixed(2)})`);
  console.log(`GROUP BY _date: ${groupOurs.toFixed(1)} ms against ${groupTheirs.toFixed(1)} ms (×${(groupOurs / groupTheirs).toFixed(2)})`);
  console.log(`point lookup by id: ${lookupOurs.toFixed(1)} ms against ${lookupTheirs.toFixed(1)} ms (×${(lookupOurs / lookupTheirs).toFixed(2)})`);
}

/**
 * The same fill into a local folder and into a bucket (s3rver behind the conditional-write proxy:
 * store leases), stage by stage in one process, so both meet the same sandbox and the same load.
 */
async function onStore(): Promise<void> {
  const s3 = await startS3();
  // The walks' stores take their endpoint and credentials from the environment, as AWS tools do.
  Object.assign(process.env, s3.proxied);
  const targets = { local: { location: dir }, s3: { location: `s3://${BUCKET}/fleet`, work: join(root, 'work') } };
  const started = performance.now();
  try {
    console.log(`${WALKS} walks of ${POSTS} posts, ${AT_ONCE} walks at once, a writer each: into a local folder, and into s3rver behind the conditional-write proxy (store leases)`);
    const fills = { local: blank(), s3: blank() };
    const probeRequests = { local: blank(), s3: blank() };
    const probes: { walks: number; local: number; s3: number }[] = [];
    let filled = 0;
    let walkedIntoBucket = 0;
    for (const size of [PROBE, 200, WALKS].filter((size, index, all) => size <= WALKS && all.indexOf(size) === index)) {
      const local = await walks(filled, size, 'fill', targets.local);
      add(fills.local, local.requests);
      if (size > STORE_FILL) {
        const copied = await copyDataset(dir, targets.s3.location);
        console.log(
          `fill to ${size} walks: local ${(local.ms / 1000).toFixed(1)} s, ${local.credits} credits, median walk ${median(local.walkMs).toFixed(0)} ms; ` +
            `the bucket took the local dataset instead (${copied.objects} objects, ${(copied.bytes / 1e6).toFixed(1)} MB, in ${(copied.ms / 1000).toFixed(0)} s)`,
        );
      } else {
        const bucket = await walks(filled, size, 'fill', targets.s3);
        if (bucket.credits !== local.credits) throw new Error(`the bucket's fill bought ${bucket.credits} credits, the local one ${local.credits}`);
        add(fills.s3, bucket.requests);
        walkedIntoBucket = size;
        console.log(`fill to ${size} walks: local ${(local.ms / 1000).toFixed(1)} s, s3 ${(bucket.ms / 1000).toFixed(1)} s (×${(bucket.ms / local.ms).toFixed(2)}); ${bucket.credits} credits each; median walk ${median(local.walkMs).toFixed(0)} against ${median(bucket.walkMs).toFixed(0)} ms`);
      }
      filled = size;
      const localProbe = await walks(0, PROBE, `probe-${size}`, targets.local);
      const bucketProbe = await walks(0, PROBE, `probe-${size}`, targets.s3);
      add(probeRequests.local, localProbe.requests);
      add(probeRequests.s3, bucketProbe.requests);
      probes.push({ walks: size, local: median(localProbe.setupMs), s3: median(bucketProbe.setupMs) });
    }
    const setup = (where: 'local' | 's3') => `${where} ${probes.map((probe) => `${probe.walks} walks ${probe[where].toFixed(1)} ms`).join(', ')} (×${(probes[probes.length - 1][where] / probes[0][where]).toFixed(2)})`;
    console.log(`per-walk setup (median, the same ${PROBE} walks): ${setup('local')}; ${setup('s3')}`);
    const probed = PROBE * probes.length;
    console.log(`requests a walk${KINDS.map((kind) => kind.padStart(10)).join('')}`);
    const row = (label: string, counts: Record<RequestKind, number>, per: number) => console.log(`${label.padEnd(15)}${KINDS.map((kind) => (counts[kind] / per).toFixed(1).padStart(10)).join('')}`);
    row('local, fill', fills.local, WALKS);
    row(`s3, fill (${walkedIntoBucket})`, fills.s3, walkedIntoBucket);
    row('local, 1 page', probeRequests.local, probed);
    row('s3, 1 page', probeRequests.s3, probed);
    const bucket = await partsIn(targets.s3.location);
    const local = files(join(dir, 'forum/subforum'), '.parquet');
    console.log(`part files in the bucket: ${bucket.count} in ${bucket.partitions} partitions (${(bucket.bytes / 1e6).toFixed(1)} MB); on the local disk: ${local.count} (${(local.bytes / 1e6).toFixed(1)} MB)`);
    console.log(`the whole comparison: ${((performance.now() - started) / 1000).toFixed(0)} s; walks run again after losing a lease: ${rerun}`);
  } finally {
    await s3.close();
  }
}

/**
 * Makes the dataset at `location` (a bucket's prefix) the local dataset in `folder`: every object
 * under the prefix removed, then every file of the folder stored under its relative name, 32 at once.
 */
async function copyDataset(folder: string, location: string): Promise<{ objects: number; bytes: number; ms: number }> {
  const started = performance.now();
  const storage = await openStorage(location);
  try {
    const old: string[] = [];
    for await (const object of storage.list('')) old.push(object.name);
    await storage.removeAll(old);
    const names = (readdirSync(folder, { recursive: true }) as string[]).filter((name) => statSync(join(folder, name)).isFile()).map((name) => name.split(sep).join('/'));
    let bytes = 0;
    await mapAtOnce(names, 32, async (name) => {
      const body = readFileSync(join(folder, name));
      bytes += body.length;
      await storage.write(name, body);
    });
    return { objects: names.length, bytes, ms: performance.now() - started };
  } finally {
    await storage.close();
  }
}

/** The part files of the dataset at `location`, from one listing of its operation's prefix. */
async function partsIn(location: string): Promise<{ count: number; bytes: number; partitions: number }> {
  const storage = await openStorage(location);
  try {
    let count = 0;
    let bytes = 0;
    const partitions = new Set<string>();
    for await (const object of storage.list('forum/subforum/')) {
      if (!object.name.endsWith('.parquet')) continue;
      count++;
      bytes += object.size;
      partitions.add(object.name.split('/')[2]);
    }
    return { count, bytes, partitions: partitions.size };
  } finally {
    await storage.close();
  }
}

function blank(): Record<RequestKind, number> {
  return { GET: 0, PUT: 0, LIST: 0, HEAD: 0, DELETE: 0, MULTIPART: 0 };
}

function add(total: Record<RequestKind, number>, counts: Record<RequestKind, number>): void {
  for (const kind of KINDS) total[kind] += counts[kind];
}

/** One post whose `score` is a double, published by a run of its own: the widening of a column every part holds. */
async function widen(): Promise<{ partitions: number; seconds: number }> {
  const post = { id: 'widened-score', name: 't3_widened', title: 'a score past the integers', created_utc: Date.UTC(2024, 5, 1) / 1000, score: 0.5 };
  const server = createServer((_, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ success: true, data: { posts: [post] } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const own = createClient({ apiKey: 'sk_test_bench_widening', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  try {
    const summary = await toDataset(own.forum.subforum({ subforum: 'widening' }), dir, { writer: 'widening' });
    return summary.dataset?.widening ?? { partitions: 0, seconds: 0 };
  } finally {
    await own.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
