/**
 * Client benchmark (`npx tsx bench/client.ts`). The sandbox runs in its own child process, and so
 * does every measured walk, so no walk shares a thread or a heap with the server or another walk.
 *
 * (a) records/s of a full `forum/subforum` walk through the client vs a minimal hand-written undici
 *     loop doing the same walk (same sandbox, same run; target: client >= 0.9x);
 * (b) time to the first record, both ways;
 * (c) peak RSS of a client walk of 10k vs 1M records (target: < 60 MB more), with the hand loop's
 *     1M figure for scale (both hold one page at a time; the rest is the garbage collector's slack).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { createClient as createClientType } from '../src/index.ts';
import { peakRssMb } from './_peak-rss.ts';

interface WalkReport {
  records: number;
  ms: number;
  firstMs: number;
  maxRssMb: number;
}

const SELF = fileURLToPath(import.meta.url);
const KEY = 'sk_live_bench';

async function main(): Promise<void> {
  const [role, ...args] = process.argv.slice(2);
  if (role === 'sandbox') return serveSandbox();
  if (role === 'walk') return reportWalk(args[0] as 'client' | 'hand', args[1], args[2], args[3] === 'warm');
  return compare();
}

/** Child: the sandbox, until the parent disconnects. */
async function serveSandbox(): Promise<void> {
  const { startSandbox } = await import('../src/sandbox/index.ts');
  const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 100_000_000 }] });
  process.send?.({ url: sandbox.url });
  process.once('disconnect', () => void sandbox.close());
}

/**
 * Child: one walk, reported back to the parent. With `warm`, a first walk of another resource warms
 * the JIT up (the time to its first record is the cold figure), then the measured walk follows.
 */
async function reportWalk(mode: 'client' | 'hand', baseUrl: string, subforum: string, warm: boolean): Promise<void> {
  // Load the client before any clock starts: the figures are about walking, not module loading.
  const { createClient } = await import('../src/index.ts');
  const run = async (name: string): Promise<{ records: number; ms: number; firstMs: number }> => {
    const started = performance.now();
    let firstMs = 0;
    let records = 0;
    const onRecord = (): void => {
      if (records++ === 0) firstMs = performance.now() - started;
    };
    if (mode === 'client') await clientWalk(createClient, baseUrl, name, onRecord);
    else await handWalk(baseUrl, name, onRecord);
    return { records, ms: performance.now() - started, firstMs };
  };
  const cold = warm ? await run(`warmup-${subforum}-n10000`) : undefined;
  const measured = await run(subforum);
  const report: WalkReport = { ...measured, firstMs: cold?.firstMs ?? measured.firstMs, maxRssMb: peakRssMb() };
  process.send?.(report, () => process.exit(0));
}

async function clientWalk(create: typeof createClientType, baseUrl: string, subforum: string, onRecord: () => void): Promise<void> {
  const client = create({ baseUrl, apiKey: KEY });
  for await (const post of client.forum.subforum({ subforum })) if (post.id !== '') onRecord();
  await client.close();
}

/** The baseline: the least code that walks the same pages and touches every record. */
async function handWalk(baseUrl: string, subforum: string, onRecord: () => void): Promise<void> {
  const pool = new Pool(baseUrl, { connections: 1 });
  let after: string | undefined;
  do {
    const query = new URLSearchParams({ subforum, ...(after === undefined ? {} : { after }) });
    const response = await pool.request({ method: 'GET', path: `/v1/scrape/forum/subforum?${query}`, headers: { 'x-api-key': KEY } });
    const body = JSON.parse(await response.body.text()) as { data: { posts: Record<string, { id: string }>; after?: string } };
    for (const post of Object.values(body.data.posts)) if (post.id !== '') onRecord();
    after = body.data.after;
  } while (after !== undefined);
  await pool.close();
}

function child<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = fork(SELF, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    proc.once('message', (message) => resolve(message as T));
    proc.once('error', reject);
    proc.once('exit', (code) => code !== 0 && reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function compare(): Promise<void> {
  const sandbox = fork(SELF, ['sandbox'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { url } = await new Promise<{ url: string }>((resolve) => sandbox.once('message', (m) => resolve(m as { url: string })));
  try {
    const walk = (mode: 'client' | 'hand', subforum: string, warm = true) => child<WalkReport>(['walk', mode, url, subforum, warm ? 'warm' : 'cold']);
    // The machine may be busy with other work: pair the runs (same resource, same round), alternate
    // which goes first, and report the median of the per-round ratios.
    const rounds = 5;
    const hand: WalkReport[] = [];
    const client: WalkReport[] = [];
    for (let i = 0; i < rounds; i++) {
      const subforum = `bench-${i}-n100000`;
      if (i % 2 === 0) {
        hand.push(await walk('hand', subforum));
        client.push(await walk('client', subforum));
      } else {
        client.push(await walk('client', subforum));
        hand.push(await walk('hand', subforum));
      }
    }
    const rate = (r: WalkReport) => r.records / (r.ms / 1000);
    const ratios = client.map((r, i) => rate(r) / rate(hand[i]));
    console.log(`throughput, forum/subforum 100k records after a 10k warm-up walk, ${rounds} paired rounds`);
    console.log(`  hand-written undici loop: ${median(hand.map(rate)).toFixed(0)} records/s (median)`);
    console.log(`  client:                   ${median(client.map(rate)).toFixed(0)} records/s (median)`);
    console.log(`  ratio client/hand:        ${median(ratios).toFixed(3)} (median of rounds; target >= 0.9)`);
    console.log(`  ratios by round:          ${ratios.map((r) => r.toFixed(2)).join(' ')}`);
    console.log('time to first record (median; first walk of a fresh process, modules already loaded)');
    console.log(`  hand-written undici loop: ${median(hand.map((r) => r.firstMs)).toFixed(1)} ms`);
    console.log(`  client:                   ${median(client.map((r) => r.firstMs)).toFixed(1)} ms`);
    const small = await walk('client', 'bench-n10000', false);
    const large = await walk('client', 'bench-n1000000', false);
    const handLarge = await walk('hand', 'bench-n1000000', false);
    console.log('peak RSS of a client walk');
    console.log(`  10k records:  ${small.maxRssMb.toFixed(1)} MB (${small.records} records)`);
    console.log(`  1M records:   ${large.maxRssMb.toFixed(1)} MB (${large.records} records, ${(large.ms / 1000).toFixed(1)} s)`);
    console.log(`  difference:   ${(large.maxRssMb - small.maxRssMb).toFixed(1)} MB (target < 60)`);
    console.log(`  for scale, the hand-written loop over the same 1M records: ${handLarge.maxRssMb.toFixed(1)} MB`);
  } finally {
    sandbox.disconnect();
  }
}

await main();
