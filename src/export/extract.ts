/**
 * The extract stage: every unfinished walk, `concurrency` at a time, each read a page at a time
 * (`RecordStream.pageBatches`), each page staged — its kept records appended to the spool and
 * flushed, the walk's checkpoint written to the journal (which flushes behind) — before that walk
 * asks for its next page.
 * Pages a walk buys ahead of its turn are staged as they arrive (`HeldPageFile`). So a kill at any
 * moment loses at most the requests in flight; every answered page is on disk.
 */
import { STREAM_CONTROL, type RequestGate } from '../control.ts';
import { keyOf } from '../operations/record-meta.ts';
import { walkName } from '../operations/walk-name.ts';
import type { AnyIterable } from '../operators/types.ts';
import type { PageBatch } from '../walk.ts';
import type { Destination } from './destination.ts';
import type { Spool } from './durable.ts';
import type { HeldPageFile } from './held.ts';
import type { ExportState, StateJournal } from './journal.ts';
import { AttemptLedger, WalkHalt } from './ledger.ts';
import type { ExportWalks } from './sources.ts';
import { StagingGuard } from './staging-guard.ts';
import { checkTransformed, transformedRecords } from './transformed.ts';

export interface ExtractPlan {
  walks: ExportWalks;
  destination: Destination;
  state: ExportState;
  journal: StateJournal;
  spool: Spool;
  held: HeldPageFile;
  /** Keys already written by this export (dedupe), or undefined when duplicates are kept. */
  seen: Set<unknown> | undefined;
  keyOf: ((record: unknown) => unknown) | undefined;
  /**
   * A file keeps the first record of each key and drops the rest; a dataset keeps them all, since
   * its publish merges by key and keeps the newest: there duplicates are only counted.
   */
  dropDuplicates: boolean;
  limit: number | undefined;
  maxAttempts: number | undefined;
  concurrency: number;
  pageConcurrency: number | undefined;
  overfetch: boolean;
  transform: ((records: AsyncIterable<unknown>) => AnyIterable<unknown>) | undefined;
  /** The caller's gates (`ExportOptions.gates`), passed before the ledger. */
  gates: readonly RequestGate[];
  /** Aborts every walk at once (the caller's signal, or a page that could not be staged). */
  signal: AbortSignal;
  /** Called after every staged page. */
  onPage: () => void;
}

export interface ExtractOutcome {
  halt: WalkHalt;
  ledger: AttemptLedger;
  /** The run has every record `limit` allows. */
  enough: boolean;
  /** Continuations the walks met that their rules do not follow. */
  ignored: string[];
  /** Credits spent on pages bought ahead that no walk will read (web search's empty pages past the end). */
  unread: number;
}

/** Walks every walk not done into the staging. Failures are not thrown: `halt` holds them, for the caller to publish first. */
export async function extract(plan: ExtractPlan): Promise<ExtractOutcome> {
  const { walks, state, journal } = plan;
  const halt = new WalkHalt();
  // An attempt under a cap is counted on the disk before it is sent, so not even a power loss can lose its count.
  const ledger = new AttemptLedger(state, plan.maxAttempts, async () => {
    await journal.save();
    await journal.flush();
  });
  const ignored: string[] = [];
  let unread = 0;
  const events = walks.events$.subscribe((event) => {
    if (!('endpoint' in event) || event.endpoint !== walks.op.id) return;
    ledger.refund(event);
    if (event.type === 'ignored-continuation') ignored.push(`${event.endpoint} offered a continuation its rule does not follow (${event.detail})`);
    if (event.type === 'overfetch') unread += event.credits;
  });
  const guard = new StagingGuard(plan.spool, halt);
  let enough = false;
  // One page is staged at a time: the spool and the journal are shared by every walk.
  let staging: Promise<unknown> = Promise.resolve();
  const serially = <T>(task: () => Promise<T>): Promise<T> => {
    const result = staging.then(task);
    staging = result.catch(() => undefined);
    return result;
  };

  const stage = async (index: number, batch: PageBatch<unknown>): Promise<'more' | 'stop'> => {
    const walk = state.walks[index];
    const { records } = batch;
    const taken = await keep(plan, records, () => ({ page: batch.checkpoint.pagesDone, walk: `${walks.op.id} ${Object.entries(walk.params).map(([key, value]) => `${key}=${value}`).join(' ')}` }));
    const { read, duplicates } = taken;
    const page = records.slice(0, read);
    const after = plan.destination.inspect(walk, page);
    const kept = plan.destination.admit?.(walk, taken.kept) ?? taken.kept;
    const appended = await plan.spool.appendPage(kept, walks.scrub);
    state.run.repaired += appended.repaired;
    // A writer that follows the staging takes the page only as the spool holds it: as given, untransformed.
    await plan.destination.staged?.(kept, !appended.scrubbed && plan.transform === undefined);
    walk.checkpoint = read < records.length ? batch.checkpointAfter(read) : batch.checkpoint;
    walk.done = (batch.last && read === records.length) || after === 'stop';
    state.spool = plan.spool.mark();
    state.records += kept.length;
    state.pages++;
    state.run.records += kept.length;
    state.run.pages++;
    state.run.received += read;
    state.run.duplicates += duplicates;
    await journal.save(index);
    plan.onPage();
    if (plan.limit !== undefined && state.run.records >= plan.limit) {
      enough = true;
      halt.halt();
      return 'stop';
    }
    // A walk its rule ended runs on to the end of its stream, which reports pages bought ahead and never read.
    return after === 'stop' ? 'stop' : 'more';
  };

  const runWalk = async (index: number): Promise<void> => {
    const walk = state.walks[index];
    // An export reads every page it buys: it buys ahead at full page concurrency.
    const options = { signal: plan.signal, concurrency: plan.pageConcurrency, overfetch: plan.overfetch, lookahead: 'eager' as const };
    let stream;
    try {
      stream = walks.open(walk.params, walk.checkpoint, options, plan.held.forWalk(walkName(walk.params), walks.scrub));
    } catch (error) {
      halt.fail(index, error);
      return;
    }
    const control = stream[STREAM_CONTROL];
    control.addGate(halt);
    control.addGate(guard);
    control.addGate(plan.held);
    for (const gate of plan.gates) control.addGate(gate);
    // Last: an attempt the ledger lets through is sent.
    control.addGate(ledger);
    try {
      for await (const batch of stream.pageBatches()) {
        if ((await serially(() => stage(index, batch))) === 'stop') break;
      }
    } catch (error) {
      halt.fail(index, guard.explain(error));
    }
  };

  const pending = state.walks.flatMap((walk, index) => (walk.done ? [] : [index]));
  if (plan.limit !== undefined && state.run.records >= plan.limit) {
    // The run already has every record it may write (a resume with the same or a lower limit).
    pending.length = 0;
    enough = true;
  }
  try {
    let taken = 0;
    // A walk opened once the cap has refused an attempt could only be refused too: none is opened then.
    const more = (): boolean => taken < pending.length && !halt.halted && ledger.refused === 0;
    const runners = Array.from({ length: Math.min(plan.concurrency, pending.length) }, async () => {
      while (more()) await runWalk(pending[taken++]);
    });
    await Promise.all(runners);
    await staging;
  } finally {
    events.unsubscribe();
  }
  return { halt, ledger, enough, ignored, unread };
}

/**
 * What an export keeps of a page: its records up to the run's `limit`, less those whose key this
 * export already wrote (files; `dropDuplicates`), through `transform`. `read` is how many of the page's records were taken
 * (fewer than all only when `limit` cut the page), so the walk's checkpoint points right after them.
 */
async function keep(
  plan: ExtractPlan,
  records: readonly unknown[],
  page: () => { page: number; walk: string },
): Promise<{ kept: unknown[]; read: number; duplicates: number }> {
  const { seen, limit, transform, state } = plan;
  const room = limit === undefined ? Infinity : Math.max(0, limit - state.run.records);
  let duplicates = 0;
  const fresh = (record: unknown): boolean => {
    if (seen === undefined || plan.keyOf === undefined) return true;
    const key = plan.keyOf(record);
    if (key === undefined || key === null) return true;
    const comparable = typeof key === 'object' ? JSON.stringify(key) : key;
    if (seen.has(comparable)) {
      duplicates++;
      return !plan.dropDuplicates;
    }
    seen.add(comparable);
    return true;
  };
  if (transform === undefined) {
    const kept: unknown[] = [];
    let read = 0;
    for (const record of records) {
      if (kept.length >= room) break;
      read++;
      if (fresh(record)) kept.push(record);
    }
    return { kept, read, duplicates };
  }
  // Through `transform`, a record at a time: `read` counts the records it had pulled when the limit was met.
  let read = 0;
  async function* source(): AsyncGenerator<unknown> {
    for (const record of records) {
      read++;
      if (fresh(record)) yield record;
    }
  }
  const kept: unknown[] = [];
  if (room > 0) {
    const name = transform.name || 'transform';
    for await (const record of transformedRecords(transform(source()), name)) {
      checkTransformed(record, () => ({ transform: name, index: kept.length + 1, ...page() }));
      kept.push(record);
      if (kept.length >= room) break;
    }
  }
  if (kept.length < room) read = records.length;
  return { kept, read, duplicates };
}

/** The key an export dedupes by: `field` (a dotted path), or the operation's own key. */
export function operationKey(walks: ExportWalks): (record: unknown) => unknown {
  return (record) => keyOf(walks.op, record);
}
