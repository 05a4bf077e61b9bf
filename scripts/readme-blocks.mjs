/* global console, performance, process */
// Runs every TypeScript block of a README as a program, the way a user pastes one into a file of a
// fresh ES-module project that installed socialstream: each block in its own folder of that project,
// run with tsx, against the service that SOCIALSTREAM_BASE_URL and SOCIALSTREAM_API_KEY name (the
// tarball proof starts a sandbox for them). A block marked ```ts fragment is listed, not run.
//
//   node scripts/readme-blocks.mjs README.md PROJECT_DIR TSX_LOADER
//
// Prints one line a block and closes with "README blocks: N passed, N failed, N skipped"; exits 1
// when a block fails or none ran.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [readme, project, tsx] = process.argv.slice(2);
if (!readme || !project || !tsx) throw new TypeError('usage: readme-blocks.mjs README.md PROJECT_DIR TSX_LOADER');
/** A block runs in a second or two on the sandbox; this only keeps a hung one from holding CI. */
const TIMEOUT_MS = 60_000;

/** The README's ```ts blocks, each with the line it starts on and the heading above it. */
function blocks(markdown) {
  const found = [];
  let heading = '';
  let open;
  markdown.split('\n').forEach((line, index) => {
    if (open) {
      if (line.startsWith('```')) {
        found.push(open);
        open = undefined;
      } else open.code += `${line}\n`;
      return;
    }
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    const fence = /^```(\S*)\s*(.*)$/.exec(line);
    if (!fence) return;
    open = { language: fence[1], fragment: fence[2].split(/\s+/).includes('fragment'), line: index + 1, heading, code: '' };
  });
  return found.filter((block) => block.language === 'ts');
}

const all = blocks(readFileSync(readme, 'utf8'));
const root = join(project, 'readme-blocks');
rmSync(root, { recursive: true, force: true });
let passed = 0;
let failed = 0;
let skipped = 0;
for (const [i, block] of all.entries()) {
  const name = `line ${block.line} (${block.heading})`;
  if (block.fragment) {
    skipped++;
    console.log(`skip ${name}: marked fragment`);
    continue;
  }
  // Its own folder: blocks write files (posts.parquet, data/) and must not see each other's.
  const dir = join(root, `block-${i + 1}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'app.ts'), block.code);
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--import', tsx, 'app.ts'], { cwd: dir, encoding: 'utf8', timeout: TIMEOUT_MS });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (run.status === 0) {
    passed++;
    console.log(`ok   ${name} (${seconds} s)`);
  } else {
    failed++;
    const why = run.error ? run.error.message : `exit ${run.status ?? run.signal}`;
    console.log(`FAIL ${name} (${seconds} s): ${why}\n${(run.stderr || run.stdout).trim().split('\n').slice(0, 12).join('\n')}`);
  }
}
console.log(`README blocks: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
