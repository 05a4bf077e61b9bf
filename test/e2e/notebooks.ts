/**
 * `npm run test:e2e` (notebooks): executes every `recipes/*.ipynb` headless, as a user's Jupyter would,
 * with the Deno kernel from the `deno` devDependency, on the built-in sandbox (no key set), and fails
 * on any error a cell shows: an `error` output (an exception, a rejected promise) or text on stderr.
 * The recipes import `socialstream` through `recipes/deno.json`, which points at `dist/`: run
 * `npm run build` first (the script does). Jupyter is Debian's (`jupyter-nbconvert`,
 * `python3-nbclient`, `python3-ipykernel`), which `.ci/run` installs when missing.
 *
 *   npm run test:e2e                      every notebook
 *   npm run test:e2e -- demo ad-library   those whose names contain one of the words
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const recipes = join(root, 'recipes');
/** A cell runs in seconds on the sandbox; this only stops a hung kernel from holding CI. */
const CELL_TIMEOUT_S = 180;

interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  ename?: string;
  evalue?: string;
}
interface Cell {
  cell_type: string;
  source: string | string[];
  outputs?: Output[];
}

const text = (value: string | string[] | undefined): string => (Array.isArray(value) ? value.join('') : (value ?? ''));

/** What went wrong in an executed notebook, one line per failing output, naming its cell. */
function errorsOf(executed: string): string[] {
  const { cells } = JSON.parse(readFileSync(executed, 'utf8')) as { cells: Cell[] };
  const errors: string[] = [];
  cells.forEach((cell, index) => {
    const firstLine = text(cell.source).split('\n')[0];
    for (const output of cell.outputs ?? []) {
      if (output.output_type === 'error') errors.push(`cell ${index + 1} (${firstLine}): ${output.ename}: ${output.evalue}`);
      if (output.output_type === 'stream' && output.name === 'stderr') errors.push(`cell ${index + 1} (${firstLine}) wrote to stderr: ${text(output.text).trim()}`);
    }
  });
  return errors;
}

function kernelSpecs(): string {
  const bin = createRequire(import.meta.url).resolve('deno/bin.cjs');
  // The `deno` package's postinstall puts the binary beside its bin script; without install scripts
  // run, that script finds it in the platform package.
  const binary = join(dirname(bin), 'deno');
  const deno = existsSync(binary) ? [binary] : [process.execPath, bin];
  const path = mkdtempSync(join(tmpdir(), 'socialstream-jupyter-'));
  mkdirSync(join(path, 'kernels', 'deno'), { recursive: true });
  // What `deno jupyter --install` writes, kept out of the user's own Jupyter directories.
  const spec = { argv: [...deno, 'jupyter', '--kernel', '--conn', '{connection_file}'], display_name: 'Deno', language: 'typescript' };
  writeFileSync(join(path, 'kernels', 'deno', 'kernel.json'), JSON.stringify(spec, null, 2));
  return path;
}

const wanted = process.argv.slice(2);
const notebooks = readdirSync(recipes)
  .filter((name) => name.endsWith('.ipynb'))
  .filter((name) => wanted.length === 0 || wanted.some((word) => name.includes(word)))
  .sort();
const jupyterPath = kernelSpecs();
const executedDir = join(jupyterPath, 'executed');
const env: NodeJS.ProcessEnv = { ...process.env, JUPYTER_PATH: jupyterPath, NO_COLOR: '1' };
delete env.SOCIALSTREAM_API_KEY;
delete env.SOCIALSTREAM_BASE_URL;

// Each run starts from nothing, as on a fresh clone: `resume: true` then walks everything.
rmSync(join(recipes, 'out'), { recursive: true, force: true });
let passed = 0;
let failed = 0;
try {
  for (const notebook of notebooks) {
    const started = performance.now();
    const run = spawnSync(
      'jupyter',
      ['nbconvert', '--to', 'notebook', '--execute', '--allow-errors', `--ExecutePreprocessor.timeout=${CELL_TIMEOUT_S}`,
        '--ExecutePreprocessor.kernel_name=deno', '--output-dir', executedDir, join(recipes, notebook)],
      { cwd: recipes, env, encoding: 'utf8' },
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const errors = run.status === 0 ? errorsOf(join(executedDir, notebook)) : [`jupyter nbconvert exited with ${run.status ?? run.signal}:\n${run.stderr || run.error?.message}`];
    if (errors.length === 0) {
      passed++;
      console.log(`ok   ${notebook} (${seconds} s)`);
    } else {
      failed++;
      console.log(`FAIL ${notebook} (${seconds} s)\n  ${errors.join('\n  ')}`);
    }
  }
} finally {
  rmSync(jupyterPath, { recursive: true, force: true });
  rmSync(join(recipes, 'out'), { recursive: true, force: true });
}
console.log(`\nnotebooks: ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
