/**
 * `socialstream export <op-id> key=value ... (--out FILE | --dataset DIR)`: a shell over the export
 * engine (`src/export/`). Its words become the engine's options, the signals that stop a command
 * become its `signal`, and its summary becomes a few lines on stderr (or one JSON object on stdout
 * with `--json`) and an exit code. `--out -` streams NDJSON to stdout instead: nothing is staged.
 */
import { existsSync } from 'node:fs';
import { exportTo } from '../export-to.ts';
import { counted, terminalLine } from '../export/progress.ts';
import { ParamSets } from '../export/sources.ts';
import { describeSummary } from '../export/summary.ts';
import type { ExportSummary } from '../export/types.ts';
import { walkName } from '../operations/walk-name.ts';
import { ValidationError, InsufficientCreditsError, LockLostError } from '../errors.ts';
import type { RedisLockSession } from '../queue/redis-locks.ts';
import { asFlags, parseArgs } from './args.ts';
import { connect } from './connection.ts';
import { EXPORT_FLAGS, planExport, repeatsNote, type ExportPlan } from './export-plan.ts';
import { EXIT, InterruptedError, RejectedInputsError, stopWith } from './failure.ts';
import { runController } from './run-controller.ts';
import { exportToStdout } from './stdout-export.ts';

export async function runExport(argv: string[]): Promise<number> {
  const args = parseArgs(argv, EXPORT_FLAGS);
  const plan = await planExport(args.positionals, args.params, args.flags);
  if (plan.stdout) return exportToStdout(plan);
  if (plan.queue !== undefined) return enqueue(plan, plan.queue);
  // Connect first: a missing key or a bad address then fails before any file is touched.
  const maxConcurrentRequests = Math.max(8, plan.options.concurrency ?? 4, plan.options.pageConcurrency ?? 0);
  const connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests });
  const run = runController();
  let summary: ExportSummary;
  let leases: RedisLockSession | undefined;
  try {
    // Before any request: an address that cannot work costs nothing.
    leases = plan.locks === undefined ? undefined : await redisLocks(plan.locks, run.controller.signal);
    // The sets were checked by `planExport`: one stream opens them all, none is made a line.
    const source = new ParamSets(connection.client.stream(plan.opId, plan.inputs[0]), plan.inputs);
    const bar = terminalLine(process.stderr);
    const signal = leases === undefined ? run.controller.signal : AbortSignal.any([run.controller.signal, leases.lost]);
    summary = await exportTo(source, { ...plan.options, signal, progress: bar ?? false, ...(leases === undefined ? {} : { locks: leases.locks }) });
  } catch (error) {
    stopWith(error, resumeHint(plan, error));
  } finally {
    run.dispose();
    await leases?.close();
    await connection.close();
  }
  // A lease taken over stops the run as a signal does; it says so rather than "interrupted".
  return report(plan, summary, leases?.lost.aborted === true ? leases.lost.reason : run.controller.signal.reason);
}

/** `--locks URL`: the dataset's locks as Redis leases; the queue's client is loaded only then. */
async function redisLocks(locks: NonNullable<ExportPlan['locks']>, signal: AbortSignal): Promise<RedisLockSession> {
  const { openRedisLocks } = await import('../queue/redis-locks.ts');
  try {
    return await openRedisLocks(locks.url, { signal, ...(locks.leaseMs === undefined ? {} : { leaseMs: locks.leaseMs }) });
  } catch (error) {
    throw asFlags(error, EXPORT_FLAGS);
  }
}

/** `--queue`: puts the walks and the run's budget in the queue, says what it did, and returns. */
async function enqueue(plan: ExportPlan, queue: NonNullable<ExportPlan['queue']>): Promise<number> {
  // Loaded only here: a plain export never needs the queue's client.
  const { enqueueExport } = await import('../queue/enqueue.ts');
  const { options } = plan;
  // Ctrl-C or SIGTERM ends a wait for Redis at once.
  const run = runController();
  const result = await enqueueExport({
    queue: queue.url,
    op: plan.opId,
    inputs: plan.inputs,
    dataset: plan.output,
    ...(options.maxCredits === undefined ? {} : { maxCredits: options.maxCredits }),
    ...(queue.rate === undefined ? {} : { rate: queue.rate }),
    ...(options.partition === undefined ? {} : { partition: options.partition }),
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    ...(options.pageConcurrency === undefined ? {} : { pageConcurrency: options.pageConcurrency }),
    ...(options.layout === undefined ? {} : { layout: options.layout }),
    ...(options.since === undefined ? {} : { since: options.since }),
    ...(options.until === undefined ? {} : { until: options.until }),
    signal: run.controller.signal,
  })
    .catch((error: unknown) => {
      throw asFlags(error, EXPORT_FLAGS);
    })
    .finally(() => run.dispose());
  if (plan.json) process.stdout.write(JSON.stringify(result) + '\n');
  const budget = result.budget === undefined ? 'no credit budget' : `a budget of ${counted(result.budget, 'credit')}`;
  const what = result.started ? `started run ${result.run}` : `run ${result.run} is still active: joined it`;
  process.stderr.write(
    `socialstream: ${plan.opId} into ${result.dataset}: ${what}; ${counted(result.added, 'walk')} enqueued (${result.walks} in the run), ${budget}` +
      `${result.rate === undefined ? '' : `, ${result.rate} requests a second`}. Workers: socialstream worker --queue URL; progress: socialstream status --queue URL\n`,
  );
  return EXIT.ok;
}

/** Prints the summary and picks the exit code: 0 for a run that ended by itself or by a limit. */
function report(plan: ExportPlan, summary: ExportSummary, reason: unknown): number {
  if (plan.json) process.stdout.write(JSON.stringify(summary) + '\n');
  const repeats = repeatsNote(plan);
  const { maxCredits, maxPages, limit } = plan.options;
  const flags = { maxCredits: `--max-credits ${maxCredits}`, maxPages: `--max-pages ${maxPages}`, limit: `--limit ${limit}` };
  process.stderr.write(describeSummary(summary, flags) + repeats + '\n');
  for (const { params, message } of summary.rejected) {
    const line = plan.inputsFile === undefined ? '' : `${plan.inputsFile} line ${lineOf(plan, params)}: `;
    process.stderr.write(`socialstream: ${line}rejected by the service: ${message}\n`);
  }
  if (summary.stoppedBy === 'signal') stopWith(reason instanceof InterruptedError || reason instanceof LockLostError ? reason : new InterruptedError(), resumeHint(plan));
  if (summary.stoppedBy === 'balance') {
    const { available = 0, required = 1 } = summary.balance ?? {};
    stopWith(new InsufficientCreditsError('out of credits', required, available), resumeHint(plan));
  }
  if (summary.rejected.length > 0) {
    if (plan.inputsFile === undefined) throw new ValidationError(summary.rejected[0].message, undefined);
    throw new RejectedInputsError(
      `${counted(summary.rejected.length, 'parameter set')} of ${plan.inputsFile} rejected by the service (above); the other walks were exported. ` +
        `Fix or remove those lines, then run the same command with --resume: finished walks are kept.`,
    );
  }
  return EXIT.ok;
}

function resumeHint(plan: ExportPlan, error?: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && ['LOCKED', 'HELD_STATE', 'OTHER_EXPORT', 'NOT_WRITABLE', 'STATE_DAMAGED', 'VALIDATION', 'STREAM_USED', 'DATASET', 'SCHEMA_DRIFT'].includes(code)) return undefined;
  // A run stopped before it could publish (a full disk) has no output to point to, only its staging.
  if (!existsSync(plan.output)) return `Nothing is written to ${plan.output} yet; what was staged is kept, and the same command with --resume continues it.`;
  return `The output so far is in ${plan.output}; run the same command with --resume to continue.`;
}

function lineOf(plan: ExportPlan, params: Record<string, string>): number | undefined {
  const name = walkName(params);
  const index = plan.inputs.findIndex((set) => walkName(set) === name);
  return plan.lines[index];
}
