/**
 * `socialstream worker --queue URL [--concurrency N] [--lease MS]`: takes walks from the queue until
 * stopped (Ctrl-C, SIGTERM: its walks stop cleanly and go back to the queue) or until its key is
 * refused or out of credits (exit 3 or 4, its walks back in the queue for the other workers).
 */
import { checkWorkerCounts, type WorkerCounts } from '../queue/worker-options.ts';
import { asFlags, optionsOf, parseArgs, UsageError, type FlagSpec } from './args.ts';
import type { CommandHelp } from './help.ts';
import { InterruptedError } from './failure.ts';
import { runController } from './run-controller.ts';

const FLAGS: FlagSpec[] = [
  { name: 'queue', kind: 'string', value: 'URL', help: 'the queue: redis://HOST:PORT/DB' },
  { name: 'concurrency', option: 'concurrency', kind: 'integer', value: 'N', help: 'walks at once (default 4)' },
  { name: 'lease', option: 'leaseMs', kind: 'integer', value: 'MS', help: "a walk's lease: a dead worker's walk is taken over after about twice this (default 15000)" },
  { name: 'work', option: 'work', kind: 'string', value: 'DIR', help: 'for datasets on a store (s3://…): the local folder this worker stages in (default socialstream-work in the system temporary folder)' },
  { name: 'park', option: 'parkMs', kind: 'integer', value: 'MS', help: 'how long a walk a spent budget parked waits before it is looked at again (default 30000; raising the budget takes it at once)' },
];

export const WORKER_HELP: CommandHelp = {
  command: 'worker',
  summary: 'take walks from the queue and write them into their dataset (key from SOCIALSTREAM_API_KEY)',
  usage: ['worker --queue redis://HOST:PORT/DB [--concurrency N] [--lease MS] [--park MS] [--work DIR]'],
  about: `Takes walks that 'socialstream export … --queue URL' enqueued and writes them into their dataset,
with the key in SOCIALSTREAM_API_KEY (each worker its own; it never goes to Redis). Run one on
every machine that sees the dataset directory at the same path, or the dataset's bucket (s3://…,
each worker staging in its own --work folder). While Redis cannot be reached it
waits, trying every 5 s (one line an attempt).`,
  flags: FLAGS,
  examples: [
    'worker --queue redis://127.0.0.1:6379/0                   # walk queued exports until Ctrl-C',
    'worker --queue redis://queue.internal:6379/2 --concurrency 8',
  ],
  notes: `exit codes: 2 a key that cannot be sent, or a queue address that cannot work (not Redis, a password
refused or missing, a database the server lacks, a TLS mismatch), 3 the key was
refused, 4 its account is out of credits (its walks went back to the queue), 130/143 stopped by
SIGINT/SIGTERM (its walks went back to the queue).`,
};

export async function runWorkerCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.positionals.length > 0 || Object.keys(args.params).length > 0) throw new UsageError('worker takes no words, only flags');
  const url = args.flags.queue;
  if (typeof url !== 'string') throw new UsageError('worker needs --queue redis://HOST:PORT/DB');
  const { work, ...counts } = optionsOf(args.flags, FLAGS) as WorkerCounts & { work?: string };
  // The library's rule, before the key is looked at or the queue's client loaded.
  try {
    checkWorkerCounts(counts);
  } catch (error) {
    throw asFlags(error, FLAGS);
  }
  // Before Redis is asked anything: a key that cannot be sent is refused as `export` refuses it.
  // Loaded here, not above: the client's dependencies would slow every `help` that reads this module's help.
  const { checkEnvironment } = await import('./connection.ts');
  await checkEnvironment();
  const { runWorker } = await import('../queue/worker.ts');
  const run = runController();
  try {
    const outcome = await runWorker({
      queue: url,
      ...counts,
      ...(work === undefined ? {} : { work }),
      signal: run.controller.signal,
      log: (line) => process.stderr.write(`socialstream worker: ${line}\n`),
    });
    if (outcome.error !== undefined) throw outcome.error;
    const reason: unknown = run.controller.signal.reason;
    throw reason instanceof InterruptedError ? reason : new InterruptedError();
  } finally {
    run.dispose();
  }
}
