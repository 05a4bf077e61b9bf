/**
 * The CLI's memory over a huge `--inputs` file: the peak resident set of `socialstream export` with
 * 100,000 lines (one parameter set each; more sizes as arguments), against an in-process sandbox. Each run stops
 * after `--max-pages 200`, so what it measures is what grows with the lines: reading and checking the
 * file, the walks, the journal (docs/sandbox.md: peak RSS at most 250 MB at 100,000 lines, growing less than
 * the file beyond). The child reports its own peak as it exits: `VmHWM` of `/proc/self/status`, as
 * `_peak-rss.ts` reads it (the child runs the built CLI, which cannot import that module), else `maxRSS`.
 *
 *   npx tsx bench/inputs-memory.ts [lines ...]     (default 100000; `npm run bench` builds first)
 *   npm run bench -- inputs-memory -- 100000 1000000   (both figures and their ratio; the 1M case takes a minute or more)
 *
 * BENCH_NODE_FLAGS adds node flags to the child: `--max-old-space-size=120` shows how much of the
 * peak is live data and how much garbage not yet collected.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startSandbox } from '../src/sandbox/index.ts';

const ROOT = resolve(import.meta.dirname, '..');
const { bin } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const BIN = resolve(ROOT, bin.socialstream);
if (!existsSync(BIN)) throw new Error(`bench/inputs-memory runs the built CLI (${BIN}): run \`npm run build\` first, or \`npm run bench\`, which builds`);
const REPORT_RSS = `data:text/javascript,${encodeURIComponent(
  'import { readFileSync, writeFileSync } from "node:fs";' +
    'const peakKb = () => { try { const m = /^VmHWM:\\s+(\\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8")); if (m) return Number(m[1]); } catch {} return process.resourceUsage().maxRSS; };' +
    'process.on("exit", () => writeFileSync(process.env.BENCH_RSS_REPORT, String(peakKb() * 1024)));',
)}`;

const sizes = process.argv.slice(2).map(Number);
const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_sandbox_bench', credits: 1_000_000 }] });
const dir = mkdtempSync(join(tmpdir(), 'socialstream-bench-inputs-'));

interface Run {
  lines: number;
  fileBytes: number;
  peakRss: number;
  seconds: number;
}

async function run(lines: number): Promise<Run> {
  const inputs = join(dir, `inputs-${lines}.txt`);
  writeFileSync(inputs, Array.from({ length: lines }, (_, index) => `subforum=wide${index}-n30`).join('\n') + '\n');
  const report = join(dir, `rss-${lines}.txt`);
  const args = [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', REPORT_RSS, BIN, 'export', 'forum/subforum', '--inputs', inputs, '--max-pages', '200', '--out', join(dir, `out-${lines}.ndjson`)];
  const env = { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox_bench', BENCH_RSS_REPORT: report };
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((done) => child.once('close', done));
  if (code !== 0) throw new Error(`export of ${lines} lines exited ${code}: ${stderr}`);
  return { lines, fileBytes: statSync(inputs).size, peakRss: Number(readFileSync(report, 'utf8')), seconds: (performance.now() - started) / 1000 };
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
try {
  const results: Run[] = [];
  for (const lines of sizes.length > 0 ? sizes : [100_000]) {
    const result = await run(lines);
    results.push(result);
    console.log(`${String(lines).padStart(8)} lines (${mb(result.fileBytes)}): peak RSS ${mb(result.peakRss)}, ${result.seconds.toFixed(1)} s`);
  }
  const [first, last] = [results[0], results.at(-1)!];
  if (results.length > 1) {
    const grew = last.peakRss - first.peakRss;
    console.log(
      `${last.lines / first.lines}× the lines: peak RSS ${(last.peakRss / first.peakRss).toFixed(2)}× (${mb(grew)} more for ${mb(last.fileBytes - first.fileBytes)} more file, ` +
        `${(grew / (last.fileBytes - first.fileBytes)).toFixed(1)} bytes of memory a byte of file)`,
    );
  }
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
