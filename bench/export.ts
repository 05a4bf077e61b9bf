/**
 * Export engine benchmark (`npm run bench -- export`): what the crash-safe export costs over the
 * plain sinks. Both sides run in this process, through the compiled package (`dist/`, which
 * `npm run bench` builds first), as an installed socialstream runs; the sandbox runs in its own
 * child process (as the service is elsewhere), so its work does not share the walk's thread.
 *
 * (a) Page-staging cost at 50 ms a request: `exportTo` of a 40-page walk into NDJSON against the
 *     same walk into `toNdjson`, which stages nothing (and, for scale, a bare `for await`). Target:
 *     within 1.1x.
 * (b) 100,000 `forum/subforum` posts (1,000 pages of 100) into NDJSON and into Parquet: `exportTo`
 *     (every page written to the spool and its line to the journal before the next request, both
 *     flushed to the disk behind; Parquet written while the pages are staged, then published)
 *     against `toNdjson` / `toParquet` on the same stream, sandbox without latency. Target: exportTo
 *     <= 1.25x the plain sink. On a machine other work keeps busy, every late turn of the event loop
 *     adds to the walk, which is serial (a cursor): read the ratio beside the plain sink's time a page.
 *
 * Runs alternate between the two sides, five each; the medians are compared. Figures only: no
 * assertion fails on timing.
 *
 *   npx tsx bench/export.ts [posts]     (default 100,000; run `npm run build` first)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Client = ReturnType<(typeof import('../src/index.ts'))['createClient']>;
interface Built {
  createClient: (typeof import('../src/index.ts'))['createClient'];
  sinks: typeof import('../sinks/index.ts');
  exportTo: (typeof import('../src/export/index.ts'))['exportTo'];
}

const SELF = fileURLToPath(import.meta.url);
const KEY = 'sk_live_bench_export';
const LATENCY_MS = 50;
/** The staging walk at 50 ms: 40 pages of 100 posts. */
const STAGING_PAGES = 40;
const STAGING_POSTS = STAGING_PAGES * 100;
/** Runs of each side; the median is reported. */
const RUNS = 5;

async function main(): Promise<void> {
  const [role] = process.argv.slice(2);
  if (role === 'sandbox') return serveSandbox();
  const posts = process.argv[2] === undefined ? 100_000 : Number(process.argv[2]);
  if (!Number.isSafeInteger(posts) || posts < 1) throw new TypeError(`posts must be a positive integer, got ${process.argv[2]}`);
  const built = await loadBuilt();
  const sandbox = fork(SELF, ['sandbox'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const urls = await new Promise<{ fast: string; slow: string }>((resolve) => sandbox.once('message', (m) => resolve(m as { fast: string; slow: string })));
  const fast = built.createClient({ baseUrl: urls.fast, apiKey: KEY });
  const slow = built.createClient({ baseUrl: urls.slow, apiKey: KEY });
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-bench-export-'));
  let file = 0;
  const path = (extension: string): string => join(dir, `out-${file++}.${extension}`);
  // Each 100k-post output is about 150 MB: drop it (off the clock) before the next run writes another.
  const tidy = (): void => {
    for (const name of readdirSync(dir)) if (name.startsWith('out-')) rmSync(join(dir, name), { force: true });
  };
  try {
    // A short walk each way first, so the figures are not about the JIT warming up.
    const warm = (): ReturnType<Client['forum']['subforum']> => fast.forum.subforum({ subforum: 'warm-n5000' });
    await built.sinks.toNdjson(warm(), path('ndjson'));
    await built.exportTo(warm(), { out: path('ndjson') });
    tidy();
    const subforum = (client: Client, count: number) => () => client.forum.subforum({ subforum: `bench-n${count}` });

    // Staging at 50 ms first: (b) writes about 2 GB, whose writeback would slow this walk's few flushes.
    const slowWalk = subforum(slow, STAGING_POSTS);
      console.log(`(a) page staging at ${LATENCY_MS} ms a request: ${STAGING_PAGES} pages of 100 forum/subforum posts, one walk; median of ${RUNS} runs each side, alternating`);
    const bare = await median(async () => {
      let records = 0;
      for await (const _ of slowWalk()) records++;
      expectRecords(records, STAGING_POSTS, 'for await');
    });
    const [slowSink, slowEngine] = await alternate(
      async () => expectRecords((await built.sinks.toNdjson(slowWalk(), path('ndjson'))).records, STAGING_POSTS, 'toNdjson'),
      async () => {
        const summary = await built.exportTo(slowWalk(), { out: path('ndjson') });
        expectRecords(summary.received, STAGING_POSTS, 'exportTo');
      },
      tidy,
    );
    row('for await (no file)', bare, STAGING_POSTS);
    row('toNdjson (stages nothing)', slowSink, STAGING_POSTS);
    row('exportTo ndjson (staged)', slowEngine, STAGING_POSTS);
    console.log(`staging cost: ${((slowEngine - slowSink) / STAGING_PAGES).toFixed(1)} ms a page against ${LATENCY_MS} ms a request`);
    console.log(`ratio exportTo / toNdjson: ${(slowEngine / slowSink).toFixed(2)}x (target <= 1.10x)`);

    const walk = subforum(fast, posts);
    console.log(`\n(b) ${posts.toLocaleString('en-US')} forum/subforum posts, sandbox without latency; median of ${RUNS} runs each side, alternating`);
    for (const format of ['ndjson', 'parquet'] as const) {
      const plain = format === 'ndjson' ? built.sinks.toNdjson : built.sinks.toParquet;
      const [sink, engine] = await alternate(
        async () => expectRecords((await plain(walk(), path(format))).records, posts, `to${format}`),
        async () => expectRecords((await built.exportTo(walk(), { out: path(format) })).received, posts, 'exportTo'),
        tidy,
      );
      const label = format === 'ndjson' ? 'toNdjson' : 'toParquet';
      row(`${label} (plain sink)`, sink, posts);
      row(`exportTo ${format}`, engine, posts);
      console.log(`ratio exportTo / ${label}: ${(engine / sink).toFixed(2)}x (target <= 1.25x)`);
      console.log(`plain sink: ${(sink / Math.ceil(posts / 100)).toFixed(2)} ms a page; exportTo adds ${((engine - sink) / Math.ceil(posts / 100)).toFixed(2)} ms a page`);
    }
  } finally {
    await fast.close();
    await slow.close();
    sandbox.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Child: a sandbox without latency and one at 50 ms a request, until the parent disconnects. */
async function serveSandbox(): Promise<void> {
  const { startSandbox } = await import('../src/sandbox/index.ts');
  const accounts = [{ apiKey: KEY, credits: 100_000_000 }];
  const fast = await startSandbox({ port: 0, accounts });
  const slow = await startSandbox({ port: 0, accounts, latencyMs: LATENCY_MS });
  process.send?.({ fast: fast.url, slow: slow.url });
  process.once('disconnect', () => void Promise.all([fast.close(), slow.close()]));
}

/** The client, the sinks and the export engine as the built package has them. */
async function loadBuilt(): Promise<Built> {
  const load = async <T>(path: string): Promise<T> => {
    try {
      return (await import(new URL(path, import.meta.url).href)) as T;
    } catch (error) {
      throw new Error(`bench/export measures the built package: run \`npm run build\` first (${String(error)})`, { cause: error });
    }
  };
  const [client, sinks, engine] = await Promise.all([
    load<typeof import('../src/index.ts')>('../dist/src/index.js'),
    load<typeof import('../sinks/index.ts')>('../dist/sinks/index.js'),
    load<typeof import('../src/export/index.ts')>('../dist/src/export/index.js'),
  ]);
  return { createClient: client.createClient, sinks, exportTo: engine.exportTo };
}

/**
 * Runs `a` and `b` in turn, `RUNS` times each, and resolves with the median wall time of each (ms).
 * Alternating keeps a busy moment of the machine (two cores, shared) from landing on one side only.
 */
async function alternate(a: () => Promise<void>, b: () => Promise<void>, tidy: () => void): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let run = 0; run < RUNS; run++) {
    times[0].push(await timed(a));
    tidy();
    times[1].push(await timed(b));
    tidy();
  }
  return [middle(times[0]), middle(times[1])];
}

async function median(task: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) times.push(await timed(task));
  return middle(times);
}

async function timed(task: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await task();
  return performance.now() - started;
}

function middle(times: number[]): number {
  return [...times].sort((x, y) => x - y)[Math.floor(times.length / 2)];
}

/**
 * A side that read fewer records than the walk holds would make its time meaningless. exportTo is
 * checked by what it received: its default dedupe may drop a record whose key the sandbox repeats.
 */
function expectRecords(records: number, expected: number, side: string): void {
  if (records !== expected) throw new Error(`${side} took ${records} records, expected ${expected}`);
}

function row(label: string, ms: number, records: number): void {
  const rate = `${Math.round(records / (ms / 1000)).toLocaleString('en-US')} records/s`;
  console.log(`${label.padEnd(28)} ${(ms / 1000).toFixed(2).padStart(7)} s  ${rate.padStart(20)}`);
}

await main();
