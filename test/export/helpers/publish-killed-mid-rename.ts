/**
 * A publish killed -9 between two of its renames, run as a child process:
 * `node --import tsx publish-killed-mid-rename.ts <records.json> <dir> <options.json>`.
 *
 * It wraps `rename` (before the engine is loaded) so that the second rename of a part into the
 * dataset's partition folders kills the process once the first is done: its journal is written, one
 * part is in place and the rest are still staged. A kill at a random moment rarely lands in that window, which takes
 * microseconds; this lands in it every time.
 */
import { readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const fsPromises = require('node:fs/promises') as typeof import('node:fs/promises');
const rename = fsPromises.rename;
/** The rename of the first part into place. */
let first: Promise<void> | undefined;
fsPromises.rename = async (from, to) => {
  // A part's place is a partition folder of the dataset; staging and state live under `_dataset/`.
  const into = String(to);
  if (/\/_date=[^/]+\/part-[^/]+$/.test(into) && !into.includes('/_dataset/')) {
    if (first === undefined) return (first = rename(from, to));
    // A publish moves several parts at once: every later one waits until the first is in place, and
    // the first of them to get there dies, so exactly one part is in place whatever the timing.
    await first;
    process.kill(process.pid, 'SIGKILL');
  }
  return rename(from, to);
};
// The engine imports `rename` by name: its binding follows the module object only once synced.
syncBuiltinESMExports();

const [recordsFile, dir, optionsFile] = process.argv.slice(2);
const { recordsIntoDataset, closeServed } = await import('./served-records.ts');
await recordsIntoDataset(JSON.parse(readFileSync(recordsFile, 'utf8')) as object[], dir, JSON.parse(readFileSync(optionsFile, 'utf8')) as Parameters<typeof recordsIntoDataset>[2]);
await closeServed();
// Reaching here means no second rename happened: the parent sees exit 0 rather than SIGKILL.
