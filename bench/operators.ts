/**
 * `npx tsx bench/operators.ts`: what the operators cost and what fan-out buys, as ratios measured in
 * one run against the real sandbox over loopback.
 *
 * 1. mergeMap over 20 inputs with 50 ms of sandbox latency: concurrency 10 against 1 (target ≥ 8×).
 * 2. A 5-operator pipe against the bare client stream over the same 20,000 records (target < 10% cost),
 *    measured twice: end to end (the sandbox shares this process, so a busy machine makes it noisy),
 *    and as the pipe's own cost per record on the same records replayed from memory, set against the
 *    client stream's time per record.
 */
import { createClient } from '../src/index.ts';
import { dedupe, filter, map, mergeMap, pipe, take, tap } from '../src/operators/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';

const CREDITS = 1_000_000;

async function drain(stream: AsyncIterable<unknown>): Promise<number> {
  let count = 0;
  for await (const _ of stream) count++;
  return count;
}

async function timed(run: () => Promise<number>): Promise<{ ms: number; records: number }> {
  const started = performance.now();
  const records = await run();
  return { ms: performance.now() - started, records };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function fanOut(): Promise<void> {
  const sandbox = await startSandbox({ port: 0, latencyMs: 50, accounts: [{ apiKey: 'sk_live_bench_fanout', credits: CREDITS }] });
  try {
    const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxConcurrentRequests: 10 });
    // 20 inputs of 50 records at 25 a page (trim): 40 pages, 2 per walk.
    const inputs = Array.from({ length: 20 }, (_, i) => `bench-fanout-${i}-n50`);
    const walk = (concurrency: number) => () =>
      drain(pipe(inputs, mergeMap((subforum) => client.forum.subforum({ subforum, trim: true }), { concurrency })));
    const one = await timed(walk(1));
    const ten = await timed(walk(10));
    console.log(`mergeMap 20 inputs x 2 pages, latency 50 ms: concurrency 1 ${one.ms.toFixed(0)} ms (${one.records} records)`);
    console.log(`mergeMap 20 inputs x 2 pages, latency 50 ms: concurrency 10 ${ten.ms.toFixed(0)} ms (${ten.records} records)`);
    console.log(`mergeMap speed-up concurrency 10 vs 1: ${(one.ms / ten.ms).toFixed(1)}x (target >= 8x)`);
  } finally {
    await sandbox.close();
  }
}

async function overhead(): Promise<void> {
  const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_bench_overhead', credits: CREDITS }] });
  try {
    const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    const params = { subforum: 'bench-overhead-n20000' };
    const fivePipe = <T extends { id: string }>(source: AsyncIterable<T>) =>
      pipe(
        source,
        filter((post) => post.id !== ''),
        map((post) => post),
        tap(() => undefined),
        dedupe('id'),
        take(1_000_000),
      );
    const posts = await collectAll(client.forum.subforum(params)); // also warms up JIT and sockets
    const inMemory = () => replay(posts);
    const runs = {
      bare: () => drain(client.forum.subforum(params)),
      piped: () => drain(fivePipe(client.forum.subforum(params))),
      bareMemory: () => drain(inMemory()),
      pipedMemory: () => drain(fivePipe(inMemory())),
    };
    const times: Record<keyof typeof runs, number[]> = { bare: [], piped: [], bareMemory: [], pipedMemory: [] };
    // Interleaved, the order turning each round, so drift (GC, CPU frequency, a neighbour's load)
    // falls on all alike; the fastest run of each is the least disturbed one.
    const names = Object.keys(runs) as (keyof typeof runs)[];
    for (let round = 0; round < 9; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length];
        const run = await timed(runs[name]);
        if (run.records !== posts.length) throw new Error(`${name} gave ${run.records} records, expected ${posts.length}`);
        times[name].push(run.ms);
      }
    }
    const best = (name: keyof typeof runs) => Math.min(...times[name]);
    const records = posts.length;
    const perRecordNs = (ms: number) => (ms / records) * 1e6;
    console.log(`bare client stream: ${records} records, best ${best('bare').toFixed(0)} ms, median ${median(times.bare).toFixed(0)} ms`);
    console.log(`5-operator pipe (filter, map, tap, dedupe, take) on it: best ${best('piped').toFixed(0)} ms, median ${median(times.piped).toFixed(0)} ms`);
    console.log(`operator throughput cost, end to end: ${((best('piped') / best('bare') - 1) * 100).toFixed(1)}% (target < 10%)`);
    const overheadNs = perRecordNs(best('pipedMemory') - best('bareMemory'));
    console.log(`operator overhead per record, same records replayed from memory: ${overheadNs.toFixed(0)} ns`);
    console.log(`that overhead against the client stream's ${perRecordNs(best('bare')).toFixed(0)} ns per record: ${((overheadNs / perRecordNs(best('bare'))) * 100).toFixed(1)}% (target < 10%)`);
  } finally {
    await sandbox.close();
  }
}

async function collectAll<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

async function* replay<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

await fanOut();
await overhead();
