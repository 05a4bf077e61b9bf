/**
 * `npm run bench`: runs every benchmark in `bench/` one after another, each in its own process so
 * that one's heap and sockets do not colour the next one's figures. Every `bench/*.ts` but this one
 * (and files starting with `_`) is a bench, by its name: `npm run bench -- sinks export` runs only those.
 * Words after a second `--` go to each bench run: `npm run bench -- inputs-memory -- 100000 1000000`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const split = args.indexOf('--');
const wanted = new Set(split === -1 ? args : args.slice(0, split));
const passed = split === -1 ? [] : args.slice(split + 1);
const benches = readdirSync(here)
  .filter((name) => name.endsWith('.ts') && name !== 'index.ts' && !name.startsWith('_'))
  .map((name) => name.slice(0, -3))
  .filter((name) => wanted.size === 0 || wanted.has(name))
  .sort();

let failed = 0;
for (const name of benches) {
  console.log(`\n## bench/${name}`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`), ...passed], { stdio: 'inherit' });
  if (run.status !== 0) {
    failed++;
    console.log(`bench/${name} exited with ${run.status ?? run.signal}`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
