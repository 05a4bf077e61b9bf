/**
 * One queue, 1 vs 3 workers: 60 walks (8 pages each) against the sandbox at 200 ms a page, each worker
 * walking 2 at once. Reports the wall time of each, the speed-up, the Redis round trips per page
 * bought (what the workers send: budget reservations, BullMQ's job moves and lock renewals, the lease
 * locks, the run's counters; commands scripts run inside Redis are not round trips), and the part
 * files the dataset ends with.
 *
 * The workers run the built CLI (`dist/`, as `npx socialstream worker` does on a real machine): from
 * the sources, tsx compiles the CLI in each of them, a second of CPU that three workers on two cores
 * pay at once, and that the timing would count. The end is seen by watching the run's state every
 * 20 ms on one connection (not by a `status` every 250 ms, which made the timing that much coarser).
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { queueStatus } from '../src/queue/index.ts';
import { exportIdOf, keys } from '../src/queue/runs.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { builtCli, cli, haveRedis, startRedis, startWorkers } from './_cluster.ts';

const WALKS = 60;
const LATENCY_MS = 200;
const PER_WORKER = 2;

interface Figures {
  seconds: number;
  pages: number;
  roundTripsPerPage: number;
  commandsPerPage: number;
  partFiles: number;
  partitions: number;
}

async function run(workers: number): Promise<Figures> {
  const redis = await startRedis();
  const sandbox = await startSandbox({ port: 0, latencyMs: LATENCY_MS });
  const env = { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: sandbox.apiKey };
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-cluster-'));
  const data = join(dir, 'data');
  const inputs = join(dir, 'inputs.txt');
  writeFileSync(inputs, Array.from({ length: WALKS }, (_, index) => `subforum=cluster${index}-n200\n`).join(''));
  const watch = new Redis(redis.url);
  try {
    if ((await cli(['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--dataset', data, '--queue', redis.url], env)) !== 0) throw new Error('enqueue failed');
    const runKey = keys.run(exportIdOf('forum/subforum', resolve(data)), 1);
    await watch.ping();
    const roundTrips = await redis.countRoundTrips([watch.stream.localPort ?? 0]);
    const before = await redis.commands();
    const started = Date.now();
    const pool = startWorkers(redis.url, workers, env, PER_WORKER, false, builtCli());
    let polls = 0;
    while ((await watch.hget(runKey, 'state')) !== 'finished') {
      polls++;
      await new Promise((done) => setTimeout(done, 20));
    }
    const seconds = (Date.now() - started) / 1000;
    // Less this loop's own reads (one command each) and the two `INFO`s.
    const commands = (await redis.commands()) - before - polls - 2;
    const sent = roundTrips.stop();
    await pool.stop();
    const [status] = (await queueStatus(redis.url)).runs;
    const parts = partFiles(join(data, 'forum', 'subforum'));
    return { seconds, pages: status.pages, roundTripsPerPage: sent / status.pages, commandsPerPage: commands / status.pages, ...parts };
  } finally {
    watch.disconnect();
    await sandbox.close();
    await redis.stop();
  }
}

function partFiles(root: string): { partFiles: number; partitions: number } {
  const partitions = readdirSync(root).filter((name) => name.startsWith('_date='));
  const files = partitions.reduce((sum, partition) => sum + readdirSync(join(root, partition)).filter((name) => name.startsWith('part-')).length, 0);
  return { partFiles: files, partitions: partitions.length };
}

function line(label: string, figures: Figures): string {
  return (
    `${label} ${figures.seconds.toFixed(1)} s; Redis round-trips per page: ${figures.roundTripsPerPage.toFixed(2)} (target ≤ 3), ` +
    `${figures.commandsPerPage.toFixed(1)} commands a page with those scripts run; ${figures.partFiles} part files in ${figures.partitions} partitions`
  );
}

if (!haveRedis()) {
  console.log('bench/cluster: skipped, no redis-server on this machine (apt-get install redis-server)');
} else {
  const one = await run(1);
  const three = await run(3);
  console.log(`${WALKS} walks, ${one.pages} pages at ${LATENCY_MS} ms, ${PER_WORKER} walks at once per worker`);
  console.log(line('1 worker: ', one));
  console.log(line('3 workers:', three));
  console.log(`speed-up: ${(one.seconds / three.seconds).toFixed(2)}× (target ≥ 2.5×)`);
}
