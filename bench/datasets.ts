/**
 * A dataset kept up to date: one full run of a subforum, then ten incremental runs (`sort: 'new'`)
 * with the sandbox's `advance({ records: 100 })` before each, as a scheduled export meets a feed that
 * grew. Per run: the credits the sandbox charged against the pages the new posts fill (issue 20's
 * target: at most one more, the page that reaches the high-water mark), and the time the publish
 * took (merging the new rows into the part files they touch, journal, renames) against the rows the
 * dataset holds: a publish rewrites only the partitions its records fall in, so its time should grow
 * less than linearly with the dataset. Figures, not assertions; then `dataset compact` and `info`.
 *
 * Publish time is measured by wrapping `DatasetDestination.prototype.publish`: the engine's own
 * summary gives only the whole run's time.
 *
 * Two series, on subforums of 2,000 and 20,000 posts at first, show how publish time scales with
 * the dataset's size.
 *
 *   npx tsx bench/datasets.ts [initial posts ...]     (default 2000 20000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../src/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { compactDataset, datasetInfo, toDataset } from '../src/export/index.ts';
import { DatasetDestination } from '../src/dataset/destination.ts';

const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [2_000, 20_000];
const RUNS = 10;
const NEW_PER_RUN = 100;

const publishMs: number[] = [];
type Publish = (this: DatasetDestination, ...args: Parameters<DatasetDestination['publish']>) => ReturnType<DatasetDestination['publish']>;
const publish = Object.getOwnPropertyDescriptor(DatasetDestination.prototype, 'publish')!.value as Publish;
DatasetDestination.prototype.publish = async function (this: DatasetDestination, ...args: Parameters<Publish>) {
  const started = performance.now();
  try {
    return await publish.apply(this, args);
  } finally {
    publishMs.push(performance.now() - started);
  }
};

const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_sandbox_bench', credits: 1_000_000 }] });
const client = createClient({ apiKey: 'sk_live_sandbox_bench', baseUrl: sandbox.url });
const root = mkdtempSync(join(tmpdir(), 'socialstream-bench-datasets-'));
const charged = () => sandbox.requests.charged['sk_live_sandbox_bench'] ?? 0;

interface Row {
  run: string;
  rows: number;
  newRecords: number;
  newPages: number;
  credits: number;
  publishMs: number;
  partitions: number;
  runMs: number;
}

/** The full run and the ten incremental ones of a subforum that starts with `initial` posts, into `dir`. */
async function series(initial: number, dir: string): Promise<Row[]> {
  const params = { subforum: `bench-grow-${initial}-n${initial}`, sort: 'new' } as const;
  const rows: Row[] = [];
  let pageSize = 0;
  for (let run = 0; run <= RUNS; run++) {
    // Every resource grows; each series' subforum is its own, and only the runs after its first count.
    if (run > 0) sandbox.advance({ records: NEW_PER_RUN });
    const before = charged();
    const count = publishMs.length;
    const summary = await toDataset(client.forum.subforum(params), dir);
    if (run === 0) pageSize = Math.ceil(summary.records / summary.pages);
    const newRecords = run === 0 ? summary.records : NEW_PER_RUN;
    rows.push({
      run: run === 0 ? 'full' : String(run),
      rows: (await datasetInfo(dir)).rows,
      newRecords,
      newPages: Math.ceil(newRecords / pageSize),
      credits: charged() - before,
      publishMs: publishMs.slice(count).reduce((sum, ms) => sum + ms, 0),
      partitions: summary.dataset?.partitions.length ?? 0,
      runMs: summary.elapsedMs,
    });
  }
  console.log(`\nforum/subforum ${params.subforum} (sort=new, ${pageSize} posts a page), month partitions, ${RUNS} runs of +${NEW_PER_RUN} posts`);
  console.log('run    rows   new  new pages  credits  ≤ pages+1  partitions rewritten  publish ms  run ms');
  for (const row of rows) {
    const within = row.run === 'full' ? '' : row.credits <= row.newPages + 1 ? 'yes' : 'NO';
    console.log(
      `${row.run.padEnd(4)}  ${String(row.rows).padStart(6)}  ${String(row.newRecords).padStart(4)}  ${String(row.newPages).padStart(9)}  ` +
        `${String(row.credits).padStart(7)}  ${within.padStart(9)}  ${String(row.partitions).padStart(20)}  ${row.publishMs.toFixed(0).padStart(10)}  ${row.runMs.toFixed(0).padStart(6)}`,
    );
  }
  return rows;
}

try {
  const results: { initial: number; rows: Row[]; dir: string }[] = [];
  for (const initial of sizes) {
    const dir = join(root, `n${initial}`);
    results.push({ initial, rows: await series(initial, dir), dir });
  }
  console.log('');
  for (const { rows } of results) {
    const incremental = rows.slice(1);
    const within = incremental.filter((row) => row.credits <= row.newPages + 1).length;
    console.log(
      `${String(incremental[0].rows - NEW_PER_RUN).padStart(6)} rows at first: credits per run ${incremental.map((row) => row.credits).join(' ')} ` +
        `for ${incremental[0].newPages} new page(s) each, ${within}/${RUNS} within new pages + 1; ` +
        `publish median ${median(incremental.map((row) => row.publishMs)).toFixed(0)} ms ` +
        `(runs 1–5 ${median(incremental.slice(0, RUNS / 2).map((row) => row.publishMs)).toFixed(0)}, 6–10 ${median(incremental.slice(RUNS / 2).map((row) => row.publishMs)).toFixed(0)}); ` +
        `the full run's publish ${rows[0].publishMs.toFixed(0)} ms`,
    );
  }
  if (results.length > 1) {
    const [small, large] = [results[0], results[results.length - 1]];
    const size = large.rows[RUNS].rows / small.rows[RUNS].rows;
    const time = median(large.rows.slice(1).map((row) => row.publishMs)) / median(small.rows.slice(1).map((row) => row.publishMs));
    console.log(`a dataset ×${size.toFixed(1)} the size: incremental publish ×${time.toFixed(2)} the time (linear would be ×${size.toFixed(1)})`);
  }

  const { dir } = results[results.length - 1];
  const before = await datasetInfo(dir);
  const started = performance.now();
  const [operation] = (await compactDataset(dir, { partition: 'year' })).operations;
  console.log(
    `\ndataset compact --partition year (the largest): ${operation.parts.before} → ${operation.parts.after} part files, ${operation.rows} rows, ` +
      `${(before.bytes / 1024).toFixed(0)} → ${(operation.bytes.after / 1024).toFixed(0)} KiB, ${(performance.now() - started).toFixed(0)} ms`,
  );
} finally {
  await client.close();
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
