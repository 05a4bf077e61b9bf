/**
 * Sandbox throughput: requests per second and latency percentiles for small pages over loopback,
 * through an undici keep-alive Pool. The servers run in a child process so the load generator does
 * not share their event loop (on a 2-core machine each side gets a core). A bare node:http server
 * answering a fixed JSON body runs in the same child as the baseline, so the ratio says what the
 * sandbox's own work costs regardless of the machine.
 *
 *   npx tsx bench/sandbox.ts [--requests N] [--connections N]
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startSandbox } from '../src/sandbox/index.ts';

const KEY = 'sk_live_bench';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer`);
  return value;
}

/** Child side: both servers, their URLs on stdout, until stdin closes. */
async function serve(): Promise<void> {
  const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 1_000_000_000 }] });
  const fixed = JSON.stringify({ success: true, data: { success: true, posts: {} }, credits_used: 1 });
  const bare = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(fixed) });
    res.end(fixed);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const { port } = bare.address() as AddressInfo;
  process.stdout.write(JSON.stringify({ sandbox: sandbox.url, baseline: `http://127.0.0.1:${port}` }) + '\n');
  process.stdin.resume();
  process.stdin.on('end', () => {
    bare.close();
    bare.closeAllConnections();
    void sandbox.close();
  });
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  bytes: number;
}

/** `requests` GETs, `connections` in flight at once, each on its own keep-alive connection. */
async function load(origin: string, paths: (i: number) => string, requests: number, connections: number): Promise<Result> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const latencies = new Float64Array(requests);
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < requests) {
      const i = next++;
      const started = performance.now();
      const { statusCode, body } = await pool.request({ method: 'GET', path: paths(i), headers: { 'x-api-key': KEY } });
      const text = await body.text();
      latencies[i] = performance.now() - started;
      if (statusCode !== 200) throw new Error(`GET ${paths(i)} answered ${statusCode}: ${text.slice(0, 200)}`);
      bytes += text.length;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  return {
    rps: requests / seconds,
    p50: sorted[Math.floor(requests * 0.5)],
    p99: sorted[Math.min(requests - 1, Math.floor(requests * 0.99))],
    bytes: bytes / requests,
  };
}

function line(name: string, result: Result): string {
  return `${name}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ${Math.round(result.bytes)} bytes/response`;
}

async function main(): Promise<void> {
  const requests = flag('--requests', 20_000);
  const connections = flag('--connections', 8);
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdout.setEncoding('utf8');
  const urls = await new Promise<{ sandbox: string; baseline: string }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as { sandbox: string; baseline: string });
    });
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  try {
    // Small pages: socialnet group posts (3 records a page), a different group on every request.
    const page = (i: number) => `/v1/scrape/socialnet/group/posts?group_id=${1_000 + (i % 5_000)}`;
    const warmup = Math.min(3_000, requests);
    await load(urls.baseline, () => '/', warmup, connections);
    await load(urls.sandbox, page, warmup, connections);
    const baseline = await load(urls.baseline, () => '/', requests, connections);
    const sandbox = await load(urls.sandbox, page, requests, connections);
    console.log(`sandbox bench: ${requests} requests, ${connections} keep-alive connections, servers in a child process`);
    console.log(line('baseline (bare node:http, fixed JSON)', baseline));
    console.log(line('sandbox (socialnet/group/posts, 3 records a page)', sandbox));
    console.log(`sandbox / baseline throughput: ${(sandbox.rps / baseline.rps).toFixed(2)}`);
    const met = sandbox.rps >= 2_000 && sandbox.p99 < 20;
    console.log(`target (>= 2000 req/s, p99 < 20 ms): ${met ? 'met' : 'NOT met'}`);
  } finally {
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

if (process.argv.includes('--serve')) await serve();
else await main();
