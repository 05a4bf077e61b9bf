/**
 * `socialstream export <op-id> key=value ... --out FILE`: the main job. Every walk's records go first
 * to a spool (NDJSON beside the output), one whole page at a time, flushed to disk, and only then does
 * the checkpoint move past that page. So after a crash, a 402 or Ctrl-C the spool and the checkpoint
 * agree, and `--resume` neither loses a record nor buys a finished page again. The output file in the
 * asked format is made from the spool: at the end, and also when a run that got records fails, so the
 * output written so far is always a valid file and a run that got nothing never replaces a good one.
 * One run at a time writes an output (`lock.ts`); the checkpoint and spool are checked before they
 * are trusted (`export-state.ts`, `sinks/durable.ts`).
 */
import { access, constants, lstat, mkdir, readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { STREAM_CONTROL, type Client, type CreditBalance } from '../index.ts';
import { ValidationError } from '../errors.ts';
import { mergeMap } from '../operators/index.ts';
// `--dedupe FIELD` reads its key exactly as the `dedupe` operator does.
import { keyReader } from '../operators/dedupe.ts';
import { fromNdjson } from '../../sinks/index.ts';
import { parseArgs, UsageError } from './args.ts';
import { connect, type Connection } from './connection.ts';
import { fileSize, hashPrefix, isTemporaryNameOf, removeIfPresent, Spool, TamperedStateError, type SpoolMark } from '../../sinks/durable.ts';
import { drainPages, type AfterPage } from './drain-pages.ts';
import { runDatasetExport } from './export-dataset.ts';
import { EXPORT_FLAGS, EXPORT_HELP, planExport, type ExportPlan } from './export-plan.ts';
import { freshState, loadState, matchWalks, StateJournal, type ExportState } from './export-state.ts';
import { DiskFullError, EXIT, RejectedInputsError, exitCodeOf, isResumable, stopWith } from './failure.ts';
import { lockOutput, OutputLockedError } from './lock.ts';
import { publishOutput } from './output.ts';
import { AttemptLedger, pageBatches, WalkHalt, type PageBatch } from './page-batches.ts';
import { counted, Progress } from './progress.ts';
import { runController } from './run-controller.ts';
import { StdoutClosedError, writeStdout } from './stdout.ts';

export async function runExport(argv: string[]): Promise<number> {
  const args = parseArgs(argv, EXPORT_FLAGS);
  if (args.flags.help) {
    process.stdout.write(EXPORT_HELP);
    return EXIT.ok;
  }
  if (args.flags.dataset !== undefined) return runDatasetExport(args);
  const plan = await planExport(args.positionals, args.params, args.flags);
  return plan.out === '-' ? exportToStdout(plan) : exportToFile(plan);
}

/**
 * The walks of an export as one stream of finished pages: resumed walks continue from their
 * checkpoints, finished and rejected ones are skipped, `--max-pages` counts every run's pages, and
 * `ledger` counts (and caps) every request they make together.
 */
function pagesOf(plan: ExportPlan, state: ExportState, client: Client, signal: AbortSignal, halt: WalkHalt, ledger: AttemptLedger): AsyncIterable<PageBatch> {
  const pending = state.walks.flatMap((walk, index) => (walk.done || walk.rejected !== undefined ? [] : [index]));
  const walkPages = (index: number): AsyncIterable<PageBatch> => {
    const walk = state.walks[index];
    const maxPages = plan.maxPages === undefined ? undefined : Math.max(0, plan.maxPages - (walk.checkpoint?.pagesDone ?? 0));
    const options = { maxPages, signal, concurrency: plan.pageConcurrency, overfetch: plan.overfetch };
    const stream = walk.checkpoint ? client.resume(walk.checkpoint, options) : client.stream(plan.opId, walk.params, options);
    const pages = pageBatches(stream, index, halt);
    stream[STREAM_CONTROL].addGate(ledger);
    return pages;
  };
  return mergeMap(walkPages, { concurrency: plan.concurrency, signal })(pending);
}

async function exportToFile(plan: ExportPlan): Promise<number> {
  await checkOutputPath(plan.out);
  let lock;
  try {
    lock = await lockOutput(plan.out);
  } catch (error) {
    throw error instanceof OutputLockedError ? error : cannotWrite(plan.out, error);
  }
  const run = runController();
  try {
    return await exportLocked(plan, run.controller);
  } catch (error) {
    throw onDisk(plan.out, error);
  } finally {
    run.dispose();
    await lock.release();
  }
}

/** The side files of an export, beside its output. */
function sideFiles(out: string): { checkpointPath: string; spoolPath: string } {
  return { checkpointPath: `${out}.checkpoint.json`, spoolPath: `${out}.spool.ndjson` };
}

async function exportLocked(plan: ExportPlan, controller: AbortController): Promise<number> {
  const { checkpointPath, spoolPath } = sideFiles(plan.out);
  await sweepTemporaryFiles(plan.out);
  let state = await trusted(plan.out, () => loadState(checkpointPath));
  if (plan.resume) {
    if (!state) throw new UsageError(`nothing to resume: no checkpoint at ${checkpointPath}`);
    matchWalks(state, plan.opId, plan.inputs, checkpointPath);
    if (state.finished) return finishExport(plan, state);
  } else if (state) {
    throw new UsageError(`an interrupted export left ${checkpointPath}: add --resume to continue it, or delete it to start over`);
  }
  const resumed = state !== undefined;
  state ??= freshState(plan.opId, plan.out, plan.inputs);
  if (plan.limit !== undefined && state.records >= plan.limit) {
    process.stderr.write(`nothing to fetch: --limit ${plan.limit} and ${state.records} records already held in ${plan.out}\n`);
    return EXIT.ok;
  }

  // Connect first: a missing key or a bad address then fails before any file is touched.
  const connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests: Math.max(8, plan.concurrency, plan.pageConcurrency ?? 0) });
  const bytesBefore = state.spool.bytes;
  let outcome: RunOutcome;
  let journal: StateJournal | undefined;
  try {
    const opened = state;
    const spool = await trusted(plan.out, () => (resumed ? Spool.reopen(spoolPath, opened.spool) : Spool.create(spoolPath)));
    try {
      journal = StateJournal.start(checkpointPath, state);
      outcome = await fillSpool(plan, state, connection, spool, journal, controller);
    } finally {
      await spool.close();
    }
  } catch (error) {
    await journal?.close();
    throw error;
  } finally {
    await connection.close();
  }

  const { before, after } = outcome.balance;
  const balance = before && after ? `; balance ${before.credits} → ${after.credits}` : '';
  const ahead = outcome.overfetched > 0 ? ` (${outcome.overfetched} on pages bought ahead and never read: empty pages past the end)` : '';
  const runText = `${counted(outcome.credits, 'credit')} this run${ahead}, ${outcome.seconds.toFixed(1)} s${balance}${repeatsNote(plan)}`;
  const rejected = state.walks.flatMap((walk, index) => (walk.rejected === undefined ? [] : [index]));
  const unfinished = state.walks.filter((walk) => !walk.done && walk.rejected === undefined).length;
  const failure = outcome.failure === undefined ? undefined : onDisk(plan.out, outcome.failure);
  if (failure === undefined && unfinished === 0 && rejected.length === 0) {
    // From here on a crash is finished by `--resume` without a request: only the publishing is left.
    state.finished = true;
    await journal.save();
    await journal.close();
    return finishExport(plan, state, runText);
  }
  // On a full disk this may fail too: the journal then holds the last page that fitted, still whole.
  await Promise.all([journal.save(), ...rejected.map((index) => journal.save(index))]).catch(() => undefined);
  await journal.close();
  // A run that got nothing and may have spent nothing (no key, unreachable, a rejected parameter set)
  // leaves nothing behind: a plain re-run then works without --resume.
  if (!resumed && state.spool.bytes === 0 && state.credits === 0 && !state.walks.some((walk) => walk.checkpoint)) {
    await removeIfPresent(checkpointPath);
    await removeIfPresent(spoolPath);
    stopWith(failure ?? rejectedInputs(plan, state, rejected));
  }
  if (failure !== undefined && !isResumable(exitCodeOf(failure))) stopWith(failure);
  // Only a run that added records replaces the output: a failed re-run never destroys a good file.
  const kept = state.spool.bytes > bytesBefore ? await publishPartial(plan) : 'the output was left as it was';
  const held = records(state);
  if (failure !== undefined) {
    process.stderr.write(`stopped early; ${held} in all, ${kept}; ${runText}\n`);
    const resumeHint =
      (await fileSize(plan.out)) === undefined
        ? 'Run the same command with --resume to continue.'
        : `The output so far is in ${plan.out}; run the same command with --resume to continue.`;
    stopWith(failure, resumeHint);
  }
  if (rejected.length > 0) {
    process.stderr.write(`${held} in all, ${kept}; ${runText}\n`);
    throw rejectedInputs(plan, state, rejected);
  }
  process.stderr.write(`stopped at ${whyStopped(plan, state, outcome.capped, unfinished)}; ${held} in all, ${kept}; ${runText}\n`);
  return EXIT.ok;
}

/** Refuses, before any credit is spent, an output path no file can be written to. */
async function checkOutputPath(out: string): Promise<void> {
  const info = await lstat(out).catch(() => undefined);
  if (info?.isDirectory()) throw new UsageError(`--out ${out}: that is a directory, not a file`);
  try {
    // Like `mkdir -p`: an export into `out/2026/` should not fail for want of the folder.
    await mkdir(dirname(resolve(out)), { recursive: true });
    await access(dirname(resolve(out)), constants.W_OK);
  } catch (error) {
    throw cannotWrite(out, error);
  }
}

function cannotWrite(out: string, error: unknown): Error {
  const folder = dirname(resolve(out));
  const code = (error as NodeJS.ErrnoException).code;
  const reasons: Record<string, string> = {
    ENOTDIR: `${folder} is not a folder`,
    EEXIST: `${folder} is not a folder`,
    EACCES: `the folder ${folder} is not writable`,
    EPERM: `the folder ${folder} is not writable`,
    EROFS: `the folder ${folder} is on a read-only file system`,
    ENOSPC: `no space left on the disk holding ${folder}`,
  };
  const reason = (code && reasons[code]) ?? (error instanceof Error ? error.message : String(error));
  return new UsageError(`--out ${out}: cannot write there: ${reason}`);
}

/** Temporary files an earlier run of this output left when it was killed; while we hold the lock, they are nobody's. */
async function sweepTemporaryFiles(out: string): Promise<void> {
  const folder = dirname(resolve(out));
  const ours = (name: string): boolean => isTemporaryNameOf(name, out) || isTemporaryNameOf(name, sideFiles(out).checkpointPath);
  for (const name of await readdir(folder)) if (ours(name)) await removeIfPresent(join(folder, name));
}

/** Runs `load`, turning side files that do not verify into one refusal that says what to do. */
async function trusted<T>(out: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof TamperedStateError) throw refusal(out, error);
    throw error;
  }
}

function refusal(out: string, error: TamperedStateError): TamperedStateError {
  const { checkpointPath, spoolPath } = sideFiles(out);
  return new TamperedStateError(error.path, `${error.reason}; it cannot be trusted: delete ${checkpointPath} and ${spoolPath} to start over`);
}

/** A full disk, wherever it surfaced (spool, checkpoint, output), named as such. */
function onDisk(out: string, error: unknown): unknown {
  if (error instanceof DiskFullError || !isDiskFull(error)) return error;
  return new DiskFullError(dirname(resolve(out)), { cause: error });
}

function isDiskFull(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  }
  return false;
}

/** Which limit ended an export with walks left, and what it takes to continue. */
function whyStopped(plan: ExportPlan, state: ExportState, capped: boolean, unfinished: number): string {
  const resume = 'run the same command with --resume and a higher';
  if (capped) return `--max-credits ${plan.maxCredits} (${counted(state.credits, 'credit')} spent over every run): ${resume} --max-credits to continue`;
  if (plan.limit !== undefined && state.records >= plan.limit) return `--limit ${plan.limit}: ${resume} --limit (or none) to continue`;
  return `--max-pages ${plan.maxPages} (${counted(unfinished, 'parameter set')} not finished): ${resume} --max-pages to continue`;
}

function rejectedInputs(plan: ExportPlan, state: ExportState, rejected: number[]): Error {
  const where = (index: number): string => (plan.inputsFile === undefined ? '' : `${plan.inputsFile} line ${plan.lines[index]}: `);
  for (const index of rejected) process.stderr.write(`socialstream: ${where(index)}rejected by the service: ${state.walks[index].rejected}\n`);
  if (plan.inputsFile === undefined) return new ValidationError(state.walks[rejected[0]].rejected ?? 'rejected', undefined);
  return new RejectedInputsError(
    `${counted(rejected.length, 'parameter set')} of ${plan.inputsFile} rejected by the service (above); the other walks were exported. ` +
      `Fix or remove those lines, then run the same command with --resume: finished walks are kept.`,
  );
}

/** `12 records (3 pages)` for a summary. */
function records(counts: { records: number; pages: number }): string {
  return `${counted(counts.records, 'record')} (${counted(counts.pages, 'page')})`;
}

/** The summary's word on `--inputs` lines that were not walked because they repeat earlier ones. */
function repeatsNote(plan: ExportPlan): string {
  const lines = plan.repeatedLines;
  if (lines.length === 0) return '';
  const shown = lines.length > 5 ? `${lines.slice(0, 5).join(', ')}, …` : lines.join(', ');
  return `; ${counted(lines.length, 'input line')} (${shown}) repeated an earlier line and ${lines.length === 1 ? 'was' : 'were'} walked once`;
}

/** Writes the output so far from the spool, keeping the spool for `--resume`; says what it did. */
async function publishPartial(plan: ExportPlan): Promise<string> {
  try {
    const written = await publishOutput(sideFiles(plan.out).spoolPath, plan.out, plan.format, { keepSpool: true, escapeFormulae: plan.escapeFormulae });
    return `kept in ${plan.out} (${counted(written.bytes, 'byte')})`;
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    return `no room to write ${plan.out}: it was left as it was`;
  }
}

/** Writes the output from the spool (unless a crash came after that), then drops the spool and checkpoint. */
async function finishExport(plan: ExportPlan, state: ExportState, run?: string): Promise<number> {
  const { checkpointPath, spoolPath } = sideFiles(plan.out);
  let bytes: number;
  if ((await fileSize(spoolPath)) !== undefined) {
    bytes = (await publishOutput(spoolPath, plan.out, plan.format, { keepSpool: false, escapeFormulae: plan.escapeFormulae })).bytes;
  } else if (plan.format === 'ndjson' && (await sameBytes(plan.out, state.spool))) {
    // The spool was renamed to the output by a run that died before it could drop the checkpoint.
    bytes = state.spool.bytes;
  } else {
    throw refusal(plan.out, new TamperedStateError(spoolPath, 'is missing, so the checkpoint that says every page is in it cannot be trusted'));
  }
  await removeIfPresent(checkpointPath);
  await removeIfPresent(spoolPath);
  const how = run ?? 'finished from the checkpoint, no request needed';
  process.stderr.write(`wrote ${records(state)} to ${plan.out} (${counted(bytes, 'byte')}); ${how}\n`);
  return EXIT.ok;
}

async function sameBytes(path: string, mark: SpoolMark): Promise<boolean> {
  if ((await fileSize(path)) !== mark.bytes) return false;
  return (await hashPrefix(path, mark.bytes)).digest('hex') === mark.sha256;
}

interface RunOutcome {
  /** What ended the run early, if anything did. */
  failure: unknown;
  /** `--max-credits` refused a request. */
  capped: boolean;
  /** Credits the service reported charging in this run. */
  credits: number;
  /** Of those, credits spent on pages bought ahead that no walk read (`--overfetch`). */
  overfetched: number;
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
  journal: StateJournal,
  controller: AbortController,
): Promise<RunOutcome> {
  const { client } = connection;
  const pagesBefore = state.pages;
  const ledger: AttemptLedger = new AttemptLedger(state.credits, plan.maxCredits, () => {
    state.credits = ledger.credits;
    return journal.save();
  });
  const refunds = ledger.watchRefunds(client, plan.opId);
  const progress = new Progress(() => ({ records: state.records, pages: state.pages, credits: client.stats.credits }));
  const seen = plan.dedupe ? await keysInSpool(spool.path, plan.dedupe) : new Set<unknown>();
  const balance: RunOutcome['balance'] = {};
  balance.before = await client.credits().catch(() => undefined);
  const halt = new WalkHalt();
  const pages = pagesOf(plan, state, client, controller.signal, halt, ledger);
  const failure = await drainPages(pages, client, halt, controller, keepPage(plan, state, seen, async (page, records, read) => {
    await spool.appendPage(records);
    const walk = state.walks[page.walk];
    walk.checkpoint = read < page.records.length ? page.checkpointAfter(read) : page.checkpoint;
    walk.done = page.last && read === page.records.length;
    state.spool = spool.mark();
    state.records += records.length;
    state.pages = pagesBefore + client.stats.pages;
    state.credits = ledger.credits;
    await journal.save(page.walk);
  }));
  progress.stop();
  refunds.unsubscribe();
  for (const [index, error] of halt.rejected) state.walks[index].rejected = error.message;
  state.credits = ledger.credits;
  balance.after = await client.credits().catch(() => undefined);
  return { failure, capped: ledger.refused > 0, credits: client.stats.credits, overfetched: client.stats.overfetched, seconds: progress.elapsedSeconds(), balance };
}

/**
 * `--out -`: NDJSON on stdout as records arrive; no spool, no checkpoint. A reader that closes the
 * pipe (`| head`) took what it wanted: the export stops requesting and ends with exit code 0.
 */
async function exportToStdout(plan: ExportPlan): Promise<number> {
  const state = freshState(plan.opId, plan.out, plan.inputs);
  const connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests: Math.max(8, plan.concurrency, plan.pageConcurrency ?? 0) });
  let failure: unknown;
  const run = runController();
  const halt = new WalkHalt();
  const ledger = new AttemptLedger(0, plan.maxCredits, () => Promise.resolve());
  const refunds = ledger.watchRefunds(connection.client, plan.opId);
  try {
    const pages = pagesOf(plan, state, connection.client, run.controller.signal, halt, ledger);
    const keep = keepPage(plan, state, new Set(), async (_page, records) => {
      let text = '';
      for (const record of records) text += JSON.stringify(record) + '\n';
      await writeStdout(text);
      state.records += records.length;
    });
    failure = (await drainPages(pages, connection.client, halt, run.controller, keep)) ?? halt.rejected.values().next().value;
  } finally {
    refunds.unsubscribe();
    run.dispose();
    await connection.close();
  }
  const closed = failure instanceof StdoutClosedError && failure.code === 'EPIPE';
  if (failure !== undefined && !closed) stopWith(failure);
  const { pages, credits } = connection.client.stats;
  const where = closed ? 'stdout, until its reader closed it' : 'stdout';
  process.stderr.write(`wrote ${counted(state.records, 'record')} (${counted(pages, 'page')}, ${counted(credits, 'credit')}) to ${where}${repeatsNote(plan)}\n`);
  return EXIT.ok;
}

/**
 * What both outputs keep of a page: its records less those `--dedupe` and `--limit` drop, handed to
 * `write` with how many of the page's records were read (fewer than all when `--limit` cut the page).
 */
function keepPage(
  plan: ExportPlan,
  state: ExportState,
  seen: Set<unknown>,
  write: (page: PageBatch, records: unknown[], read: number) => Promise<void>,
): (page: PageBatch) => Promise<AfterPage> {
  const keyOf = plan.dedupe ? keyReader(plan.dedupe) : undefined;
  return async (page) => {
    const records: unknown[] = [];
    let read = 0;
    for (const record of page.records) {
      if (plan.limit !== undefined && state.records + records.length >= plan.limit) break;
      read++;
      if (!keyOf || firstSighting(seen, keyOf(record))) records.push(record);
    }
    await write(page, records, read);
    return plan.limit !== undefined && state.records >= plan.limit ? 'enough' : 'more';
  };
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
