/* global clearTimeout, console, performance, process, setTimeout */
// `npm run test:docs`: runs every JavaScript and shell block of README.md and the guides
// (docs/guide/*.md, in the order of GUIDES) the way a reader pastes them, in order, into one terminal
// and one fresh ES-module project that installs the packed tarball: offline, against the sandbox the
// blocks themselves start, with no SOCIALSTREAM_* variable set.
//
// What a page marks:
// - A JavaScript block (```js) starts with `// NAME.js`: it is saved under that name in the shell's
//   current folder, and a later shell block must run it (`node NAME.js`).
// - A shell block (```sh) runs in bash with `set -eo pipefail`; its folder and exported variables carry
//   over to the next block, as in one terminal. A process it leaves in the background must send its
//   output to a file; every block's processes are ended when the run ends.
// - A ```text block right after a shell block is what that block prints (stdout and stderr together),
//   compared line by line: `…` inside a line stands for any text (a time, a byte count), and a line
//   that is only `…` for any number of lines.
// - `<!-- skip-test: why -->` on the line before a fence skips that block (Python, SQL, a real key,
//   object storage, more than one machine), saying why in the report.
//
// Prints one line a block and closes with "doc blocks: N passed, N skipped"; stops at the first block
// that fails (the blocks after it build on it), printing its output, and exits 1.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '..');
/** The guides in reading order: each builds on the project and sandbox the README's quickstart set up. */
const GUIDES = ['first-export', 'operators', 'resume-and-credit-caps', 'datasets', 'big-integers', 'notebooks', 'cli', 'many-machines'];
const PAGES = ['README.md', ...GUIDES.map((guide) => `docs/guide/${guide}.md`)];
/** A block is a few seconds on the sandbox (the install a minute); this only keeps a hung one from holding CI. */
const TIMEOUT_MS = 300_000;
const JS = new Set(['js', 'javascript', 'mjs']);
const SHELL = new Set(['sh', 'bash', 'shell']);

const unlisted = readdirSync(join(repo, 'docs/guide')).filter((name) => name.endsWith('.md') && !GUIDES.includes(name.slice(0, -3)));
if (unlisted.length > 0) fail(`guides not in GUIDES of scripts/docs-blocks.mjs (so never tested): ${unlisted.join(', ')}`);

/** A page's fenced blocks: language, first line, the skip reason before it, and its text. */
function blocksOf(page) {
  const lines = readFileSync(join(repo, page), 'utf8').split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    if (end === -1) fail(`${page}:${i + 1}: a fence that never closes`);
    const skip = /^<!--\s*skip-test:\s*(.+?)\s*-->$/.exec(lines[i - 1] ?? '')?.[1];
    found.push({ page, line: i + 1, language: fence[1], skip, code: lines.slice(i + 1, end).join('\n') + '\n' });
    i = end;
  }
  return found;
}

/** The regular expression an expected output stands for: `…` any text in a line, a line of `…` any lines. */
function outputPattern(expected) {
  const lines = expected.trimEnd().split('\n').map((line) => line.trimEnd());
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const body = lines.map((line) => (line === '…' ? '(?:[^\\n]*\\n)*?[^\\n]*' : line.split('…').map(escape).join('[^\\n]*'))).join('\\n');
  return new RegExp(`^${body}$`);
}

/** Ends the run: the message says which block, and what it printed. */
function fail(message) {
  throw new Error(`doc blocks: ${message}`);
}

const work = mkdtempSync(join(tmpdir(), 'socialstream-docs-'));
const state = join(work, '.shell');
mkdirSync(state);
// Where a reader's clone would be: the quickstart installs ../socialstream/socialstream-VERSION.tgz.
const clone = join(work, 'socialstream');
mkdirSync(clone);
// `npm run test:docs -- TARBALL` takes a tarball packed already (editing a page, one pack is enough).
const packed = process.argv[2];
if (packed) {
  copyFileSync(packed, join(clone, basename(packed)));
} else {
  console.log(`packing the tarball into ${clone}`);
  const pack = spawnSync('npm', ['pack', '--pack-destination', clone, '--loglevel=error'], { cwd: repo, encoding: 'utf8' });
  if (pack.status !== 0) fail(`npm pack failed:\n${pack.stderr}`);
}

// A terminal of a reader who never set SOCIALSTREAM_*: none of ours, nor npm's `npm run` variables.
// npm is told to prefer its cache, so the install works offline once the cache holds the dependencies.
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(SOCIALSTREAM_|npm_|INIT_CWD$)/.test(name)));
Object.assign(baseEnv, { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' });
writeFileSync(join(state, 'cwd'), work);
writeFileSync(join(state, 'env'), '');

const groups = [];
/** Runs one shell block as the next command of the reader's terminal; resolves with its status and output. */
function runShell(code) {
  const script = [
    'set -eo pipefail',
    `cd "$(cat '${state}/cwd')"`,
    `source '${state}/env'`,
    'exec 2>&1',
    code,
    `pwd > '${state}/cwd'`,
    `export -p | grep -v -E '^declare -x (OLDPWD|PWD|SHLVL|_)=' > '${state}/env'`,
  ].join('\n');
  return new Promise((done) => {
    // Its own process group, so the processes it leaves in the background can be ended with it.
    const child = spawn('bash', ['-c', script], { env: baseEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    groups.push(child.pid);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    // 'exit', not 'close': a process left in the background may hold the pipe; give the output a moment.
    child.on('exit', (status, signal) => {
      clearTimeout(timer);
      setTimeout(() => done({ status: status ?? signal, output }), 100);
    });
  });
}

function endGroups() {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // that group has ended
    }
  }
}

let passed = 0;
let skipped = 0;
const written = [];
try {
  for (const page of PAGES) {
    const blocks = blocksOf(page);
    for (const [index, block] of blocks.entries()) {
      const where = `${block.page}:${block.line}`;
      const runnable = JS.has(block.language) || SHELL.has(block.language);
      if (!runnable) continue;
      if (block.skip) {
        skipped++;
        console.log(`skip ${where}: ${block.skip}`);
        continue;
      }
      if (JS.has(block.language)) {
        const name = /^\/\/ ([\w.-]+\.m?js)\b/.exec(block.code)?.[1];
        if (!name) fail(`${where}: a JavaScript block starts with \`// NAME.js\`, the file a later shell block runs`);
        writeFileSync(join(readFileSync(join(state, 'cwd'), 'utf8').trim(), name), block.code);
        written.push({ name, where });
        passed++;
        console.log(`ok   ${where}: saved as ${name}`);
        continue;
      }
      const started = performance.now();
      const { status, output } = await runShell(block.code);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (status !== 0) fail(`${where}: exit ${status} (${seconds} s)\n${output}`);
      const next = blocks[index + 1];
      if (next?.language === 'text' && !next.skip) {
        if (!outputPattern(next.code).test(output.trimEnd().split('\n').map((line) => line.trimEnd()).join('\n'))) {
          fail(`${where}: printed other than ${next.page}:${next.line} shows (${seconds} s)\n--- printed\n${output}--- shown\n${next.code}`);
        }
      }
      for (const file of written.filter(({ name }) => block.code.includes(name))) file.run = true;
      passed++;
      console.log(`ok   ${where} (${seconds} s)${next?.language === 'text' ? ', output as shown' : ''}`);
    }
  }
  const neverRun = written.filter((file) => !file.run);
  if (neverRun.length > 0) fail(`JavaScript blocks no shell block runs: ${neverRun.map(({ name, where }) => `${name} (${where})`).join(', ')}`);
  console.log(`doc blocks: ${passed} passed, ${skipped} skipped`);
  rmSync(work, { recursive: true, force: true });
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  console.error(`the project is left in ${work}`);
  process.exitCode = 1;
} finally {
  endGroups();
}
