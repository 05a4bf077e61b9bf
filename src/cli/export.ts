/**
 * `socialstream export <op-id> key=value ... --out FILE`: the main job. Every walk's records go first
 * to a spool (NDJSON beside the output), one whole page at a time, flushed to disk, and only then does
 * the checkpoint move past that page. So after a crash, a 402 or Ctrl-C the spool and the checkpoint
 * agree, and `--resume` neither loses a record nor buys a finished page again. The output file in the
 * asked format is made from the spool: at the end, and also when a run fails, so the output written
 * so far is always a valid file.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Client, CreditBalance } from '../index.ts';
import { creditCap, mergeMap } from '../operators/index.ts';
// `--dedupe FIELD` reads its key exactly as the `dedupe` operator does.
import { keyReader } from '../operators/dedupe.ts';
import { fromNdjson } from '../../sinks/index.ts';
import { parseArgs, UsageError } from './args.ts';
import { connect, type Connection } from './connection.ts';
import { fileSize, removeIfPresent, Spool } from './durable.ts';
import { EXPORT_FLAGS, EXPORT_HELP, planExport, type ExportPlan } from './export-plan.ts';
import { assertSameExport, freshState, loadState, saveState, type ExportState } from './export-state.ts';
import { EXIT, InterruptedError, exitCodeOf, isResumable } from './failure.ts';
import { publishOutput } from './output.ts';
import { pageBatches, WalkHalt, type PageBatch } from './page-batches.ts';
import { Progress } from './progress.ts';

export async function runExport(argv: string[]): Promise<number> {
  const args = parseArgs(argv, EXPORT_FLAGS);
  if (args.flags.help) {
    process.stdout.write(EXPORT_HELP);
    return EXIT.ok;
  }
  const plan = await planExport(args.positionals, args.params, args.flags);
  return plan.out === '-' ? exportToStdout(plan) : exportToFile(plan);
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
function pagesOf(plan: ExportPlan, state: ExportState, client: Client, signal: AbortSignal, halt: WalkHalt): AsyncIterable<PageBatch> {
  const pending = state.walks.flatMap((walk, index) => (walk.done ? [] : [index]));
  const walkPages = (index: number): AsyncIterable<PageBatch> => {
    const walk = state.walks[index];
    const options = { maxPages: plan.maxPages, signal };
    const stream = walk.checkpoint ? client.resume(walk.checkpoint, options) : client.stream(plan.opId, walk.params, options);
    return pageBatches(stream, index, halt);
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
    if (state.finished) return finishExport(plan, state, spoolPath, checkpointPath);
    if (state.spoolBytes > 0 && (await fileSize(spoolPath)) === undefined) {
      throw new UsageError(`the spool ${spoolPath} is missing; delete ${checkpointPath} to start over`);
    }
  } else if (state) {
    throw new UsageError(`an interrupted export left ${checkpointPath}: add --resume to continue it, or delete it to start over`);
  }
  state ??= freshState(plan.opId, plan.out, plan.inputs);
  await mkdir(dirname(resolve(plan.out)), { recursive: true });

  // Connect first: a missing key or a bad address then fails before any file is touched.
  const connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests: Math.max(8, plan.concurrency) });
  let outcome: RunOutcome;
  try {
    const spool = await Spool.open(spoolPath, plan.resume ? state.spoolBytes : undefined);
    try {
      outcome = await fillSpool(plan, state, connection, spool, checkpointPath);
    } finally {
      await spool.close();
    }
  } finally {
    await connection.close();
  }

  const { failure } = outcome;
  const { before, after } = outcome.balance;
  const balance = before && after ? `; balance ${before.credits} → ${after.credits}` : '';
  const run = `${outcome.credits} credits this run, ${outcome.seconds.toFixed(1)} s${balance}`;
  if (failure === undefined) {
    // From here on a crash is finished by `--resume` without a request: only the publishing is left.
    state.finished = true;
    await saveState(checkpointPath, state);
    return finishExport(plan, state, spoolPath, checkpointPath, run);
  }
  await saveState(checkpointPath, state);
  if (!isResumable(exitCodeOf(failure))) throw failure;
  const written = await publishOutput(spoolPath, plan.out, plan.format, { keepSpool: true });
  process.stderr.write(`stopped early; kept ${state.records} records (${state.pages} pages) in ${plan.out} (${written.bytes} bytes); ${run}\n`);
  throw Object.assign(failure as object, {
    resumeHint: `The output so far is in ${plan.out}; run the same command with --resume to continue.`,
  });
}

/** Writes the output from the spool (unless a crash came after that), then drops the spool and checkpoint. */
async function finishExport(plan: ExportPlan, state: ExportState, spoolPath: string, checkpointPath: string, run?: string): Promise<number> {
  const spooled = (await fileSize(spoolPath)) !== undefined;
  const bytes = spooled ? (await publishOutput(spoolPath, plan.out, plan.format, { keepSpool: false })).bytes : await fileSize(plan.out);
  await removeIfPresent(checkpointPath);
  const how = run ?? 'finished from the checkpoint, no request needed';
  process.stderr.write(`wrote ${state.records} records (${state.pages} pages) to ${plan.out} (${bytes ?? 0} bytes); ${how}\n`);
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
  const keyOf = plan.dedupe ? keyReader(plan.dedupe) : undefined;
  const run = runController();
  const { signal } = run.controller;
  const halt = new WalkHalt();
  // A continuation no rule follows may mean missing records: the summary says so (DESIGN, tolerant reader).
  const warnings: string[] = [];
  const ignored = client.events$.subscribe((event) => {
    if (event.type === 'ignored-continuation') warnings.push(`${event.endpoint} offered a continuation its rule does not follow (${event.detail})`);
  });
  try {
    for await (const page of pagesOf(plan, state, client, signal, halt)) {
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
  } catch (error) {
    if (!signal.aborted) return error;
  } finally {
    run.dispose();
    ignored.unsubscribe();
    for (const warning of warnings) process.stderr.write(`warning: ${warning}; the output may be incomplete\n`);
  }
  const failure = signal.aborted ? signal.reason : halt.failure;
  return failure === LIMIT_REACHED ? undefined : failure;
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
  const keyOf = keyReader(field);
  for await (const record of fromNdjson(spoolPath)) firstSighting(seen, keyOf(record));
  return seen;
}
