/**
 * `toParquet` under Deno against Node, on the same 20,000 sandbox subforum posts (issue 21: the
 * encoder's worker thread made Deno 2–3× slower). The posts are walked once into NDJSON; then each
 * runtime, in a fresh process as a notebook kernel or a script is, parses that file and times one
 * `toParquet` of the records through the compiled package (`dist/`, built by `npm run bench`), with
 * each `encoder` and with the default. Three processes a case; the median is printed, with its ratio
 * to Node's default. Figures, not assertions: 2 shared cores make single runs noisy.
 *
 *   npx tsx bench/deno.ts [posts]     (default 20,000; needs `deno`, a devDependency)
 *   deno run -A bench/deno.ts --child FILE.ndjson OUT.parquet [worker|thread]   (one timing)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = 3;

if (process.argv.includes('--child')) await child(process.argv.slice(process.argv.indexOf('--child') + 1));
else await parent(Number(process.argv[2] ?? 20_000));

/** One timing: parse the posts, then `toParquet` them; prints the milliseconds of the write alone. */
async function child([input, out, encoder]: string[]): Promise<void> {
  type Sinks = typeof import('../sinks/index.ts');
  const { toParquet } = (await import(pathToFileURL(join(root, 'dist/sinks/index.js')).href)) as Sinks;
  const posts = readFileSync(input, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as unknown);
  const started = performance.now();
  const { records } = await toParquet(posts, out, encoder === 'worker' || encoder === 'thread' ? { encoder } : {});
  console.log(JSON.stringify({ ms: performance.now() - started, records }));
}

async function parent(count: number): Promise<void> {
  const { createClient } = await import('../src/index.ts');
  const { startSandbox } = await import('../src/sandbox/index.ts');
  const { toNdjson } = await import('../sinks/index.ts');
  const deno = createRequire(import.meta.url).resolve('deno/deno');
  const work = mkdtempSync(join(tmpdir(), 'socialstream-bench-deno-'));
  try {
    const input = join(work, 'posts.ndjson');
    const sandbox = await startSandbox({ port: 0 });
    const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    await toNdjson(client.forum.subforum({ subforum: `bench-n${count}`, sort: 'new' }, { lookahead: 'eager' }), input);
    await client.close();
    await sandbox.close();

    const self = fileURLToPath(import.meta.url);
    const runtimes = {
      node: [process.execPath, '--import', 'tsx', self],
      deno: [deno, 'run', '-A', '--quiet', self],
    };
    const version = (command: string, flag: string): string => execFileSync(command, [flag], { encoding: 'utf8' }).split('\n')[0];
    console.log(`${count} sandbox posts to Parquet; node ${process.version}, ${version(deno, '--version')}; median of ${RUNS} processes`);
    let baseline: number | undefined;
    for (const [runtime, command] of Object.entries(runtimes)) {
      for (const encoder of ['default', 'worker', 'thread']) {
        const times: number[] = [];
        for (let run = 0; run < RUNS; run++) {
          const out = join(work, `${runtime}-${encoder}-${run}.parquet`);
          const printed = execFileSync(command[0], [...command.slice(1), '--child', input, out, encoder], { cwd: root, encoding: 'utf8' });
          const { ms, records } = JSON.parse(printed.trim().split('\n').at(-1)!) as { ms: number; records: number };
          if (records !== count) throw new Error(`${runtime} wrote ${records} records, expected ${count}`);
          times.push(ms);
        }
        const median = times.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
        baseline ??= median;
        const spread = `${times.map((ms) => (ms / 1000).toFixed(2)).join(' / ')} s`;
        console.log(`  ${runtime.padEnd(5)} encoder ${encoder.padEnd(8)} ${(median / 1000).toFixed(2)} s  ${(median / baseline).toFixed(2)}× node default  (${spread})`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
