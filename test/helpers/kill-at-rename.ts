/**
 * Kills this process -9 at a chosen rename, for the child processes of the kill tests. Every file a
 * publish writes is put in place by a rename (the commit, the claim, the journal, the parts, the walk
 * states), so each step can be named; a kill at a random moment rarely lands in a window of
 * microseconds, this one always does. Call it before the engine is loaded: the engine imports
 * `rename` by name, and its binding follows the module object only once synced.
 *
 * A publish moves several parts at once, so matching renames may be in flight together. The kill
 * waits for the earlier ones, and holds back the later ones: killed `before` the `nth`, exactly
 * `nth − 1` matching renames are done; killed `after` it, exactly `nth`, whatever the timing.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

/** A part put into its partition folder (a pass's staged parts and the key indexes live under `_dataset/`). */
export const PART_PLACED = '^(?!.*/_dataset/).*/_date=[^/]+/part-[^/]+$';

/** Kills the process just `before` or just `after` the `nth` rename whose target matches `pattern`. */
export function killAtRename(when: string, pattern: string, nth: string): void {
  const target = new RegExp(pattern);
  const require = createRequire(import.meta.url);
  const fsPromises = require('node:fs/promises') as typeof import('node:fs/promises');
  const rename = fsPromises.rename;
  const earlier: Promise<void>[] = [];
  let kill: Promise<void> | undefined;
  fsPromises.rename = async (from, to) => {
    if (!target.test(String(to))) return rename(from, to);
    if (kill !== undefined) {
      // After the chosen one: it goes only should the process survive the chosen rename (a failed one).
      await kill.catch(() => undefined);
      return rename(from, to);
    }
    if (earlier.length + 1 < Number(nth)) {
      const done = rename(from, to);
      earlier.push(done.catch(() => undefined));
      return done;
    }
    kill = (async () => {
      await Promise.all(earlier);
      if (when === 'before') process.kill(process.pid, 'SIGKILL');
      await rename(from, to);
      process.kill(process.pid, 'SIGKILL');
    })();
    return kill;
  };
  syncBuiltinESMExports();
}
