/**
 * Publishing over many runs of an object keyed by date (issue 39): each run brings a few hundred
 * posts whose `views_by_day` holds dates no run had before (100 new ones a run), as a feed of
 * daily counters does. A nested dataset records such an object as a MAP once it passes
 * `MAP_THRESHOLD` distinct keys, so its type, and what a publish writes, stays the same size; as a
 * STRUCT it grew 100 fields a run and every publish took longer (here run 12's took 37x run 2's).
 * A flat dataset folds the 100 columns a run adds (`views_by_day.2020-01-01`, …) into one MAP
 * column once they pass the threshold, and the widening rewrite rewrites the parts that hold them
 * (inside that run's publish). Prints each run's publish seconds, then run 2's and the last run's
 * and their ratio (target: ≤ 1.5×), for the nested layout and then the flat one.
 *
 * The posts are served by a tiny service on loopback in the operation's own envelope, so they go
 * through HTTP, the client and the engine as a real run's do. Publish time is measured by wrapping
 * `DatasetDestination.prototype.publish`, as bench/datasets.ts does.
 *
 * Part of `npm run bench -- sinks`; alone: `npx tsx bench/_map-publish.ts [runs]` (default 25), both layouts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient, type RecordStream } from '../src/index.ts';
import { toDataset } from '../src/export/index.ts';
import { DatasetDestination } from '../src/dataset/destination.ts';
import type { ParquetLayout } from '../sinks/parquet.ts';

const POSTS_PER_RUN = 300;
const NEW_DATES_PER_RUN = 100;
const DATES_PER_POST = 20;
const DAY_MS = 86_400_000;

/**
 * Run `run`'s posts: new ones, each holding `DATES_PER_POST` of the run's new dates, all in the
 * one month, so every publish merges into the same partition, as a feed's daily runs do (it grows
 * 300 rows a run, 7,500 by the 25th).
 */
function postsOf(run: number): Array<Record<string, unknown>> {
  const first = Date.UTC(2020, 0, 1) + run * NEW_DATES_PER_RUN * DAY_MS;
  return Array.from({ length: POSTS_PER_RUN }, (_, i) => ({
    id: `r${run}-p${i}`,
    title: `post ${i} of run ${run}`,
    created_utc: 1_600_000_000 + run * POSTS_PER_RUN + i,
    views_by_day: Object.fromEntries(
      Array.from({ length: DATES_PER_POST }, (_, d) => [new Date(first + ((i * DATES_PER_POST + d) % NEW_DATES_PER_RUN) * DAY_MS).toISOString().slice(0, 10), i + d]),
    ),
  }));
}

/** Publishes `runs` runs into a fresh dataset of `layout`; returns each run's publish seconds. */
export async function benchMapPublish(runs = 25, layout: ParquetLayout = 'nested'): Promise<number[]> {
  if (!Number.isSafeInteger(runs) || runs < 2) throw new TypeError(`runs must be an integer of at least 2, got ${runs}`);
  const seconds: number[] = [];
  const publish = Object.getOwnPropertyDescriptor(DatasetDestination.prototype, 'publish')!;
  const wrapped = publish.value as (this: DatasetDestination, ...args: unknown[]) => Promise<unknown>;
  DatasetDestination.prototype.publish = async function (this: DatasetDestination, ...args: Parameters<DatasetDestination['publish']>) {
    const started = performance.now();
    try {
      return (await wrapped.apply(this, args)) as Awaited<ReturnType<DatasetDestination['publish']>>;
    } finally {
      seconds.push((performance.now() - started) / 1000);
    }
  };
  let served: Array<Record<string, unknown>> = [];
  const server = createServer((_, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ success: true, data: { posts: served } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = createClient({ apiKey: 'sk_test_bench_map_publish', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retry: { retries: 0 } });
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-bench-map-publish-'));
  try {
    console.log(`map publish: ${runs} runs of ${POSTS_PER_RUN} posts, each run ${NEW_DATES_PER_RUN} new dates in views_by_day, into one ${layout} dataset`);
    for (let run = 0; run < runs; run++) {
      served = postsOf(run);
      const stream = (client.stream as (id: string, params: Record<string, string>) => RecordStream<unknown>)('forum/subforum', { subforum: `run${run}` });
      await toDataset(stream, dir, { layout });
      console.log(`run ${String(run + 1).padStart(2)}  publish ${seconds[run].toFixed(3)} s`);
    }
    const [second, last] = [seconds[1], seconds[runs - 1]];
    console.log(`publish run 2 ${second.toFixed(3)} s, run ${runs} ${last.toFixed(3)} s: ratio ${(last / second).toFixed(2)}x (target ≤ 1.5x)`);
    // One run can land on a busy moment of the machine: the medians of the first and last three say the same more steadily.
    const [early, late] = [median(seconds.slice(1, 4)), median(seconds.slice(-3))];
    console.log(`median of runs 2–4 ${early.toFixed(3)} s, of the last three ${late.toFixed(3)} s: ratio ${(late / early).toFixed(2)}x`);
    return seconds;
  } finally {
    DatasetDestination.prototype.publish = publish.value as DatasetDestination['publish'];
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runs = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
  await benchMapPublish(runs, 'nested');
  await benchMapPublish(runs, 'flat');
}
