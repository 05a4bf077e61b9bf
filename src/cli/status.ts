/** `socialstream status --queue URL [--json]`: what the queue's runs and workers are doing (`queueStatus`). */
import { parseArgs, UsageError, type FlagSpec } from './args.ts';
import { EXIT } from './failure.ts';
import type { CommandHelp } from './help.ts';
import { runController } from './run-controller.ts';

const FLAGS: FlagSpec[] = [
  { name: 'queue', kind: 'string', value: 'URL', help: 'the queue: redis://HOST:PORT/DB' },
  { name: 'json', kind: 'boolean', help: 'print the status as one JSON object on stdout (for scripts)' },
];

export const STATUS_HELP: CommandHelp = {
  command: 'status',
  summary: "what the queue's exports are doing: walks done / running / waiting / failed, credits spent of the budget",
  usage: ['status --queue redis://HOST:PORT/DB [--json]'],
  about: `Per export in the queue, its current run: walks done / running / waiting / parked (a spent
budget) / failed, credits spent of its budget, records written, pages, each failed walk with its
error; and every worker that stopped for its key.`,
  flags: FLAGS,
  examples: ['status --queue redis://127.0.0.1:6379/0', 'status --queue redis://127.0.0.1:6379/0 --json   # for scripts'],
  notes: `exit codes: 2 a queue address that cannot work (not Redis, a password refused or missing, a database
the server lacks, a TLS mismatch), 5 Redis cannot be reached.`,
};

export async function runStatus(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.positionals.length > 0 || Object.keys(args.params).length > 0) throw new UsageError('status takes no words, only flags');
  const url = args.flags.queue;
  if (typeof url !== 'string') throw new UsageError('status needs --queue redis://HOST:PORT/DB');
  const { describeStatus, queueStatus } = await import('../queue/status.ts');
  const run = runController();
  try {
    const status = await queueStatus(url, { signal: run.controller.signal });
    process.stdout.write((args.flags.json === true ? JSON.stringify(status) : describeStatus(status)) + '\n');
    return EXIT.ok;
  } finally {
    run.dispose();
  }
}
