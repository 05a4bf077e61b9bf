/**
 * Kills this process -9 at a chosen rename, for the child processes of the kill tests. Every file a
 * publish writes is put in place by a rename (the commit, the claim, the journal, the parts, the walk
 * states), so each step can be named; a kill at a random moment rarely lands in a window of
 * microseconds, this one always does. Call it before the engine is loaded: the engine imports
 * `rename` by name, and its binding follows the module object only once synced.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

/** Kills the process just `before` or just `after` the `nth` rename whose target matches `pattern`. */
export function killAtRename(when: string, pattern: string, nth: string): void {
  const target = new RegExp(pattern);
  const require = createRequire(import.meta.url);
  const fsPromises = require('node:fs/promises') as typeof import('node:fs/promises');
  const rename = fsPromises.rename;
  let met = 0;
  fsPromises.rename = async (from, to) => {
    const kill = target.test(String(to)) && ++met === Number(nth);
    if (kill && when === 'before') process.kill(process.pid, 'SIGKILL');
    await rename(from, to);
    if (kill) process.kill(process.pid, 'SIGKILL');
  };
  syncBuiltinESMExports();
}
