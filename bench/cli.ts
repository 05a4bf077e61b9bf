/**
 * The CLI over a wide `--inputs` file: what saving the checkpoint costs as the number of walks grows.
 * Each size runs the real CLI (the package's `bin`, built into `dist/` by `npm run bench`) as a child process against an in-process
 * sandbox, one parameter set per line (2 pages each), `--concurrency 16`, and reports wall time, the
 * child's CPU time (less swayed by other work on the machine) and the bytes it wrote (`/proc/self/io`,
 * read as it exits: `wchar` counts every write call, `write_bytes` what reached the block device). Checkpoint cost per page should not depend on the
 * number of walks, so 3,000 lines should take about 3× the time of 1,000, not more.
 *
 *   npx tsx bench/cli.ts [lines ...]     (default 1000 3000)
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startSandbox } from '../src/sandbox/index.ts';

// The CLI as installed: the file package.json's `bin` names, not a path of our own that can drift from it.
const ROOT = resolve(import.meta.dirname, '..');
const { bin } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const BIN = resolve(ROOT, bin.socialstream);
if (!existsSync(BIN)) throw new Error(`bench/cli runs the built CLI (${BIN}): run \`npm run build\` first, or \`npm run bench\`, which builds`);
// Written by the child as it exits: its own I/O counters.
const REPORT_IO = `data:text/javascript,${encodeURIComponent(
  'import { readFileSync, writeFileSync } from "node:fs";' +
    'process.on("exit", () => { const { user, system } = process.cpuUsage();' +
    'writeFileSync(process.env.BENCH_IO_REPORT, `${readFileSync("/proc/self/io", "utf8")}cpu_us: ${user + system}\\n`); });',
)}`;

const sizes = process.argv.slice(2).map(Number);
const sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_sandbox_bench', credits: 1_000_000 }] });
const dir = mkdtempSync(join(tmpdir(), 'socialstream-bench-cli-'));

interface Run {
  lines: number;
  seconds: number;
  cpuSeconds: number;
  wchar: number;
  writeBytes: number;
  outBytes: number;
  warnings: boolean;
}

async function run(lines: number): Promise<Run> {
  const inputs = join(dir, `inputs-${lines}.txt`);
  writeFileSync(inputs, Array.from({ length: lines }, (_, index) => `subforum=bench${index}-n50`).join('\n') + '\n');
  const out = join(dir, `out-${lines}.ndjson`);
  const io = join(dir, `io-${lines}.txt`);
  const args = ['--import', REPORT_IO, BIN, 'export', 'forum/subforum', 'trim=true', '--inputs', inputs, '--concurrency', '16', '--out', out];
  const env = { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox_bench', BENCH_IO_REPORT: io };
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`export of ${lines} lines exited ${code}: ${stderr}`);
  const counters = Object.fromEntries(
    readFileSync(io, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(': ') as [string, string]),
  );
  return {
    lines,
    seconds,
    cpuSeconds: Number(counters.cpu_us) / 1e6,
    wchar: Number(counters.wchar),
    writeBytes: Number(counters.write_bytes),
    outBytes: statSync(out).size,
    warnings: stderr.includes('MaxListenersExceededWarning'),
  };
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
try {
  const results: Run[] = [];
  for (const lines of sizes.length > 0 ? sizes : [1000, 3000]) {
    const result = await run(lines);
    results.push(result);
    console.log(
      `${String(lines).padStart(6)} lines: ${result.seconds.toFixed(1)} s (CPU ${result.cpuSeconds.toFixed(1)} s), wrote ${mb(result.wchar)} (block device ${mb(result.writeBytes)}) ` +
        `for a ${mb(result.outBytes)} output${result.warnings ? ', MaxListenersExceededWarning printed' : ''}`,
    );
  }
  const [first, last] = [results[0], results.at(-1)!];
  if (results.length > 1) {
    const times = (key: 'seconds' | 'cpuSeconds' | 'wchar'): string => (last[key] / first[key]).toFixed(1);
    console.log(`${last.lines / first.lines}× the lines: ${times('seconds')}× the time (CPU ${times('cpuSeconds')}×), ${times('wchar')}× the bytes written`);
  }
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
