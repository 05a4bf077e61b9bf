/**
 * `recordsIntoDataset` killed -9 at a chosen rename, run as a child process:
 * `node --import tsx records-killed-at.ts <before|after> <pattern> <nth> <records.json> <dir> <options.json>`.
 *
 * As `test/cli/helpers/cli-killed-at.ts` does for the CLI, it wraps `rename` before the engine is
 * loaded: the `nth` rename whose target matches `pattern` (a regular expression) kills the process
 * just before or just after it. Here the records are a test's own (served over HTTP by
 * `served-records.ts`), so a test can name a step of a publish, or of the rewrite after it, for
 * records no sandbox resource serves.
 */
import { readFileSync } from 'node:fs';
import { killAtRename } from '../../helpers/kill-at-rename.ts';

const [when, pattern, nth, recordsFile, dir, optionsFile] = process.argv.slice(2);
killAtRename(when, pattern, nth);

const { recordsIntoDataset, closeServed } = await import('./served-records.ts');
await recordsIntoDataset(JSON.parse(readFileSync(recordsFile, 'utf8')) as object[], dir, JSON.parse(readFileSync(optionsFile, 'utf8')) as Parameters<typeof recordsIntoDataset>[2]);
await closeServed();
// Reaching here means no such rename happened: the parent sees exit 0 rather than SIGKILL.
