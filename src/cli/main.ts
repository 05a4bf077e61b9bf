#!/usr/bin/env node
/**
 * `socialstream`: the command line. Each command lives in its own module; this one only picks the
 * command, and turns whatever it throws into one line on stderr and an exit code.
 */
import { readFileSync } from 'node:fs';
import { keyScrubber } from '../scrub.ts';
import { explain, exitCodeOf } from './failure.ts';
import { didYouMean, UsageError } from './args.ts';
import { watchStdout } from './stdout.ts';

const USAGE = `socialstream: every page of the Social Data Extraction API, as records and files

usage:
  socialstream --version                             the version of socialstream
  socialstream ops                                   the operations, their parameters and paging
  socialstream credits                               the balance of the key in SOCIALSTREAM_API_KEY
  socialstream export <op-id> key=value ... (--out FILE.(ndjson|csv|parquet) | --dataset DIR) [options]
  socialstream dataset info DIR [--json]             what a dataset holds: operations, rows, partitions, parts, marks, schema, drift
  socialstream dataset compact DIR [--partition P]   rewrite a dataset's many small part files as few, in place
  socialstream export <op-id> ... --inputs FILE --dataset DIR --queue redis://HOST:PORT/DB [--max-credits N] [--rate N]
                                                     enqueue one job a walk for workers, with one credit budget
  socialstream worker --queue URL [--concurrency N]  take walks from the queue (key from SOCIALSTREAM_API_KEY)
  socialstream status --queue URL [--json]           walks done / running / waiting / failed, credits spent of the budget
  socialstream sandbox [--port N] [--host H] [--credits N] [--latency MS] [--fault-rate P] [--seed S] [--dialect spec|service]

Run 'socialstream <command> --help' for a command's options. Every command also takes
  --debug                                            on failure, print the stack trace after the message
Environment: SOCIALSTREAM_API_KEY (your key) and SOCIALSTREAM_BASE_URL (the service address); --sandbox needs neither.`;

type Command = (argv: string[]) => Promise<number | void>;

// Each command's module is imported only when it runs: the client's dependencies (undici, rxjs) take
// longer to load than `--help` or `--version` may take in all.
const COMMANDS: Record<string, () => Promise<Command>> = {
  ops: async () => (await import('./ops.ts')).runOps,
  credits: async () => (await import('./credits.ts')).runCredits,
  export: async () => (await import('./export.ts')).runExport,
  dataset: async () => (await import('./dataset.ts')).runDataset,
  sandbox: async () => (await import('../sandbox/cli.ts')).runSandboxCommand,
  worker: async () => (await import('./worker.ts')).runWorkerCommand,
  status: async () => (await import('./status.ts')).runStatus,
};

/** The version in the package's own package.json: the nearest one above this module, in src/ or dist/. */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dir.pathname === '/') throw error;
    }
  }
}

async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  const words = argv.filter((word) => word !== '--debug');
  const [command, ...rest] = words;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(packageVersion() + '\n');
    return 0;
  }
  const load = COMMANDS[command];
  try {
    if (!load) throw new UsageError(`unknown command "${command}"${didYouMean(command, Object.keys(COMMANDS))}`);
    return (await (await load())(rest)) ?? 0;
  } catch (error) {
    const code = exitCodeOf(error);
    const hint = (error as { resumeHint?: string }).resumeHint;
    // The client scrubs its own messages; this catches the key in any other (a file name, a parameter).
    const scrub = keyScrubber(process.env.SOCIALSTREAM_API_KEY?.trim() ?? '');
    process.stderr.write(scrub(explain(error, hint)) + '\n');
    if (debug && error instanceof Error && error.stack) process.stderr.write(scrub(error.stack) + '\n');
    return code;
  }
}

watchStdout();
process.exitCode = await main(process.argv.slice(2));
