/**
 * `socialstream export <op-id> key=value ... --out FILE`: the main job. Every walk's records go first
 * to a spool (NDJSON beside the output), one whole page at a time, flushed to disk, and only then does
 * the checkpoint move past that page. So after a crash, a 402 or Ctrl-C the spool and the checkpoint
 * agree, and `--resume` neither loses a record nor buys a finished page again. The output file in the
 * asked format is made from the spool: at the end, and also when a run fails, so the output written
 * so far is always a valid file.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Client, CreditBalance } from '../index.ts';
import type { OperationId } from '../operations/table.ts';
import { findOperation } from '../operations/table.ts';
import { checkParams } from '../operations/params.ts';
import { creditCap, mergeMap } from '../operators/index.ts';
import { fromNdjson } from '../../sinks/index.ts';
import { describeFlags, parseArgs, parseInputLine, UsageError, type FlagSpec } from './args.ts';
import { connect, type Connection } from './connection.ts';
import { fileSize, removeIfPresent, Spool } from './durable.ts';
import { assertSameExport, freshState, loadState, saveState, type ExportState } from './export-state.ts';
import { EXIT, InterruptedError, exitCodeOf, isResumable } from './failure.ts';
import { formatOf, publishOutput, type OutputFormat } from './output.ts';
import { pageBatches, type PageBatch } from './page-batches.ts';
import { Progress } from './progress.ts';
import { recordKey } from './record-key.ts';

const FLAGS: FlagSpec[] = [
  { name: 'out', kind: 'string', value: 'FILE', help: 'output file: .ndjson/.jsonl, .csv or .parquet; - for NDJSON on stdout' },
  { name: 'limit', kind: 'integer', value: 'N', help: 'stop after N records in all' },
  { name: 'max-pages', kind: 'integer', value: 'N', help: 'fetch at most N pages per parameter set' },
  { name: 'max-credits', kind: 'integer', value: 'N', help: 'spend at most N credits in all (every attempt counts, over every --resume)' },
  { name: 'dedupe', kind: 'string', value: 'FIELD', help: 'drop records whose FIELD (a dotted path, e.g. id) was already written' },
  { name: 'resume', kind: 'boolean', help: 'continue an interrupted export from its checkpoint (FILE.checkpoint.json)' },
  { name: 'inputs', kind: 'string', value: 'FILE', help: 'one parameter set per line (key=value ... or a JSON object); # comments' },
  { name: 'concurrency', kind: 'integer', value: 'N', help: 'walks in flight at once with --inputs (default 4)' },
  { name: 'sandbox', kind: 'boolean', help: 'use a built-in sandbox (synthetic data, no key, no credits)' },
  { name: 'help', kind: 'boolean', help: 'show this help' },
];

const HELP = `usage: socialstream export <op-id> key=value ... --out FILE [options]

  <op-id> is an operation path from 'socialstream ops', e.g. forum/subforum.
  key=value pairs are its parameters; with --inputs they apply to every line.

${describeFlags(FLAGS)}

exit codes: 0 done (also when --limit or --max-credits ended it), 2 usage or invalid parameters,
3 key refused, 4 out of credits, 5 service failure after retries, 130 interrupted.
After 3, 4, 5 and 130 the output so far is a valid file and --resume continues where it stopped.
`;

interface ExportPlan {
  opId: OperationId;
  inputs: Record<string, string>[];
  out: string;
  format: OutputFormat;
  limit: number | undefined;
  maxPages: number | undefined;
  maxCredits: number | undefined;
  dedupe: string | undefined;
  resume: boolean;
  concurrency: number;
  sandbox: boolean;
}

export async function runExport(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.flags.help) {
    process.stdout.write(HELP);
    return EXIT.ok;
  }
  const plan = await planExport(args.positionals, args.params, args.flags);
  return plan.out === '-' ? exportToStdout(plan) : exportToFile(plan);
}

async function planExport(
  positionals: string[],
  params: Record<string, string>,
  flags: Record<string, string | number | boolean>,
): Promise<ExportPlan> {
  const [opId, ...extra] = positionals;
  if (opId === undefined) throw new UsageError('export needs an operation id, e.g. forum/subforum (see socialstream ops)');
  if (extra.length > 0) throw new UsageError(`unexpected word "${extra[0]}": parameters are key=value`);
  const op = findOperation(opId);
  if (!op) throw new UsageError(`unknown operation "${opId}" (see socialstream ops)`);
  const out = flags.out;
  if (typeof out !== 'string' || out === '') throw new UsageError('export needs --out FILE');
  const inputs = typeof flags.inputs === 'string' ? await readInputs(flags.inputs, params) : [params];
  // Every parameter set is checked before the first request, so a typo on line 90 costs nothing.
  inputs.forEach((set, index) => {
    try {
      checkParams(op, set);
    } catch (error) {
      if (inputs.length > 1 && error instanceof Error) error.message = `inputs line set ${index + 1}: ${error.message}`;
      throw error;
    }
  });
  const plan: ExportPlan = {
    opId: op.id as OperationId,
    inputs,
    out,
    format: out === '-' ? 'ndjson' : formatOf(out),
    limit: optionalNumber(flags.limit),
    maxPages: optionalNumber(flags['max-pages']),
    maxCredits: optionalNumber(flags['max-credits']),
    dedupe: typeof flags.dedupe === 'string' ? flags.dedupe : undefined,
    resume: flags.resume === true,
    concurrency: optionalNumber(flags.concurrency) ?? 4,
    sandbox: flags.sandbox === true,
  };
  if (plan.concurrency < 1) throw new UsageError('--concurrency must be at least 1');
  if (plan.out === '-' && plan.resume) throw new UsageError('--resume needs a file: with --out - there is no checkpoint');
  return plan;
}

function optionalNumber(value: string | number | boolean | undefined): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

async function readInputs(path: string, common: Record<string, string>): Promise<Record<string, string>[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read the inputs file ${path}`);
  }
  const sets: Record<string, string>[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const params = parseInputLine(line, index + 1);
    if (params) sets.push({ ...common, ...params });
  });
  if (sets.length === 0) throw new UsageError(`the inputs file ${path} holds no parameter sets`);
  return sets;
}

/**
 * One controller ends a run's walks, whatever the reason: Ctrl-C or SIGTERM, a failure while saving,
 * or `--limit` reached. Aborting it releases a walk waiting at any gate and cancels requests in flight,
 * so ending never waits on a page nobody will read, and buys none.
 */
function runController(): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (): void => controller.abort(new InterruptedError('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    controller,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** The abort reason of a run that ended because it had all the records it was asked for. */
const LIMIT_REACHED = new Error('limit reached');

/**
 * The walks of an export as one stream of finished pages: resumed walks continue from their
 * checkpoints, finished ones are skipped, `--max-credits` caps every request they make together.
 */
function pagesOf(plan: ExportPlan, state: ExportState, client: Client, signal: AbortSignal): AsyncIterable<PageBatch> {
  const pending = state.walks.flatMap((walk, index) => (walk.done ? [] : [index]));
  const walkPages = (index: number): AsyncIterable<PageBatch> => {
    const walk = state.walks[index];
    const options = { maxPages: plan.maxPages, signal };
    const stream = walk.checkpoint ? client.resume(walk.checkpoint, options) : client.stream(plan.opId, walk.params, options);
    return pageBatches(stream, index);
  };
  const merged = mergeMap(walkPages, { concurrency: plan.concurrency, signal })(pending);
  if (plan.maxCredits === undefined) return merged;
  return creditCap<PageBatch>(Math.max(0, plan.maxCredits - state.credits), { onCap: 'stop' })(merged);
}

async function exportToFile(plan: ExportPlan): Promise<number> {
  const checkpointPath = `${plan.out}.checkpoint.json`;
  const spoolPath = `${plan.out}.spool.ndjson`;
  let state = await loadState(checkpointPath);
  if (plan.resume) {
    if (!state) throw new UsageError(`nothing to resume: no checkpoint at ${checkpointPath}`);
    assertSameExport(state, plan.opId, plan.inputs, checkpointPath);
    if (state.spoolBytes > 0 && (await fileSize(spoolPath)) === undefined) {
      throw new UsageError(`the spool ${spoolPath} is missing; delete ${checkpointPath} to start over`);
    }
  } else if (state) {
    throw new UsageError(`an interrupted export left ${checkpointPath}: add --resume to continue it, or delete it to start over`);
  }
  state ??= freshState(plan.opId, plan.out, plan.inputs);
  await mkdir(dirname(resolve(plan.out)), { recursive: true });

  const spool = await Spool.open(spoolPath, plan.resume ? state.spoolBytes : undefined);
  let connection: Connection | undefined;
  let outcome: RunOutcome;
  try {
    connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests: Math.max(8, plan.concurrency) });
    outcome = await fillSpool(plan, state, connection, spool, checkpointPath);
  } finally {
    await spool.close();
    await connection?.close();
  }

  const code = outcome.failure === undefined ? EXIT.ok : exitCodeOf(outcome.failure);
  if (outcome.failure !== undefined && !isResumable(code)) {
    await saveState(checkpointPath, state);
    throw outcome.failure;
  }
  const written = await publishOutput(spoolPath, plan.out, plan.format, { keepSpool: outcome.failure !== undefined });
  if (outcome.failure === undefined) {
    await removeIfPresent(checkpointPath);
  } else {
    await saveState(checkpointPath, state);
  }
  const { before, after } = outcome.balance;
  const balance = before && after ? `; balance ${before.credits} → ${after.credits}` : '';
  process.stderr.write(
    `${outcome.failure === undefined ? 'wrote' : 'stopped early; kept'} ${state.records} records ` +
      `(${state.pages} pages, ${outcome.credits} credits this run) to ${plan.out} (${written.bytes} bytes) ` +
      `in ${outcome.seconds.toFixed(1)} s${balance}\n`,
  );
  if (outcome.failure !== undefined) {
    throw Object.assign(outcome.failure as object, {
      resumeHint: `The output so far is in ${plan.out}; run the same command with --resume to continue.`,
    });
  }
  return EXIT.ok;
}

interface RunOutcome {
  /** What ended the run early, if anything did. */
  failure: unknown;
  /** Credits the service reported charging in this run. */
  credits: number;
  seconds: number;
  /** `/v1/credits` before and after (free), when the service answered. */
  balance: { before?: CreditBalance; after?: CreditBalance };
}

/**
 * Walks every unfinished parameter set into the spool, page by page, moving the checkpoint after each
 * page. Failures are returned, not thrown: the caller still has to publish what was fetched.
 */
async function fillSpool(
  plan: ExportPlan,
  state: ExportState,
  connection: Connection,
  spool: Spool,
  checkpointPath: string,
): Promise<RunOutcome> {
  const { client } = connection;
  const creditsBefore = state.credits;
  const pagesBefore = state.pages;
  // Every attempt at a page may have been charged, so attempts (not reported charges) bound --max-credits.
  let attempts = 0;
  const counting = client.events$.subscribe((event) => {
    if (event.type === 'request' && event.endpoint === plan.opId) attempts++;
  });
  const progress = new Progress(() => ({ records: state.records, pages: state.pages, credits: client.stats.credits }));
  const seen = plan.dedupe ? await keysInSpool(spool.path, plan.dedupe) : new Set<unknown>();
  const balance: RunOutcome['balance'] = {};
  balance.before = await client.credits().catch(() => undefined);
  const failure = await runPages(plan, state, client, seen, async (page, records) => {
    await spool.appendPage(records);
    const walk = state.walks[page.walk];
    walk.checkpoint = page.checkpoint;
    walk.done = page.last;
    state.spoolBytes = spool.bytes;
    state.records += records.length;
    state.pages = pagesBefore + client.stats.pages;
    state.credits = creditsBefore + attempts;
    await saveState(checkpointPath, state);
  });
  progress.stop();
  counting.unsubscribe();
  state.credits = creditsBefore + attempts;
  balance.after = await client.credits().catch(() => undefined);
  return { failure, credits: client.stats.credits, seconds: progress.elapsedSeconds(), balance };
}

/** `--out -`: NDJSON on stdout as records arrive; no spool, no checkpoint. */
async function exportToStdout(plan: ExportPlan): Promise<number> {
  const state = freshState(plan.opId, plan.out, plan.inputs);
  const connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests: Math.max(8, plan.concurrency) });
  let failure: unknown;
  try {
    failure = await runPages(plan, state, connection.client, new Set(), async (_page, records) => {
      let text = '';
      for (const record of records) text += JSON.stringify(record) + '\n';
      if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
      state.records += records.length;
    });
  } finally {
    await connection.close();
  }
  if (failure !== undefined) throw failure;
  const { pages, credits } = connection.client.stats;
  process.stderr.write(`wrote ${state.records} records (${pages} pages, ${credits} credits) to stdout\n`);
  return EXIT.ok;
}

/**
 * The loop both outputs share: every finished page, less the records `--dedupe` and `--limit` drop,
 * goes to `keep`; only once `keep` has finished may that walk request its next page. Returns what
 * ended the run early (an error, or the interrupt), or undefined when the walks ran out or the limit
 * was reached.
 */
async function runPages(
  plan: ExportPlan,
  state: ExportState,
  client: Client,
  seen: Set<unknown>,
  keep: (page: PageBatch, records: unknown[]) => Promise<void>,
): Promise<unknown> {
  const keyOf = plan.dedupe ? recordKey(plan.dedupe) : undefined;
  const run = runController();
  const { signal } = run.controller;
  try {
    for await (const page of pagesOf(plan, state, client, signal)) {
      try {
        let records = page.records;
        if (keyOf) records = records.filter((record) => firstSighting(seen, keyOf(record)));
        if (plan.limit !== undefined) records = records.slice(0, plan.limit - state.records);
        await keep(page, records);
      } catch (error) {
        run.controller.abort(error);
        throw error;
      }
      if (plan.limit !== undefined && state.records >= plan.limit) {
        run.controller.abort(LIMIT_REACHED);
        break;
      }
      page.saved();
    }
    return undefined;
  } catch (error) {
    const failure = signal.aborted ? signal.reason : error;
    return failure === LIMIT_REACHED ? undefined : failure;
  } finally {
    run.dispose();
  }
}

function firstSighting(seen: Set<unknown>, key: unknown): boolean {
  if (key === undefined || key === null) return true;
  const comparable = typeof key === 'object' ? JSON.stringify(key) : key;
  if (seen.has(comparable)) return false;
  seen.add(comparable);
  return true;
}

/** On resume, `--dedupe` must remember the keys the earlier runs already wrote. */
async function keysInSpool(spoolPath: string, field: string): Promise<Set<unknown>> {
  const seen = new Set<unknown>();
  if (!(await fileSize(spoolPath))) return seen;
  const keyOf = recordKey(field);
  for await (const record of fromNdjson(spoolPath)) firstSighting(seen, keyOf(record));
  return seen;
}
