/**
 * `socialstream`: the command line. Each command lives in its own module; this one only picks the
 * command, and turns whatever it throws into one line on stderr and an exit code.
 */
import { readFileSync } from 'node:fs';
import { keyScrubber } from '../transport.ts';
import { explain, exitCodeOf } from './failure.ts';
import { didYouMean, UsageError } from './args.ts';
import { watchStdout } from './stdout.ts';
import { runOps } from './ops.ts';
import { runCredits } from './credits.ts';
import { runExport } from './export.ts';
import { runSandboxCommand } from '../sandbox/cli.ts';

const USAGE = `socialstream: every page of the Social Data Extraction API, as records and files

usage:
  socialstream --version                             the version of socialstream
  socialstream ops                                   the operations, their parameters and paging
  socialstream credits                               the balance of the key in SOCIALSTREAM_API_KEY
  socialstream export <op-id> key=value ... --out FILE.(ndjson|csv|parquet) [options]
  socialstream sandbox [--port N] [--credits N] [--latency MS] [--fault-rate P] [--seed S]

Run 'socialstream <command> --help' for a command's options. Every command also takes
  --debug                                            on failure, print the stack trace after the message
Environment: SOCIALSTREAM_API_KEY (your key) and SOCIALSTREAM_BASE_URL (the service address); --sandbox needs neither.`;

const COMMANDS: Record<string, (argv: string[]) => Promise<number | void>> = {
  ops: runOps,
  credits: runCredits,
  export: runExport,
  sandbox: runSandboxCommand,
};

async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  const words = argv.filter((word) => word !== '--debug');
  const [command, ...rest] = words;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return command === undefined ? 2 : 0;
  }
  if (command === '--version') {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`socialstream ${version}\n`);
    return 0;
  }
  const run = COMMANDS[command];
  try {
    if (!run) throw new UsageError(`unknown command "${command}"${didYouMean(command, Object.keys(COMMANDS))}`);
    return (await run(rest)) ?? 0;
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
