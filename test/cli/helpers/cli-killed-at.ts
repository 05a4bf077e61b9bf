/**
 * The CLI killed -9 at a chosen step of its work, run as a child process:
 * `node --import tsx cli-killed-at.ts <before|after> <pattern> <nth> <socialstream arguments…>`.
 *
 * It wraps `rename` before the engine is loaded (`test/helpers/kill-at-rename.ts`): the `nth` rename
 * whose target matches `pattern` (a regular expression) kills the process just before or just after
 * it. Every file a publish writes is put in place by a rename (the commit, the claim, the journal,
 * the parts, the walk states, the writer's own files), so each step of it can be named; a kill at a
 * random moment rarely lands in a window of microseconds, this one always does.
 */
import { killAtRename } from '../../helpers/kill-at-rename.ts';

const [when, pattern, nth] = process.argv.splice(2, 3);
killAtRename(when, pattern, nth);

// What is left of the arguments is the CLI's own (it reads `process.argv.slice(2)`).
await import('../../../src/cli/main.ts');
