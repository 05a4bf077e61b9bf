/**
 * `exportInto`: one engine for every export, from the CLI, a script or a notebook, into a file or a
 * dataset (`exportTo`, `src/export-to.ts`, picks which and hands it over). Its stages, as dlt names them:
 *
 * - open: check the options, refuse an output that cannot be written (before any request), take the
 *   output's lock, finish what a killed run left half done, and load (or refuse) what it staged;
 * - extract: walk every unfinished walk, staging each page durably as it arrives (`extract.ts`);
 * - publish: turn the spool into the file (atomic replace) or merge it into the dataset (journal).
 *
 * A run is one call until it stops cleanly (complete, a cap, the limit, the signal, a 402); a kill
 * does not end it, so its resume continues the same caps. Every failure is a `SocialstreamError`
 * with a stable `code`; the output written so far stays valid and resumable.
 */
import { setMaxListeners } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InsufficientCreditsError, HeldStateError, SchemaDriftError, StateDamagedError } from '../errors.ts';
import type { SeenKeys } from '../operators/record-key.ts';
import { fromNdjson } from '../../sinks/from-ndjson.ts';
import type { CompleteOutput, Destination, Published, SpoolPrefix } from './destination.ts';
import { diskFailure, ensureWritableFolder } from './disk.ts';
import { checkSpool, fileSize, lineEnd, linesIn, removeIfPresent, Spool } from './durable.ts';
import { duplicateKeys, extract, type ExtractOutcome } from './extract.ts';
import { HeldPageFile } from './held.ts';
import { freshRun, freshState, loadState, matchWalks, StateJournal, writeState, type ExportState } from './journal.ts';
import { lockOutput } from './lock.ts';
import type { ExportSettings } from './options.ts';
import { progressReporter } from './progress.ts';
import { displayed } from './summary.ts';
import type { ExportWalks } from './sources.ts';
import type { ExportSummary, StopReason } from './types.ts';

/**
 * Runs the export of `walks` into `destination` (a file or a dataset, chosen by `exportTo`): locks the
 * output, opens or resumes its state, walks, stages and publishes. See docs/architecture.md, "One
 * export, from argv to the published file".
 */
export async function exportInto(walks: ExportWalks, destination: Destination, settings: ExportSettings): Promise<ExportSummary> {
  try {
    return await exportLocked(walks, destination, settings);
  } finally {
    await destination.close?.();
  }
}

/** `exportInto` but for closing the destination: every step, under the output's lock. */
async function exportLocked(walks: ExportWalks, destination: Destination, settings: ExportSettings): Promise<ExportSummary> {
  const onDisk = (error: unknown): unknown => diskFailure(error, destination.folder, destination.output);
  await ensureWritableFolder(destination.folder, destination.output);
  let lock;
  try {
    await destination.prepare();
    lock = await (settings.locks === undefined ? lockOutput(destination.output, destination.files.lock) : settings.locks.output(destination.output, destination.files.lock));
  } catch (error) {
    throw onDisk(error);
  }
  try {
    return await run(walks, destination, settings);
  } catch (error) {
    throw onDisk(error);
  } finally {
    await lock.release();
  }
}

async function run(walks: ExportWalks, destination: Destination, settings: ExportSettings): Promise<ExportSummary> {
  const started = Date.now();
  const opened = await open(walks, destination, settings);
  if ('complete' in opened) return opened;
  const { state, resumed } = opened;
  if (state.finished === true) {
    // Only the publishing is left: of a spool that still holds every staged record, or none.
    await trusted(() => checkSpool(destination.files.spool, state.spool), destination.remedy);
    return finish(destination, state, { started, resumed, ignored: [], rejected: new Map(), unread: 0 });
  }
  // Before the first request: a refusal here has bought nothing.
  await destination.bind?.();
  const journal = StateJournal.start(destination.files.journal, state);
  try {
    let outcome: ExtractOutcome;
    let held: HeldBack | undefined;
    try {
      outcome = await extractStaged(walks, destination, settings, state, journal, started);
      held = await heldBack(destination, state, settings.limit);
    } catch (error) {
      // Publishing closes the journal; a run that cannot get there must too, or its file stays open.
      await journal.close().catch(() => undefined);
      throw error;
    }
    const { failure, stoppedBy, balance } = stopOf(outcome, settings);
    const facts: RunFacts = { started, resumed, stoppedBy, balance, ignored: outcome.ignored, rejected: outcome.halt.rejected, unread: outcome.unread, held };
    return await publish(destination, state, journal, failure, facts);
  } finally {
    await destination.release?.();
    // A run that bought nothing (a key refused, nothing new to walk) fixes nothing for later ones.
    if (state.pages === 0 && state.credits === 0) await destination.unbind?.();
  }
}

/**
 * The open stage, holding the lock: finishes what a killed run left half done, then loads what earlier
 * runs staged (refused without `resume`, dropped with `restart`) and matches it to the walks asked for.
 * A complete file with nothing staged needs nothing: its summary comes back at once.
 */
async function open(walks: ExportWalks, destination: Destination, settings: ExportSettings): Promise<{ state: ExportState; resumed: boolean } | ExportSummary> {
  const { files, remedy } = destination;
  await destination.recover(settings.restart);
  let state = await trusted(() => loadState(files.journal, files.spool), remedy);
  if (state !== undefined && settings.restart) {
    await destination.discard();
    state = undefined;
  }
  if (state !== undefined && !settings.resume) {
    throw new HeldStateError(
      `${destination.output} holds an unfinished export (${files.journal}): resume it (--resume, or resume: true) to continue without buying its pages again, or restart (--restart, or restart: true) to discard it`,
      destination.output,
    );
  }
  if (state === undefined && settings.resume) {
    const complete = await destination.completeOutput();
    if (complete !== undefined) return alreadyComplete(walks, destination, complete);
  }
  if (state === undefined) {
    // A fresh start: whatever a run without a journal left staged vouches for nothing.
    await destination.discard();
    return { state: freshState(walks.op.id, walks.params), resumed: false };
  }
  matchWalks(state, walks.op.id, walks.params, destination.output);
  if (state.run.ended) {
    // The records a lowered limit kept back are the new run's first (docs/guarantees.md "Credit caps").
    state.run = { ...freshRun(), records: state.unpublished ?? 0 };
    delete state.unpublished;
  }
  return { state, resumed: true };
}

/** The extract stage: the spool and held pages opened, every walk not done staged page by page. */
async function extractStaged(
  walks: ExportWalks,
  destination: Destination,
  settings: ExportSettings,
  state: ExportState,
  journal: StateJournal,
  started: number,
): Promise<ExtractOutcome> {
  const { files, remedy } = destination;
  await mkdir(dirname(files.spool), { recursive: true });
  const spool = await trusted(() => (state.spool.bytes > 0 ? Spool.reopen(files.spool, state.spool) : Spool.create(files.spool)), remedy);
  journal.vouchesFor(spool);
  // A run that already has its limit (lowered on resume) writes no page: nothing to follow.
  if (settings.limit === undefined || state.run.records < settings.limit) destination.follow?.(files.spool, state.spool.bytes);
  const held = await HeldPageFile.open(files.held, remedy).catch(async (error: unknown) => {
    await spool.close();
    throw error;
  });
  // A signal of the export's own: every walk of a wide export listens on it.
  const signal = AbortSignal.any(settings.signal === undefined ? [] : [settings.signal]);
  setMaxListeners(0, signal);
  const progress = progressReporter(settings.progress, () => ({
    pages: state.run.pages,
    records: state.run.records,
    credits: state.run.credits,
    walks: { done: state.walks.filter((walk) => walk.done).length, total: state.walks.length },
    elapsedMs: Date.now() - started,
  }));
  try {
    const seen = await keysIn(files.spool, state.spool.bytes, duplicateKeys(walks.op, settings));
    const outcome = await extract({
      walks,
      destination,
      state,
      journal,
      spool,
      held,
      seen,
      dropDuplicates: destination.capabilities.duplicates === 'drop',
      limit: settings.limit,
      maxAttempts: minimum(settings.maxCredits, settings.maxPages),
      concurrency: settings.concurrency,
      pageConcurrency: settings.pageConcurrency,
      overfetch: settings.overfetch,
      transform: settings.transform,
      gates: settings.gates,
      signal,
      onPage: () => progress.update(),
    });
    await held.flush().catch((error: unknown) => outcome.halt.fail(-1, error));
    try {
      progress.finish(stopOf(outcome, settings).stoppedBy);
    } catch (error) {
      // The caller's callback failed: the run fails with its error, as when it throws on a page.
      outcome.halt.fail(-1, error);
    }
    return outcome;
  } finally {
    await held.close();
    await spool.close();
  }
}

/** What ended the run: a clean stop (`stoppedBy`), or a failure to report after publishing what there is. */
function stopOf({ halt, ledger, enough }: ExtractOutcome, settings: ExportSettings): { failure: unknown; stoppedBy?: StopReason; balance?: ExportSummary['balance'] } {
  const userStop = settings.signal?.aborted === true;
  const failure = halt.failure;
  if (userStop && (failure === undefined || failure === settings.signal!.reason || isAbort(failure))) return { failure: undefined, stoppedBy: 'signal' };
  if (failure instanceof InsufficientCreditsError && failure.code === 'INSUFFICIENT_CREDITS') {
    return { failure: undefined, stoppedBy: 'balance', balance: { available: failure.available, required: failure.required } };
  }
  if (failure !== undefined) return { failure };
  if (enough) return { failure, stoppedBy: 'limit' };
  if (ledger.refused > 0) return { failure, stoppedBy: settings.maxCredits !== undefined && settings.maxCredits <= (settings.maxPages ?? Infinity) ? 'maxCredits' : 'maxPages' };
  return { failure };
}

/**
 * The publish stage. Every walk staged: the output is published whole and the staging goes. Stopped
 * early: what was staged is published (a file only when this run added records) and the staging kept
 * for the resume; a failure is thrown after that, the output valid.
 */
async function publish(destination: Destination, state: ExportState, journal: StateJournal, failure: unknown, facts: RunFacts): Promise<ExportSummary> {
  for (const [index, error] of facts.rejected) state.walks[index].rejected = error.message;
  if (failure instanceof SchemaDriftError && destination.capabilities.drift === 'record') {
    // A frozen schema publishes nothing of a drifting run: the dataset stays as it was.
    await journal.close();
    await destination.discard();
    await destination.recordFrozenDrift?.(failure);
    throw failure;
  }
  if (failure === undefined && facts.held === undefined && state.walks.every((walk) => walk.done && walk.rejected === undefined)) {
    // From here on a kill is finished by a resume without a request: only the publishing is left.
    state.finished = true;
    await journal.save();
    await journal.close();
    return finish(destination, state, facts);
  }
  // On a full disk this may fail too: the journal then holds the last page that fitted, still whole.
  await Promise.all([journal.save(), ...[...facts.rejected.keys()].map((index) => journal.save(index))]).catch(() => undefined);
  await journal.close();
  // A run that got nothing and may have spent nothing (no key, unreachable) leaves nothing behind.
  if (!facts.resumed && state.spool.bytes === 0 && state.credits === 0 && !state.walks.some((walk) => walk.checkpoint !== undefined)) {
    await destination.discard();
    if (failure !== undefined) throw asError(failure);
  }
  // A run whose staging folder went took its spool with it: there is nothing to publish, and publishing
  // would make the folder anew (a dataset's commit) to hold nothing.
  if (failure !== undefined && state.spool.bytes > 0 && (await fileSize(destination.files.spool)) === undefined) throw asError(failure);
  let published: Published | undefined;
  if (state.run.records > 0 || (destination.capabilities.partialPublish === 'staged' && state.spool.bytes > 0)) {
    try {
      published = await destination.publish(state, false, facts.held?.through);
    } catch (error) {
      // The staging is whole: a resume publishes it. The run's own failure, if any, is the one to tell.
      if (failure === undefined) throw error;
    }
  }
  if (failure !== undefined) throw asError(failure);
  // Only now, with the output published, has the run stopped: a kill before this continues it, caps and all.
  await endRun(destination.files.journal, facts.held?.kept);
  await destination.persist?.();
  return summarize(destination, state, { ...facts, published });
}

/**
 * Records in the journal (as publishing left it) that its run stopped cleanly: a resume starts the
 * next, which takes the `unpublished` records at the spool's end as its first.
 */
async function endRun(path: string, unpublished: number | undefined): Promise<void> {
  const state = await loadState(path);
  if (state === undefined) return;
  state.run.ended = true;
  if (unpublished !== undefined) state.unpublished = unpublished;
  await writeState(path, state);
}

/** The prefix of the spool a run publishes, and how many records staged after it it keeps back. */
interface HeldBack {
  through: SpoolPrefix;
  kept: number;
}

/**
 * What of the spool a run may publish when it staged more than its `limit` (a limit lowered on resume
 * after a kill): all but its last records past the limit, which stay staged (docs/guarantees.md "Credit caps"). The run's
 * records are the spool's last: a file's spool holds every record of the export, a dataset's those
 * since its last publish, and a run that failed may have published some of its own already.
 */
async function heldBack(destination: Destination, state: ExportState, limit: number | undefined): Promise<HeldBack | undefined> {
  if (limit === undefined || state.run.records <= limit || !destination.capabilities.publishesPrefix) return undefined;
  const { spool } = destination.files;
  return trusted(async () => {
    const staged = await linesIn(spool, state.spool.bytes);
    const kept = Math.min(state.run.records - limit, staged);
    return kept === 0 ? undefined : { through: { records: staged - kept, bytes: await lineEnd(spool, staged - kept) }, kept };
  }, destination.remedy);
}

/** Publishes a run whose every walk is staged, and drops the staging. */
async function finish(destination: Destination, state: ExportState, facts: RunFacts): Promise<ExportSummary> {
  const published = await destination.publish(state, true);
  await removeIfPresent(destination.files.journal);
  await removeIfPresent(destination.files.held);
  // A run handed off leaves its spool to the publish, and no journal: so says the staging's durable copy too.
  await destination.persist?.();
  return summarize(destination, state, { ...facts, published, complete: true });
}

/** The summary of a resume that found its export's output complete: nothing bought, nothing written. */
function alreadyComplete(walks: ExportWalks, destination: Destination, complete: CompleteOutput): ExportSummary {
  const state = freshState(walks.op.id, walks.params);
  for (const walk of state.walks) walk.done = true;
  const published: Published = { repaired: 0, spoolTaken: false, ...(complete.records === undefined ? {} : { records: complete.records }) };
  return summarize(destination, state, { started: Date.now(), resumed: true, ignored: [], rejected: new Map(), unread: 0, complete: true, published, alreadyComplete: true });
}

interface RunFacts {
  started: number;
  resumed: boolean;
  stoppedBy?: StopReason;
  balance?: ExportSummary['balance'];
  ignored: string[];
  published?: Published;
  rejected: Map<number, Error>;
  unread: number;
  /** Every page is staged and published (a run that only had the publishing left knows it without its walks). */
  complete?: boolean;
  /** The spool's prefix this run publishes, when a lowered limit keeps records past it staged. */
  held?: HeldBack;
  /** A resume found the output complete: it bought and wrote nothing. */
  alreadyComplete?: boolean;
}

function summarize(destination: Destination, state: ExportState, facts: RunFacts): ExportSummary {
  const done = state.walks.filter((walk) => walk.done).length;
  const rejected = [...facts.rejected].map(([index, error]) => ({ params: state.walks[index].params, message: error.message }));
  return displayed({
    complete: facts.complete ?? (done === state.walks.length && rejected.length === 0 && facts.stoppedBy === undefined),
    ...(facts.stoppedBy === undefined ? {} : { stoppedBy: facts.stoppedBy }),
    ...(facts.balance === undefined ? {} : { balance: facts.balance }),
    records: state.run.records - (facts.held?.kept ?? 0),
    received: state.run.received,
    duplicates: state.run.duplicates,
    repaired: state.run.repaired + (facts.published?.repaired ?? 0),
    pages: state.run.pages,
    credits: state.run.credits,
    exportCredits: state.credits,
    unread: facts.unread,
    walks: { done, total: state.walks.length },
    remaining: state.walks.length - done,
    rejected,
    ignoredContinuations: facts.ignored,
    resumed: facts.resumed,
    ...(facts.alreadyComplete === true ? { alreadyComplete: true } : {}),
    output: destination.output,
    ...(facts.published?.records === undefined ? {} : { totalRecords: facts.published.records }),
    ...(facts.published?.bytes === undefined ? {} : { bytes: facts.published.bytes }),
    elapsedMs: Date.now() - facts.started,
    ...(facts.published?.dataset === undefined ? {} : { dataset: facts.published.dataset }),
  });
}

/** `seen`, holding the keys an earlier run of this export already wrote, so dedupe holds across a resume. */
async function keysIn(spool: string, bytes: number, seen: SeenKeys | undefined): Promise<SeenKeys | undefined> {
  if (seen === undefined || bytes === 0 || (await fileSize(spool)) === undefined) return seen;
  for await (const record of fromNdjson(spool)) seen.repeats(record);
  return seen;
}

/** Runs `load`, adding to a damaged state file's message what to do about it. */
async function trusted<T>(load: () => Promise<T>, remedy: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof StateDamagedError && !error.message.includes(remedy)) throw new StateDamagedError(`${error.message}; ${remedy}`, error.path);
    throw error;
  }
}

function minimum(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** What ended a walk, as something `throw` can carry: an abort's reason may be any value. */
function asError(failure: unknown): Error {
  return failure instanceof Error ? failure : new Error(String(failure));
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
