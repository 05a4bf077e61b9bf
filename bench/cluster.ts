/**
 * One queue, 1 vs 3 workers: 60 walks (8 pages each) against the sandbox at 200 ms a page, each worker
 * walking 2 at once. Reports the wall time of each, the speed-up, and Redis commands per page bought
 * (budget reservations, BullMQ's job moves and lock renewals, the engine's lease locks).
 */
import { writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queueStatus } from '../src/queue/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { cli, haveRedis, startRedis, startWorkers } from './_cluster.ts';

const WALKS = 60;
const LATENCY_MS = 200;
const PER_WORKER = 2;

async function run(workers: number): Promise<{ seconds: number; pages: number; commandsPerPage: number }> {
  const redis = await startRedis();
  const sandbox = await startSandbox({ port: 0, latencyMs: LATENCY_MS });
  const env = { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: sandbox.apiKey };
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-cluster-'));
  const inputs = join(dir, 'inputs.txt');
  writeFileSync(inputs, Array.from({ length: WALKS }, (_, index) => `subforum=cluster${index}-n200\n`).join(''));
  try {
    if ((await cli(['export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--dataset', join(dir, 'data'), '--queue', redis.url], env)) !== 0) throw new Error('enqueue failed');
    const before = await redis.commands();
    const started = Date.now();
    const pool = startWorkers(redis.url, workers, env, PER_WORKER);
    let polls = 0;
    for (;;) {
      const status = await queueStatus(redis.url);
      polls++;
      if (status.runs[0]?.state === 'finished') break;
      await new Promise((done) => setTimeout(done, 250));
    }
    const seconds = (Date.now() - started) / 1000;
    const [status] = (await queueStatus(redis.url)).runs;
    // Less this loop's own status reads (measured: one read's worth each).
    const one = await redis.commands();
    await queueStatus(redis.url);
    const perPoll = (await redis.commands()) - one;
    const commands = one - before - polls * perPoll;
    await pool.stop();
    return { seconds, pages: status.pages, commandsPerPage: commands / status.pages };
  } finally {
    await sandbox.close();
    await redis.stop();
  }
}

if (!haveRedis()) {
  console.log('bench/cluster: skipped, no redis-server on this machine (apt-get install redis-server)');
} else {
  const one = await run(1);
  const three = await run(3);
  console.log(`${WALKS} walks, ${one.pages} pages at ${LATENCY_MS} ms, ${PER_WORKER} walks at once per worker`);
  console.log(`1 worker:  ${one.seconds.toFixed(1)} s, ${one.commandsPerPage.toFixed(1)} Redis commands a page`);
  console.log(`3 workers: ${three.seconds.toFixed(1)} s, ${three.commandsPerPage.toFixed(1)} Redis commands a page`);
  console.log(`speed-up: ${(one.seconds / three.seconds).toFixed(2)}×`);
}
