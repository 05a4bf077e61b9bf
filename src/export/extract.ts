/**
 * The extract stage: every unfinished walk, `concurrency` at a time, each read a page at a time
 * (`RecordStream.pageBatches`), each page staged — its kept records appended to the spool and
 * flushed, the walk's checkpoint written to the journal (which flushes behind) — before that walk
 * asks for its next page.
 * Pages a walk buys ahead of its turn are staged as they arrive (`HeldPageFile`). So a kill at any
 * moment loses at most the requests in flight; every answered page is on disk.
 */
import { STREAM_CONTROL, type RequestGate } from '../control.ts';
import type { ClientEvent } from '../metering.ts';
import { keyOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import { keyReader, SeenKeys } from '../operators/record-key.ts';
import type { AnyIterable } from '../operators/types.ts';
import type { PageBatch, WalkStream } from '../walk.ts';
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
  /** Keys already written by this export (`duplicateKeys`), or undefined when duplicates are kept. */
  seen: SeenKeys | undefined;
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
  return new Extraction(plan).run();
}

/** One run of the extract stage: its walks' shared halt, ledger, guard and page-at-a-time staging. */
class Extraction {
  readonly #plan: ExtractPlan;
  readonly #halt = new WalkHalt();
  readonly #ledger: AttemptLedger;
  readonly #guard: StagingGuard;
  readonly #ignored: string[] = [];
  #unread = 0;
  #enough = false;
  // One page is staged at a time: the spool and the journal are shared by every walk.
  #staging: Promise<unknown> = Promise.resolve();

  constructor(plan: ExtractPlan) {
    this.#plan = plan;
    // An attempt under a cap is counted on the disk before it is sent, so not even a power loss can lose its count.
    this.#ledger = new AttemptLedger(plan.state, plan.maxAttempts, async () => {
      await plan.journal.save();
      await plan.journal.flush();
      // The count, with the pages staged before it, in one object where the staging is kept beyond this machine.
      await plan.destination.persist?.();
    });
    this.#guard = new StagingGuard(plan.spool, this.#halt);
  }

  async run(): Promise<ExtractOutcome> {
    const { walks, state, limit } = this.#plan;
    const events = walks.events$.subscribe((event) => this.#onEvent(event));
    const pending = state.walks.flatMap((walk, index) => (walk.done ? [] : [index]));
    // The run already has every record it may write (a resume with the same or a lower limit).
    if (limit !== undefined && state.run.records >= limit) {
      pending.length = 0;
      this.#enough = true;
    }
    try {
      await this.#runAll(pending);
    } finally {
      events.unsubscribe();
    }
    return { halt: this.#halt, ledger: this.#ledger, enough: this.#enough, ignored: this.#ignored, unread: this.#unread };
  }

  #onEvent(event: ClientEvent): void {
    if (!('endpoint' in event) || event.endpoint !== this.#plan.walks.op.id) return;
    this.#ledger.refund(event);
    if (event.type === 'ignored-continuation') this.#ignored.push(`${event.endpoint} offered a continuation its rule does not follow (${event.detail})`);
    if (event.type === 'overfetch') this.#unread += event.credits;
  }

  /** `concurrency` runners take the pending walks in turn. */
  async #runAll(pending: readonly number[]): Promise<void> {
    let taken = 0;
    // A walk opened once the cap has refused an attempt could only be refused too: none is opened then.
    const more = (): boolean => taken < pending.length && !this.#halt.halted && this.#ledger.refused === 0;
    const runners = Array.from({ length: Math.min(this.#plan.concurrency, pending.length) }, async () => {
      while (more()) await this.#runWalk(pending[taken++]);
    });
    await Promise.all(runners);
    await this.#staging;
  }

  async #runWalk(index: number): Promise<void> {
    let stream;
    try {
      stream = this.#open(index);
    } catch (error) {
      this.#halt.fail(index, error);
      return;
    }
    try {
      for await (const batch of stream.pageBatches()) {
        if ((await this.#serially(() => this.#stage(index, batch))) === 'stop') break;
      }
    } catch (error) {
      this.#halt.fail(index, this.#guard.explain(error));
    }
  }

  /** The walk's stream from its checkpoint, behind every gate an attempt must pass. */
  #open(index: number): WalkStream {
    const { walks, state, held, gates } = this.#plan;
    const walk = state.walks[index];
    // An export reads every page it buys: it buys ahead at full page concurrency.
    const options = { signal: this.#plan.signal, concurrency: this.#plan.pageConcurrency, overfetch: this.#plan.overfetch, lookahead: 'eager' as const };
    const stream = walks.open(walk.params, walk.checkpoint, options, held.forWalk(walkName(walk.params), walks.scrub));
    const control = stream[STREAM_CONTROL];
    control.addGate(this.#halt);
    control.addGate(this.#guard);
    control.addGate(held);
    // Without a cap the ledger records nothing: the pages staged so far are stored here instead.
    const { persist } = this.#plan.destination;
    if (persist !== undefined && this.#plan.maxAttempts === undefined) control.addGate({ acquire: () => this.#persisted(persist) });
    for (const gate of gates) control.addGate(gate);
    // Last: an attempt the ledger lets through is sent.
    control.addGate(this.#ledger);
    return stream;
  }

  /** Stores what is staged before an attempt is sent; a store that fails stops every walk, as a staging disk that fails does. */
  async #persisted(persist: () => Promise<void>): Promise<boolean> {
    try {
      await persist();
      return true;
    } catch (error) {
      this.#halt.fail(-1, error);
      return false;
    }
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#staging.then(task);
    this.#staging = result.catch(() => undefined);
    return result;
  }

  /** Stages one page of walk `index`: its kept records in the spool, then its checkpoint in the journal. */
  async #stage(index: number, batch: PageBatch<unknown>): Promise<'more' | 'stop'> {
    const plan = this.#plan;
    const { walks, state } = plan;
    const walk = state.walks[index];
    const { records } = batch;
    const taken = await keep(plan, records, () => ({ page: batch.checkpoint.pagesDone, walk: `${walks.op.id} ${Object.entries(walk.params).map(([key, value]) => `${key}=${value}`).join(' ')}` }));
    const { read, duplicates } = taken;
    const after = plan.destination.inspect(walk, records.slice(0, read));
    const kept = plan.destination.admit?.(walk, taken.kept, batch.servedAt) ?? taken.kept;
    const appended = await plan.spool.appendPage(kept, walks.scrub);
    state.run.repaired += appended.repaired;
    // A writer that follows the staging takes the page only as the spool holds it: as given, untransformed.
    await plan.destination.staged?.(kept, !appended.scrubbed && plan.transform === undefined);
    walk.checkpoint = read < records.length ? batch.checkpointAfter(read) : batch.checkpoint;
    walk.done = (batch.last && read === records.length) || after === 'stop';
    countPage(state, plan.spool, kept.length, read, duplicates);
    await plan.journal.save(index);
    plan.onPage();
    if (plan.limit !== undefined && state.run.records >= plan.limit) {
      this.#enough = true;
      this.#halt.halt();
      return 'stop';
    }
    // A walk its rule ended runs on to the end of its stream, which reports pages bought ahead and never read.
    return after === 'stop' ? 'stop' : 'more';
  }
}

/** The state's counts after a staged page of `kept` records, `read` of the walk's taken. */
function countPage(state: ExportState, spool: Spool, kept: number, read: number, duplicates: number): void {
  state.spool = spool.mark();
  state.records += kept;
  state.pages++;
  state.run.records += kept;
  state.run.pages++;
  state.run.received += read;
  state.run.duplicates += duplicates;
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
    if (seen === undefined || !seen.repeats(record)) return true;
    duplicates++;
    return !plan.dropDuplicates;
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

/**
 * The keys an export tells duplicates by, none met yet: `dedupe`'s field (a dotted path), else the
 * operation's own key; undefined with `keepDuplicates`.
 */
export function duplicateKeys(op: OperationSpec, options: { keepDuplicates?: boolean; dedupe?: string }): SeenKeys | undefined {
  if (options.keepDuplicates === true) return undefined;
  return new SeenKeys(options.dedupe !== undefined ? keyReader(options.dedupe) : (record: unknown) => keyOf(op, record));
}
