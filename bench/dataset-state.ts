/**
 * What checking a dataset's state on open costs (`src/dataset/state.ts`, docs/datasets.md): a
 * subforum of 5,000 posts exported by day (about 1,800 part files) and by month, then incremental
 * runs that find nothing new (one page bought). Per run: the whole run, its open
 * (`DatasetDestination.recover`: schema, marks, the part check, the keys a walk may meet again) and
 * the part check alone, timed again on the same files; the check's share of the run is the figure
 * that matters. Figures, not assertions.
 *
 *   npm run bench -- dataset-state
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../src/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { toDataset } from '../src/export/index.ts';
import { DatasetDestination } from '../src/dataset/destination.ts';
import { scanOperations, scanParts } from '../src/dataset/scan.ts';
import { LocalStorage } from '../src/dataset/storage/local.ts';
import { checkParts } from '../src/dataset/state.ts';
import type { PartitionBy } from '../src/dataset/store.ts';

const RUNS = 5;
const openMs: number[] = [];
type Recover = (this: DatasetDestination, restart: boolean) => Promise<void>;
const recover = Object.getOwnPropertyDescriptor(DatasetDestination.prototype, 'recover')!.value as Recover;
DatasetDestination.prototype.recover = async function (this: DatasetDestination, restart: boolean) {
  const started = performance.now();
  try {
    return await recover.call(this, restart);
  } finally {
    openMs.push(performance.now() - started);
  }
};

const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_sandbox_bench', credits: 1_000_000 }] });
const client = createClient({ apiKey: 'sk_live_sandbox_bench', baseUrl: sandbox.url });
const root = mkdtempSync(join(tmpdir(), 'socialstream-bench-state-'));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  for (const partition of ['day', 'month'] as PartitionBy[]) {
    const dir = join(root, partition);
    const walk = () => client.forum.subforum({ subforum: `bench-state-${partition}-n5000`, sort: 'new', trim: true });
    await toDataset(walk(), dir, { partition });
    const [operation] = await scanOperations(new LocalStorage(dir), dir);
    let parts = await scanParts(dir, operation);
    const runs: number[] = [];
    const checks: number[] = [];
    openMs.length = 0;
    for (let run = 0; run < RUNS; run++) {
      let started = performance.now();
      await toDataset(walk(), dir);
      runs.push(performance.now() - started);
      // Listed again: the check reads only parts changed since this process last found them whole.
      parts = await scanParts(dir, operation);
      started = performance.now();
      await checkParts(parts, operation.format, operation.paths);
      checks.push(performance.now() - started);
    }
    const [run, open, check] = [median(runs), median(openMs), median(checks)];
    console.log(
      `by ${partition}: ${parts.length} part files; median of ${RUNS} incremental runs ${run.toFixed(0)} ms, their open ${open.toFixed(0)} ms, ` +
        `the part check ${check.toFixed(0)} ms (${((check / run) * 100).toFixed(0)}% of a run, ${((check / open) * 100).toFixed(0)}% of its open)`,
    );
  }
} finally {
  await client.close();
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
}
