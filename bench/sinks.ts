/**
 * Sink throughput and memory: N subforum-post-like records (nested author, arrays) generated in
 * process, written to each format in its own child process so each peak RSS is that format's alone.
 * The children write through the compiled package (`dist/`, which `npm run bench` builds first), as
 * an installed socialstream runs: from the TypeScript source, the loader's copy in each thread (the
 * Parquet sink's worker too) added about 50 MB to the sink's peak RSS.
 * Baselines run in the same invocation: plain `JSON.stringify` + write stream for NDJSON, and DuckDB's
 * `COPY (SELECT * FROM read_json(…)) TO … (FORMAT parquet)` for Parquet (both run three times; the
 * speed ratio compares the medians).
 *
 * Parquet is measured in both layouts (`nested`, the default, and `flat`), and beside them the
 * "shred floor" (`_parquet-floor.ts`): generating the same records and shredding them by hand into
 * the row group's columns, the least the writer's thread could pay, so the ratio it reaches against
 * DuckDB is the best a writer on one JS thread could (the encoding runs on a worker meanwhile).
 *
 * Then Parquet on real sandbox records: 100,000 `forum/subforum` posts and 20,000
 * `shortvideo/videos` (nested objects and lists) walked through the client into NDJSON, converted
 * both by `toParquet` in each layout (the file read by `fromNdjson`, as the export engine reads its
 * spool into a Parquet file) and by DuckDB's `COPY` from that file, parsing included on both sides
 * (median of three runs each): file sizes (both snappy, each tool's default), speed, and
 * which columns carry statistics and dictionaries, as DuckDB's `parquet_metadata()` reads them.
 *
 * Then the cost of a file's fix-up (`sinks/parquet-widening.ts`): the same posts, once with a sample
 * that types `upvote_ratio` right (its first record holds a fraction) and once with a sample that
 * types it BIGINT (the first 1,000 records hold 1, the fractions come after), so the file is
 * re-encoded at close; time ratio and peak RSS, in both layouts.
 *
 * Last, publishing into a nested dataset over 25 runs of an object keyed by date (`_map-publish.ts`).
 *
 * `--parquet` measures only the Parquet writer against DuckDB's COPY (generated records, posts,
 * short videos), for comparing one change of the writer quickly; `fix-up` only the fix-up's cost.
 *
 *   npx tsx bench/sinks.ts [records] [--parquet]     (default 1,000,000)
 *   npx tsx bench/sinks.ts [records] fix-up          (only the fix-up's cost)
 *   npm run bench -- sinks -- 200000 --parquet
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { toNdjson } from '../sinks/index.ts';
import { createClient } from '../src/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { benchMapPublish } from './_map-publish.ts';
import { shredFloor } from './_parquet-floor.ts';
import { peakRssMb } from './_peak-rss.ts';

/** How many sandbox subforum posts the Parquet size comparison walks (issue 13's figure). */
const SANDBOX_POSTS = 100_000;
/** How many sandbox short videos (nested objects and lists) it walks. */
const SANDBOX_VIDEOS = 20_000;

const WORDS = 'data stream record page cursor river mountain coffee signal market launch review weekly guide'.split(' ');

/** Word `k` of post `i`. Not a closure inside `post`: tsx names every closure at each call, which made generating a fifth of the Parquet run. */
function word(i: number, k: number): string {
  return WORDS[(i * 7 + k * 13) % WORDS.length];
}

/** A subforum post of the shape API reference 2.4 describes, deterministic in `i`. */
function post(i: number): Record<string, unknown> {
  const created = 1_700_000_000 + i * 37;
  const base36 = i.toString(36);
  return {
    id: `p${base36}`,
    name: `t3_p${base36}`,
    title: `${word(i, 1)} ${word(i, 2)} ${word(i, 3)}, "${word(i, 4)}" ${i}`,
    selftext: i % 3 === 0 ? '' : `${word(i, 5)} ${word(i, 6)}\n${word(i, 7)} ${word(i, 8)} ${word(i, 9)}`,
    author: { name: `user_${i % 5000}`, fullname: `t2_${(i % 5000).toString(36)}`, flair: i % 4 === 0 ? null : word(i, 10) },
    subforum: 'typescript',
    subforum_id: 't5_2qh1i',
    url: `https://forum.example/r/typescript/comments/p${base36}/`,
    permalink: `/r/typescript/comments/p${base36}/`,
    score: (i * 31) % 10_000,
    ups: (i * 31) % 10_000,
    downs: 0,
    num_comments: (i * 17) % 500,
    upvote_ratio: ((i * 13) % 100) / 100,
    created_utc: created,
    created_at_iso: new Date(created * 1000).toISOString(),
    is_video: i % 10 === 0,
    over_18: false,
    stickied: i % 1000 === 0,
    media: i % 10 === 0 ? { type: 'video', duration: i % 300, url: `https://video.example/${i}` } : null,
    awardings: i % 5 === 0 ? [{ name: 'helpful', count: 1 + (i % 3) }] : [],
    tags: [word(i, 11), word(i, 12)],
  };
}

function* posts(count: number): Generator<Record<string, unknown>> {
  for (let i = 0; i < count; i++) yield post(i);
}

/**
 * The posts with `upvote_ratio` 1 in the first `DEFAULT_SAMPLE_SIZE` records, so a sample of them
 * types it BIGINT and the fractions after it go to `_extra` until the fix-up; `sampleRight`: the
 * same, but the first record's ratio is 0.5, so the sample types it DOUBLE and nothing is re-encoded.
 */
function* latePosts(count: number, sampleRight: boolean): Generator<Record<string, unknown>> {
  for (let i = 0; i < count; i++) {
    const record = post(i);
    if (i === 0 && sampleRight) record.upvote_ratio = 0.5;
    else if (i < SAMPLE_SIZE) record.upvote_ratio = 1;
    yield record;
  }
}

/** The sinks' default sample (`rows.ts` `DEFAULT_SAMPLE_SIZE`). */
const SAMPLE_SIZE = 1000;

async function plainNdjson(count: number, path: string): Promise<void> {
  const out = createWriteStream(path);
  for (const record of posts(count)) {
    if (!out.write(JSON.stringify(record) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
}

/** The sinks as the built package has them. */
async function builtSinks(): Promise<typeof import('../sinks/index.ts')> {
  const built = new URL('../dist/sinks/index.js', import.meta.url);
  try {
    return (await import(built.href)) as typeof import('../sinks/index.ts');
  } catch (error) {
    throw new Error(`bench/sinks measures the built package: run \`npm run build\` first (${String(error)})`, { cause: error });
  }
}

/** Runs one measurement in this process and prints `seconds peakRssMb` for the parent. */
async function child(kind: string, count: number, path: string): Promise<void> {
  const built = await builtSinks();
  const start = process.hrtime.bigint();
  if (kind === 'plain-ndjson') await plainNdjson(count, path);
  else if (kind === 'ndjson') await built.toNdjson(posts(count), path);
  else if (kind === 'csv') await built.toCsv(posts(count), path);
  else if (kind === 'parquet') await built.toParquet(posts(count), path);
  else if (kind === 'parquet-flat') await built.toParquet(posts(count), path, { layout: 'flat' });
  else if (kind === 'parquet-from-ndjson') await built.toParquet(built.fromNdjson(`${path}.ndjson`), path);
  else if (kind === 'parquet-flat-from-ndjson') await built.toParquet(built.fromNdjson(`${path}.ndjson`), path, { layout: 'flat' });
  else if (kind.startsWith('fix-up-')) {
    // `fix-up-<layout>-<right|wrong>`: the sample of `latePosts` right or wrong in one column.
    const [, , layout, sample] = kind.split('-') as [string, string, 'nested' | 'flat', 'right' | 'wrong'];
    await built.toParquet(latePosts(count, sample === 'right'), path, { layout });
  } else if (kind === 'generate') for (const record of posts(count)) void record;
  else if (kind === 'shred-floor') await shredFloor(posts(count));
  else throw new TypeError(`unknown measurement ${kind}`);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  process.stdout.write(`${seconds} ${peakRssMb()}\n`);
}

/** One child's run: its seconds and peak RSS. */
interface Measured {
  seconds: number;
  rssMb: number;
}

function measure(kind: string, count: number, path: string): Measured {
  const self = fileURLToPath(import.meta.url);
  const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--child', kind, String(count), path], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const [seconds, rssMb] = out.trim().split(' ').map(Number);
  return { seconds, rssMb };
}

async function duckdbCopy(ndjson: string, parquet: string): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const start = process.hrtime.bigint();
  await connection.run(`COPY (SELECT * FROM read_json('${ndjson}')) TO '${parquet}' (FORMAT parquet)`);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  connection.closeSync();
  return seconds;
}

/** Per file, as DuckDB reads its metadata: leaf columns, and how many have min/max statistics and dictionary pages in every row group. */
async function parquetSummary(path: string): Promise<{ columns: number; statistics: number; dictionary: number }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const reader = await connection.runAndReadAll(`
    SELECT count(*) AS columns, count(*) FILTER (WHERE statistics) AS statistics, count(*) FILTER (WHERE dictionary) AS dictionary
    FROM (
      SELECT path_in_schema,
        bool_and(stats_min_value IS NOT NULL OR stats_null_count = row_group_num_rows) AS statistics,
        bool_and(encodings LIKE '%DICTIONARY%') AS dictionary
      FROM parquet_metadata('${path}') GROUP BY path_in_schema
    )`);
  const [row] = reader.getRowObjects();
  connection.closeSync();
  return { columns: Number(row.columns), statistics: Number(row.statistics), dictionary: Number(row.dictionary) };
}

/** Walks `count` records of one sandbox operation through the client into an NDJSON file. */
async function sandboxRecords(walk: SandboxWalk, count: number, path: string): Promise<void> {
  const sandbox = await startSandbox({ port: 0, slowMs: 0 });
  try {
    const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    await toNdjson(walk(client, count), path);
  } finally {
    await sandbox.close();
  }
}

type SandboxWalk = (client: ReturnType<typeof createClient>, count: number) => AsyncIterable<unknown>;

/** toParquet in both layouts against DuckDB's COPY on the same sandbox records: size, speed, statistics, dictionaries. */
async function benchSandboxParquet(dir: string, name: string, count: number, walk: SandboxWalk): Promise<void> {
  const slug = name.replace(/[^a-z]+/g, '-');
  const ours = join(dir, `${slug}.parquet`);
  const flat = join(dir, `${slug}-flat.parquet`);
  const theirs = join(dir, `${slug}-duck.parquet`);
  await sandboxRecords(walk, count, `${ours}.ndjson`);
  await copyFile(`${ours}.ndjson`, `${flat}.ndjson`);
  const label = `${count.toLocaleString('en-US')} sandbox ${name}`;
  console.log(`\nParquet from ${label} (NDJSON ${mb(statSync(`${ours}.ndjson`).size)}), snappy both, median of ${RATIO_RUNS} runs each`);
  const { nested, flat: flatRun, duck, ratios } = await ratioRounds(
    () => measure('parquet-from-ndjson', count, ours),
    () => measure('parquet-flat-from-ndjson', count, flat),
    () => duckdbCopy(`${ours}.ndjson`, theirs),
  );
  const rate = (seconds: number): string => `${Math.round(count / seconds).toLocaleString('en-US')} records/s`;
  const rows = [
    ['toParquet nested', ours, nested.seconds, nested.rssMb],
    ['toParquet flat', flat, flatRun.seconds, flatRun.rssMb],
    ['DuckDB COPY', theirs, duck, undefined],
  ] as const;
  for (const [what, path, seconds, rssMb] of rows) {
    const summary = await parquetSummary(path);
    console.log(
      `${what.padEnd(24)} ${seconds.toFixed(2).padStart(7)} s  ${rate(seconds).padStart(20)}  ${mb(statSync(path).size).padStart(9)}  ` +
        `statistics on ${summary.statistics}/${summary.columns} leaf columns, dictionary pages on ${summary.dictionary}` +
        (rssMb === undefined ? '' : `, peak RSS ${rssMb.toFixed(0)} MB`),
    );
  }
  console.log(`size toParquet nested / flat / DuckDB: ${[ours, flat, theirs].map((path) => mb(statSync(path).size)).join(' / ')}`);
  printRatios(ratios);
}

/**
 * What a file's fix-up costs: the same posts written with a sample that types every column right,
 * and with one that types `upvote_ratio` BIGINT (re-encoded at close), medians of three runs each.
 */
function benchFixUp(dir: string, count: number): void {
  console.log(`\nParquet fix-up: ${count.toLocaleString('en-US')} posts, upvote_ratio typed right by the sample vs BIGINT by it (re-encoded at close), median of ${RATIO_RUNS} runs`);
  for (const layout of ['nested', 'flat'] as const) {
    const right = medianOf(RATIO_RUNS, () => measure(`fix-up-${layout}-right`, count, join(dir, `fix-${layout}-right.parquet`)), (m) => m.seconds);
    const wrong = medianOf(RATIO_RUNS, () => measure(`fix-up-${layout}-wrong`, count, join(dir, `fix-${layout}-wrong.parquet`)), (m) => m.seconds);
    console.log(
      `${layout.padEnd(7)} sample right ${right.seconds.toFixed(2)} s (peak RSS ${right.rssMb.toFixed(0)} MB), ` +
        `wrong ${wrong.seconds.toFixed(2)} s (peak RSS ${wrong.rssMb.toFixed(0)} MB): fix-up ${(wrong.seconds / right.seconds).toFixed(2)}x the time`,
    );
  }
}

/** Rounds of toParquet (both layouts) and DuckDB's COPY behind the speed ratio. */
const RATIO_RUNS = 3;

/** Each round's DuckDB time over each layout's (the speed ratio, higher is faster). */
interface Ratios {
  nested: number[];
  flat: number[];
}

/**
 * `RATIO_RUNS` rounds, each one run of nested, flat and DuckDB in turn, so a busy spell of a shared
 * machine falls on all three sides of a round rather than on every run of one side; the ratio is
 * the median of the rounds' ratios. Also the median run of each side, for its time and peak RSS.
 */
async function ratioRounds(
  nested: () => Measured,
  flat: () => Measured,
  duck: () => Promise<number>,
): Promise<{ nested: Measured; flat: Measured; duck: number; ratios: Ratios }> {
  const rounds: Array<{ nested: Measured; flat: Measured; duck: number }> = [];
  for (let run = 0; run < RATIO_RUNS; run++) rounds.push({ nested: nested(), flat: flat(), duck: await duck() });
  return {
    nested: medianOf(RATIO_RUNS, (run) => rounds[run].nested, (m) => m.seconds),
    flat: medianOf(RATIO_RUNS, (run) => rounds[run].flat, (m) => m.seconds),
    duck: medianOf(RATIO_RUNS, (run) => rounds[run].duck, (seconds) => seconds),
    ratios: { nested: rounds.map((round) => round.duck / round.nested.seconds), flat: rounds.map((round) => round.duck / round.flat.seconds) },
  };
}

function printRatios(ratios: Ratios): void {
  for (const layout of ['nested', 'flat'] as const) {
    const each = ratios[layout];
    const median = medianOf(each.length, (run) => each[run], (ratio) => ratio);
    const rounds = each.map((ratio) => ratio.toFixed(2)).join(', ');
    console.log(`ratio toParquet ${layout} / DuckDB COPY: ${median.toFixed(2)}x, median of rounds ${rounds} (target ≥ 0.5x)`.replace(`${layout} /`, `${layout.padEnd(6)} /`));
  }
}

/** The run of median `key` among `runs` runs of `run`. */
function medianOf<T>(runs: number, run: (index: number) => T, key: (result: T) => number): T {
  const results = Array.from({ length: runs }, (_, index) => run(index)).sort((a, b) => key(a) - key(b));
  return results[Math.floor(runs / 2)];
}

/** Plain NDJSON, and the NDJSON and CSV sinks: speed and peak RSS, against `ndjson` (toNdjson's run). */
function benchTextSinks(dir: string, count: number, ndjson: Measured, line: (label: string, m: Measured) => void): void {
  const plain = measure('plain-ndjson', count, join(dir, 'plain.ndjson'));
  line('plain JSON.stringify', plain);
  line('toNdjson', ndjson);
  const csv = measure('csv', count, join(dir, 'out.csv'));
  line('toCsv', csv);
  console.log(`ratio toNdjson / plain JSON.stringify: ${(plain.seconds / ndjson.seconds).toFixed(2)}x (target ≥ 0.8x)`);
  console.log(`peak RSS, NDJSON / CSV: ${ndjson.rssMb.toFixed(0)} / ${csv.rssMb.toFixed(0)} MB (target < 300 MB)`);
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`;
}

/** Runs every measurement for `count` records (only the Parquet ones with `parquetOnly`) and prints one plain line per result. */
export async function benchSinks(count = 1_000_000, parquetOnly = false): Promise<void> {
  if (!Number.isSafeInteger(count) || count < 1) throw new TypeError(`records must be a positive integer, got ${count}`);
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-bench-sinks-'));
  const rate = (seconds: number): string => `${Math.round(count / seconds).toLocaleString('en-US')} records/s`;
  const line = (label: string, m: Measured): void =>
    console.log(`${label.padEnd(24)} ${m.seconds.toFixed(2).padStart(7)} s  ${rate(m.seconds).padStart(20)}  peak RSS ${m.rssMb.toFixed(0)} MB`);
  try {
    console.log(`sinks: ${count.toLocaleString('en-US')} subforum-post-like records, each run in its own child process`);
    // DuckDB's side reads the records from toNdjson's file.
    const ndjson = measure('ndjson', count, join(dir, 'out.ndjson'));
    if (!parquetOnly) benchTextSinks(dir, count, ndjson, line);
    // The speed ratio against DuckDB is the figure with a target: take the median of three runs of
    // each side, since one run of either can land on a busy moment of the machine.
    const { nested: parquet, flat: parquetFlat, duck, ratios } = await ratioRounds(
      () => measure('parquet', count, join(dir, 'out.parquet')),
      () => measure('parquet-flat', count, join(dir, 'flat.parquet')),
      () => duckdbCopy(join(dir, 'out.ndjson'), join(dir, 'duck.parquet')),
    );
    line(`toParquet nested (median)`, parquet);
    line(`toParquet flat (median)`, parquetFlat);
    console.log(`${`DuckDB COPY (median of ${RATIO_RUNS})`.padEnd(24)} ${duck.toFixed(2).padStart(7)} s  ${rate(duck).padStart(20)}`);
    printRatios(ratios);
    // The best a writer on one JS thread could do here: generating the records and shredding them by hand (`_parquet-floor.ts`).
    const generated = measure('generate', count, join(dir, 'none'));
    const floor = measure('shred-floor', count, join(dir, 'none'));
    line('generate only', generated);
    line('shred floor', floor);
    console.log(`ratio DuckDB COPY / shred floor: ${(duck / floor.seconds).toFixed(2)}x (the most toParquet could reach on one thread: generating ${generated.seconds.toFixed(2)} s, shredding by hand ${(floor.seconds - generated.seconds).toFixed(2)} s)`);
    const sizes = [join(dir, 'out.parquet'), join(dir, 'flat.parquet'), join(dir, 'duck.parquet')].map((file) => mb(statSync(file).size));
    console.log(`Parquet size nested / flat / DuckDB:   ${sizes.join(' / ')}`);
    console.log(`peak RSS, Parquet nested / flat: ${parquet.rssMb.toFixed(0)} / ${parquetFlat.rssMb.toFixed(0)} MB (target < 300 MB)`);
    await benchSandboxParquet(dir, 'forum/subforum posts', SANDBOX_POSTS, (client, n) => client.forum.subforum({ subforum: `typescript-n${n}` }));
    await benchSandboxParquet(dir, 'shortvideo/videos', SANDBOX_VIDEOS, (client, n) => client.shortvideo.videos({ handle: `creator-n${n}` }));
    if (!parquetOnly) {
      benchFixUp(dir, count);
      await benchMapPublish(25, 'nested');
      await benchMapPublish(25, 'flat');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `npx tsx bench/sinks.ts N fix-up`: only the fix-up's cost. */
function benchFixUpOnly(count: number): void {
  if (!Number.isSafeInteger(count) || count < 1) throw new TypeError(`records must be a positive integer, got ${count}`);
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-bench-fix-up-'));
  try {
    benchFixUp(dir, count);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run only when executed as a script (`npx tsx bench/sinks.ts`), not when imported by bench/index.ts.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--child') await child(process.argv[3], Number(process.argv[4]), process.argv[5]);
  else {
    const words = process.argv.slice(2);
    const records = words.find((word) => word !== '--parquet' && word !== 'fix-up');
    const count = records === undefined ? undefined : Number(records);
    if (words.includes('fix-up')) benchFixUpOnly(count ?? 100_000);
    else await benchSinks(count, words.includes('--parquet'));
  }
}
