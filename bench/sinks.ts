/**
 * Sink throughput and memory: N subforum-post-like records (nested author, arrays) generated in
 * process, written to each format in its own child process so each peak RSS is that format's alone.
 * Baselines run in the same invocation: plain `JSON.stringify` + write stream for NDJSON, and DuckDB's
 * `COPY (SELECT * FROM read_json(…)) TO … (FORMAT parquet)` for Parquet.
 *
 *   npx tsx bench/sinks.ts [records]     (default 1,000,000)
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { toCsv, toNdjson, toParquet } from '../sinks/index.ts';

const WORDS = 'data stream record page cursor river mountain coffee signal market launch review weekly guide'.split(' ');

/** A subforum post of the shape SPEC 2.4 describes, deterministic in `i`. */
function post(i: number): Record<string, unknown> {
  const word = (k: number): string => WORDS[(i * 7 + k * 13) % WORDS.length];
  const created = 1_700_000_000 + i * 37;
  return {
    id: `p${i.toString(36)}`,
    name: `t3_p${i.toString(36)}`,
    title: `${word(1)} ${word(2)} ${word(3)}, "${word(4)}" ${i}`,
    selftext: i % 3 === 0 ? '' : `${word(5)} ${word(6)}\n${word(7)} ${word(8)} ${word(9)}`,
    author: { name: `user_${i % 5000}`, fullname: `t2_${(i % 5000).toString(36)}`, flair: i % 4 === 0 ? null : word(10) },
    subforum: 'typescript',
    subforum_id: 't5_2qh1i',
    url: `https://forum.example/r/typescript/comments/p${i.toString(36)}/`,
    permalink: `/r/typescript/comments/p${i.toString(36)}/`,
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
    tags: [word(11), word(12)],
  };
}

function* posts(count: number): Generator<Record<string, unknown>> {
  for (let i = 0; i < count; i++) yield post(i);
}

async function plainNdjson(count: number, path: string): Promise<void> {
  const out = createWriteStream(path);
  for (const record of posts(count)) {
    if (!out.write(JSON.stringify(record) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
}

/** Runs one measurement in this process and prints `seconds peakRssMb` for the parent. */
async function child(kind: string, count: number, path: string): Promise<void> {
  const start = process.hrtime.bigint();
  if (kind === 'plain-ndjson') await plainNdjson(count, path);
  else if (kind === 'ndjson') await toNdjson(posts(count), path);
  else if (kind === 'csv') await toCsv(posts(count), path);
  else if (kind === 'parquet') await toParquet(posts(count), path);
  else if (kind === 'generate') for (const record of posts(count)) void record;
  else throw new TypeError(`unknown measurement ${kind}`);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  process.stdout.write(`${seconds} ${process.resourceUsage().maxRSS / 1024}\n`);
}

function measure(kind: string, count: number, path: string): { seconds: number; rssMb: number } {
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

/** Runs every measurement for `count` records and prints one plain line per result. */
export async function benchSinks(count = 1_000_000): Promise<void> {
  if (!Number.isSafeInteger(count) || count < 1) throw new TypeError(`records must be a positive integer, got ${count}`);
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-bench-sinks-'));
  const rate = (seconds: number): string => `${Math.round(count / seconds).toLocaleString('en-US')} records/s`;
  const line = (label: string, m: { seconds: number; rssMb: number }): void =>
    console.log(`${label.padEnd(24)} ${m.seconds.toFixed(2).padStart(7)} s  ${rate(m.seconds).padStart(20)}  peak RSS ${m.rssMb.toFixed(0)} MB`);
  try {
    console.log(`sinks: ${count.toLocaleString('en-US')} subforum-post-like records, each run in its own child process`);
    const generate = measure('generate', count, join(dir, 'none'));
    line('generate only', generate);
    const plain = measure('plain-ndjson', count, join(dir, 'plain.ndjson'));
    line('plain JSON.stringify', plain);
    const ndjson = measure('ndjson', count, join(dir, 'out.ndjson'));
    line('toNdjson', ndjson);
    const csv = measure('csv', count, join(dir, 'out.csv'));
    line('toCsv', csv);
    const parquet = measure('parquet', count, join(dir, 'out.parquet'));
    line('toParquet', parquet);
    const duck = await duckdbCopy(join(dir, 'out.ndjson'), join(dir, 'duck.parquet'));
    console.log(`${'DuckDB COPY json→parquet'.padEnd(24)} ${duck.toFixed(2).padStart(7)} s  ${rate(duck).padStart(20)}`);
    console.log(`ratio toNdjson / plain JSON.stringify: ${(plain.seconds / ndjson.seconds).toFixed(2)}x (target ≥ 0.8x)`);
    console.log(`ratio toParquet / DuckDB COPY:         ${(duck / parquet.seconds).toFixed(2)}x (target ≥ 0.25x)`);
    const worst = Math.max(ndjson.rssMb, csv.rssMb, parquet.rssMb);
    console.log(`peak RSS, worst sink: ${worst.toFixed(0)} MB (target < 300 MB)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run only when executed as a script (`npx tsx bench/sinks.ts`), not when imported by bench/index.ts.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--child') await child(process.argv[3], Number(process.argv[4]), process.argv[5]);
  else await benchSinks(process.argv[2] === undefined ? undefined : Number(process.argv[2]));
}
