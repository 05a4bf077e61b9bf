/**
 * `socialstream`: the command line. Each command lives in its own module; this one only picks the
 * command, and turns whatever it throws into one line on stderr and an exit code.
 */
import { explain, exitCodeOf } from './failure.ts';
import { UsageError } from './args.ts';
import { runOps } from './ops.ts';
import { runCredits } from './credits.ts';
import { runExport } from './export.ts';
import { runSandboxCommand } from '../sandbox/cli.ts';

const USAGE = `socialstream: every page of the Social Data Extraction API, as records and files

usage:
  socialstream ops                                   the operations, their parameters and paging
  socialstream credits                               the balance of the key in SOCIALSTREAM_API_KEY
  socialstream export <op-id> key=value ... --out FILE.(ndjson|csv|parquet) [options]
  socialstream sandbox [--port N] [--credits N] [--latency MS] [--fault-rate P] [--seed S]

Run 'socialstream <command> --help' for a command's options.
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
  const run = COMMANDS[command];
  try {
    if (!run) throw new UsageError(`unknown command "${command}"`);
    return (await run(rest)) ?? 0;
  } catch (error) {
    const code = exitCodeOf(error);
    const hint = (error as { resumeHint?: string }).resumeHint;
    process.stderr.write(explain(error, hint) + '\n');
    if (debug && error instanceof Error && error.stack) process.stderr.write(error.stack + '\n');
    return code;
  }
}

process.exitCode = await main(process.argv.slice(2));
