/**
 * A growing dataset as an export's destination (docs/datasets.md): part files per operation in a Hive
 * layout partitioned by the records' own time and laid into buckets by record key
 * (`buckets.ts`), one row per key in the whole dataset whoever fetched it, a schema kept
 * stable across runs, and per walk a high-water mark so a later run of a newest-first walk stops at
 * the first page that is wholly held (`inspect`).
 *
 * The engine stages pages in the writer's staging folder (`_dataset/<op>/staging-<writer>/`), out of
 * sight of readers. Publishing is a group commit (`commit.ts`): a writer whose pages are
 * staged leaves a commit, and a publish pass takes every commit waiting, holding the locks of the
 * partitions they touch. A pass merges the group's spools into new parts (`plan.ts`), writes
 * a journal naming them, the walk states and each writer's staging after it, then renames them into
 * place (`finishPass`): killed before the journal, the dataset is as it was and every staging
 * intact; killed after it, the next pass formed finishes it. Each record lives in one bucket part of
 * the partition of its own (unchanging) time, and each part is replaced whole, so a reader sees each
 * record exactly once at every moment.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatasetError, HeldStateError, SchemaDriftError, type SchemaDrift } from '../errors.ts';
import { isNewestFirst, keyOf, plausibleTimeOf, stableKeyOf, timeOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import type { DatasetFormat } from './parts.ts';
import { hasDrift, SchemaTracker, type DatasetSchemaTracker } from './schema.ts';
import { describeDrift } from '../export/summary.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { DEFAULT_LAYOUT, FETCHED_AT, MAX_BUCKETS, type Layout } from './buckets.ts';
import { fetchClock } from './fetch-clock.ts';
import { commitRemedy, commitsWaiting, GroupCommit, type Commit } from './commit.ts';
import { PassPlan } from './plan.ts';
import { finishLegacyGroup, finishLegacyPublishes, groupJournalRemedy, passJournalRemedy, rewriteIntoBuckets } from './rewrite.ts';
import { heldNames, holdOwnFields } from './columns.ts';
import { STABLE_KEY, STAND_IN } from './keys.ts';
import { isCurrentLayout, scanParts, type RecordedSchema } from './scan.ts';
import { bindSettings, withdrawSettings, type Binding } from './settings.ts';
import { checkOtherSchemas, checkParts, readClaimFile, readClockFile, readCommitFile, readGroupJournal, readMarksFile, readSchemaFile } from './state.ts';
import { DatasetPaths, LEGACY_PARTITIONING, partitionOf, partitioningFor, passFolders, writerName, type PartitionBy, type Partitioning } from './store.ts';
import { finishCompaction, hasPendingCompaction } from './compaction-journal.ts';
import { widenParts } from './widen.ts';
import { layoutForRun, recordedLayout, schemaTracker } from './nesting.ts';
import type { CompleteOutput, Destination, DestinationCapabilities, Published, SpoolPrefix } from '../export/destination.ts';
import { fileSize } from '../export/durable.ts';
import { objectPlace, writeObject } from './objects.ts';
import { LocalStorage } from './storage/local.ts';
import type { Storage } from './storage/types.ts';
import { StagingLog } from './staging-log.ts';
import { publishLocksOf, type DatasetLockChoice } from './lock-choice.ts';
import type { LockMechanism, RecordedLocks } from './locks.ts';
import { believed, endsIn, MARK_LAG_MS, noteNear, readWalkMarks, type WalkMark } from './marks.ts';
import type { ExportState, WalkState } from '../export/journal.ts';
import type { SchemaPolicy } from '../export/types.ts';


export interface DatasetDestinationOptions {
  format?: DatasetFormat;
  schema?: SchemaPolicy;
  shard?: { index: number; count: number };
  /** A writer name of the caller's (`ExportOptions.writer`), instead of `all` or the shard's. */
  writer?: string;
  /** The scheduler's run this export is (`ExportOptions.runId`). */
  runId?: string;
  /**
   * The dataset's store, opened by the caller (a `LocalStorage` on `output` by default); the
   * destination closes it with itself.
   */
  storage?: Storage;
  /**
   * The local working folder of a dataset on a store: the writer stages there (a folder of its own
   * per dataset), and its staging log on the store is the durable copy (`staging-log.ts`). Unused
   * for a local dataset, whose staging is in its own folder.
   */
  work?: string;
  /**
   * The locks writers publish under (`chooseDatasetLocks`: the caller's Redis leases, or leases on
   * the store), instead of lock folders. A dataset published with them once is refused to writers
   * of another mechanism.
   */
  locks?: DatasetLockChoice;
  /** A finished run leaves its pages to a publish in progress instead of waiting for it (`ExportOptions.handOff`). */
  handOff?: boolean;
  incremental?: boolean;
  maxDepth?: number;
  partition?: PartitionBy;
  /** How a new dataset lays rows into part files; a dataset keeps the layout it was created with. */
  layout?: Partial<Layout>;
  /** A Parquet dataset's layout: a new one records it (default nested); a run asking for another than the recorded one is refused. */
  parquetLayout?: ParquetLayout;
  /** The walks of this export: each reads its own state before the first request. */
  walks?: readonly Readonly<Record<string, string>>[];
  /** Record-time bounds in Unix ms (`since` inclusive, `until` exclusive). */
  since?: number;
  until?: number;
}

/** How a run asks its parts be written: a dataset that records how takes it, one that does must agree (`recover`, `bind`). */
type AskedWriting = Pick<DatasetDestinationOptions, 'format' | 'partition' | 'parquetLayout'> & { bucketing?: Partial<Layout> };

export class DatasetDestination implements Destination {
  readonly capabilities: DestinationCapabilities = { duplicates: 'merge', partialPublish: 'staged', publishesPrefix: true, drift: 'record' };
  readonly paths: DatasetPaths;
  readonly folder: string;
  readonly files;
  readonly remedy: string;
  readonly #policy: SchemaPolicy;
  readonly #incremental: boolean;
  readonly #maxDepth: number | undefined;
  readonly #asked: AskedWriting;
  readonly #askedLayout: Layout;
  #parquetLayout: ParquetLayout | undefined;
  /** The schema file this run bound a new dataset with (`bind`), which `unbind` withdraws when the run bought nothing. */
  #binding: Binding | undefined;
  readonly #walks: readonly Readonly<Record<string, string>>[];
  readonly #group: GroupCommit;
  readonly #handOff: boolean;
  readonly #runId: string | undefined;
  #format: DatasetFormat = 'parquet';
  #partitioning: Partitioning = LEGACY_PARTITIONING;
  /** The partitions of the records this process staged since its last publish: its commit's hint (`Commit.partitions`). */
  readonly #stagedPartitions = new Set<string>();
  /** Whether the spool holds records staged before `#stagedPartitions` began (a resumed run, or a rest a publish left). */
  #resumedStaging = false;
  /** For `freeze`: the recorded schema each page is held to as it comes (publishing measures drift afresh). */
  #tracker: DatasetSchemaTracker = new SchemaTracker([]);
  /** The state of each walk of this export that has one: its mark and the keys near it. */
  #marks = new Map<string, WalkMark>();
  /** Per walk, the keys near its mark, for `inspect`. */
  #near = new Map<string, Set<string>>();
  #completedRun: string | undefined;
  readonly #since: number | undefined;
  readonly #until: number | undefined;
  /** On a store: the staging's durable copy, opened by `recover` (`staging-log.ts`). */
  #log: StagingLog | undefined;
  /** On a store: stores what was staged since the last call (one object at most), before the next request is bought. */
  readonly persist?: () => Promise<void>;

  constructor(
    readonly output: string,
    readonly op: OperationSpec,
    options: DatasetDestinationOptions,
  ) {
    // The dataset's store, one for the destination (its requests are this export's), closed with it.
    const storage = options.storage ?? new LocalStorage(output);
    const onStore = storage.folder === undefined;
    const root = datasetRoot(output, storage, options.work);
    this.paths = new DatasetPaths(root, op.id, options.writer ?? writerName(options.shard), storage);
    this.folder = resolve(root);
    if (onStore) this.persist = () => this.#log?.sync() ?? Promise.resolve();
    this.files = {
      lock: join(this.paths.meta, `writer-${this.paths.writer}.lock`),
      journal: this.paths.checkpoint,
      spool: this.paths.spool,
      held: join(this.paths.staging, 'held.ndjson'),
    };
    // On a store the staging is its log there as well as the working folder: a restart drops both.
    const staging = onStore ? `${this.paths.staging} and ${objectPlace(storage, this.paths.names.stagingLog)}` : this.paths.staging;
    this.remedy = `restart the export (--restart) to discard ${staging} and start over; the published dataset stays`;
    this.#policy = options.schema ?? 'evolve';
    this.#incremental = options.incremental ?? true;
    this.#maxDepth = options.maxDepth;
    this.#asked = { format: options.format, partition: options.partition, parquetLayout: options.parquetLayout, bucketing: options.layout };
    this.#askedLayout = checkLayout({ ...DEFAULT_LAYOUT, ...options.layout });
    this.#walks = options.walks ?? [];
    this.#group = new GroupCommit(this.paths, publishLocksOf(options.locks), (pass) => this.#plan(pass));
    this.#handOff = options.handOff ?? false;
    this.#runId = options.runId;
    this.#since = options.since;
    this.#until = options.until;
  }

  get format(): DatasetFormat {
    return this.#format;
  }

  async prepare(): Promise<void> {
    await mkdir(this.paths.meta, { recursive: true });
  }

  /**
   * Finishes a publish or compaction a kill left half done, migrates a dataset of per-writer parts,
   * drops a commit of this writer a kill left waiting (its staging is resumed instead), and reads
   * the schema and the walk states this run goes by.
   */
  async recover(restart: boolean): Promise<void> {
    // Before anything reads the staging: the working folder holds what the store does (`staging-log.ts`).
    if (this.persist !== undefined) this.#log = await StagingLog.open(this.paths.storage, this.paths.names.stagingLog, this.paths.staging, STAGING_FILES);
    if ((await fileSize(this.paths.run)) !== undefined && restart) await this.discard();
    if ((await fileSize(this.paths.run)) !== undefined) {
      throw new HeldStateError(
        `${this.paths.staging} was staged by socialstream 0.1.0, whose staging this version does not read: finish it with 0.1.0 (export --resume), or ${this.remedy}`,
        this.output,
      );
    }
    this.#resumedStaging = ((await fileSize(this.paths.spool)) ?? 0) > 0;
    let schema = await this.#recordedSchema();
    this.#checkLocks(schema);
    await this.#checkWaiting();
    await this.#finishHandedOff();
    if (await this.#unsettled(schema)) {
      await this.#group.exclusive(async () => {
        await this.#settle();
        await this.paths.storage.remove(this.paths.names.commit());
        await this.paths.storage.remove(this.paths.names.receipt());
      });
      schema = await this.#recordedSchema();
    }
    if (schema === undefined) await checkOtherSchemas(this.paths);
    await this.#adopt(schema);
    // Before any request: a part this run would merge into must read back.
    await this.#checkParts(schema, this.#format, this.#partitioning);
    // The latest fetch any writer published: this process's stamps come after it (`fetch-clock.ts`).
    fetchClock.observe(await readClockFile(this.paths));
    const writer = await readMarksFile(this.paths);
    this.#completedRun = writer?.completedRun;
    this.#marks = this.#incremental && this.op.newestFirst !== undefined ? await readWalkMarks(this.paths, this.#walks) : new Map<string, WalkMark>();
    this.#near = new Map([...this.#marks].map(([name, mark]) => [name, new Set(mark.near.map(([key]) => key))]));
  }

  #recordedSchema(): Promise<RecordedSchema | undefined> {
    return readSchemaFile(this.paths);
  }

  /**
   * Takes how the dataset's parts are written: as `schema` records (what this run asks must agree:
   * each refusal names the remedy), or for a dataset that records nothing yet, as this run asks.
   */
  async #adopt(schema: RecordedSchema | undefined): Promise<void> {
    if (schema !== undefined) this.#checkAsked(schema);
    ({ format: this.#format, parquetLayout: this.#parquetLayout, partitioning: this.#partitioning } = await this.#writtenAs(schema, this.#asked));
    this.#tracker = schemaTracker(schema?.columns ?? [], this.#parquetLayout);
  }

  /** Refuses a format or a bucketing this run asks that the dataset does not record (`#writtenAs` checks the rest). */
  #checkAsked(schema: RecordedSchema): void {
    if (this.#asked.format !== undefined && schema.format !== this.#asked.format) {
      throw new DatasetError(`${this.output} holds ${this.op.id} as ${schema.format} part files; a run cannot add ${this.#asked.format} parts to it`, this.output);
    }
    const asked = this.#asked.bucketing;
    const recorded = schema.layout;
    if (asked === undefined || recorded === undefined) return;
    if ((asked.buckets ?? recorded.buckets) === recorded.buckets && (asked.splitBytes ?? recorded.splitBytes) === recorded.splitBytes) return;
    throw new DatasetError(
      `${this.output} lays ${this.op.id} into ${recorded.buckets} bucket(s) split past ${recorded.splitBytes} bytes; a run cannot lay it into ${asked.buckets ?? recorded.buckets} split past ${asked.splitBytes ?? recorded.splitBytes} ` +
        '(run without bucketing, or export into a new directory)',
      this.output,
    );
  }

  /**
   * Just before the first request: a dataset that records no settings yet is bound to this run's
   * (`settings.ts`), and one that another writer bound or published since `recover` read it
   * is taken as recorded, what this run asks agreeing with it. Either way nothing was bought yet.
   */
  async bind(): Promise<void> {
    let recorded = await this.#recordedSchema();
    if (recorded === undefined) {
      this.#binding = await this.#bindSettings();
      if (this.#binding !== undefined) return;
      recorded = await this.#recordedSchema();
    }
    this.#checkLocks(recorded);
    await this.#adopt(recorded);
  }

  /**
   * Binds a dataset that records no settings to this run's (`settings.ts`). Writers locked in Redis
   * may share a store that ignores conditional writes (theirs is never probed), where two creates
   * both succeed: they bind holding the meta lock, under which the schema is looked for again.
   */
  #bindSettings(): Promise<Binding | undefined> {
    if (this.#group.locks.mechanism !== 'queue') return bindSettings(this.paths, this.#settings());
    return this.#group.locks.run(this.paths.metaLock, async () => ((await this.#recordedSchema()) === undefined ? bindSettings(this.paths, this.#settings()) : undefined));
  }

  /**
   * A run that ended having bought nothing binds nothing: its binding goes, unless a publish replaced
   * it. Under the meta lock, which passes write the schema under. A binding that cannot be withdrawn
   * stays, the settings this run asked, as if it had bought a page.
   */
  async unbind(): Promise<void> {
    const binding = this.#binding;
    if (binding === undefined) return;
    this.#binding = undefined;
    await this.#group.locks.run(this.paths.metaLock, () => withdrawSettings(this.paths, binding)).catch(() => undefined);
  }

  /** The settings this run writes by, as a schema without columns: what `bind` records of a new dataset. */
  #settings(): RecordedSchema {
    return {
      version: 1,
      operation: this.op.id,
      format: this.#format,
      columns: [],
      partitioning: this.#partitioning,
      layout: this.#askedLayout,
      // Nothing is published yet: no part lacks its key index, and no open has anything to migrate.
      keys: 'indexed',
      ...(this.#parquetLayout === undefined ? {} : { parquetLayout: this.#parquetLayout }),
      ...this.#recordedLocks(),
    };
  }

  async #checkParts(schema: RecordedSchema | undefined, format: DatasetFormat, partitioning: Partitioning): Promise<void> {
    const parts = await scanParts(this.output, { operation: this.op.id, schema, format, partitioning, paths: this.paths });
    await checkParts(parts, format, this.paths);
  }

  /**
   * Checks, before any request, what this run's publish will read of other writers: a group publish
   * a kill left (whoever publishes next finishes it) and the commits waiting (a publish takes them;
   * this writer's own, a kill left, is dropped unread). A commit this process found whole before
   * is not read again: hundreds may wait while a publish runs, and every walk opening would read them all.
   */
  async #checkWaiting(): Promise<void> {
    await readGroupJournal(this.paths, this.paths.names.publishJournal, groupJournalRemedy(this.paths));
    for (const pass of await passFolders(this.paths)) {
      await readGroupJournal(this.paths, this.paths.names.passJournal(pass), passJournalRemedy(this.paths, pass));
      await readClaimFile(this.paths, pass, passJournalRemedy(this.paths, pass));
    }
    for (const writer of await commitsWaiting(this.paths)) {
      if (writer === this.paths.writer) continue;
      const name = this.paths.names.commit(writer);
      const place = objectPlace(this.paths.storage, name);
      // A commit is only ever replaced whole or removed: the store's version tag of it tells a new one.
      const version = await this.paths.storage.version(name);
      if (version === undefined) checkedCommits.delete(place);
      if (version === undefined || checkedCommits.get(place) === version) continue;
      await readCommitFile(this.paths, writer, commitRemedy(this.paths, writer));
      checkedCommits.set(place, version);
    }
  }

  /** The lock mechanism this run's settings record: none for lock folders. */
  #recordedLocks(): { locks?: RecordedLocks } {
    const { mechanism } = this.#group.locks;
    return mechanism === 'folders' ? {} : { locks: mechanism };
  }

  /**
   * One lock mechanism per dataset, once one is recorded: Redis leases (written through a queue, or
   * with --locks) and leases on the store cannot see each other, nor this run's lock files either.
   */
  #checkLocks(schema: RecordedSchema | undefined): void {
    const recorded = schema?.locks;
    if (recorded === undefined || recorded === this.#recordedLocks().locks) return;
    const held =
      recorded === 'queue'
        ? 'Redis leases (written through a queue, or with --locks)'
        : 'leases on its store (written by lone writers without --locks)';
    const remedy = recorded === 'queue' ? 'export into it with --locks redis://… (the same Redis) or through the queue (--queue)' : 'export into it from its store (s3://…) without --locks or --queue';
    throw new DatasetError(`${this.output} is locked with ${held}, which this run's ${MECHANISM_WORDS[this.#group.locks.mechanism]} cannot see: ${remedy}, or into another directory`, this.output);
  }

  /**
   * A commit this writer handed off (its run finished and its checkpoint went) is published before
   * this run reads the dataset: its walks' marks and its completed run come with it. A receipt
   * without a commit is of a publish that took a handed-off commit: nobody waits for it.
   */
  async #finishHandedOff(): Promise<void> {
    const committed = await this.paths.storage.exists(this.paths.names.commit());
    if (committed && (await fileSize(this.paths.checkpoint)) === undefined) await this.#group.awaitOwn();
    else if (!committed) await this.paths.storage.remove(this.paths.names.receipt());
  }

  /** Whether something a kill left, or an older layout, must be settled under the lock before this run reads the dataset. */
  async #unsettled(schema: RecordedSchema | undefined): Promise<boolean> {
    if (schema !== undefined && !(await isCurrentLayout(this.paths, schema))) return true;
    // A publish journal of another's is not waited for: its publisher finishes it, or whoever publishes next.
    const { names } = this.paths;
    for (const name of [names.journal, names.commit(), names.receipt()]) if (await this.paths.storage.exists(name)) return true;
    return hasPendingCompaction(this.paths);
  }

  /**
   * Under the publish lock with no pass live: finishes what kills left, and migrates a dataset of an
   * older layout (per-writer parts, parts without key indexes, undated records in `_date=undated`)
   * into buckets, each with its key index, keeping each key once.
   */
  async #settle(): Promise<void> {
    await finishCompaction(this.paths);
    await finishLegacyGroup(this.paths, this.#group.locks);
    await finishLegacyPublishes(this.paths);
    const schema = await this.#recordedSchema();
    if (schema === undefined || (await isCurrentLayout(this.paths, schema))) return;
    const partitioning = schema.partitioning ?? LEGACY_PARTITIONING;
    // The migration reads every part: one cut short is named, not met half way.
    await this.#checkParts(schema, schema.format, partitioning);
    await rewriteIntoBuckets(this.op, { operation: this.op.id, schema, format: schema.format, partitioning, paths: this.paths }, partitioning.by, true);
  }

  /** A dataset is "complete" only for the run it last published complete (`runId`): any other run buys what is new. */
  completeOutput(): Promise<CompleteOutput | undefined> {
    return Promise.resolve(this.#runId !== undefined && this.#completedRun === this.#runId ? {} : undefined);
  }

  async discard(): Promise<void> {
    await rm(this.paths.staging, { recursive: true, force: true });
    await this.#log?.clear();
  }

  /**
   * Holds a page to a frozen schema, tracks the walk's newest plausible record time in bounds (its
   * next mark) and the keys near it, and ends a newest-first walk on evidence that everything
   * further is held: a page that ends in `EVIDENCE` held records in a row (or is held whole, when
   * shorter), a record being held by a plausible time more than `MARK_LAG_MS` below the mark or by
   * its key among those the walk met near its mark; or, with `since`, a page that ends in as many
   * records older than it. The records after them are older still. A pinned or out-of-order record
   * is one record, so it never ends a walk; a record whose time is implausible (garbage, far
   * future) counts as held only by its key, and as older than `since` never.
   */
  inspect(walk: WalkState, records: readonly unknown[]): 'more' | 'stop' {
    if (records.length > 0) {
      const held = heldNames(this.#partitioning);
      this.#checkFrozen(records.map((record) => holdOwnFields(record, held)));
    }
    const newestFirst = isNewestFirst(this.op, walk.params);
    const now = Date.now();
    const name = walkName(walk.params);
    const mark = this.#incremental && newestFirst ? believed(this.#marks.get(name)?.mark, now) : undefined;
    const near = this.#near.get(name);
    const held: boolean[] = [];
    const older: boolean[] = [];
    for (const record of records) {
      const time = plausibleTimeOf(this.op, record, now);
      if (time !== undefined && this.#inBounds(time) && (walk.newest === undefined || time > walk.newest)) walk.newest = time;
      const key = mark === undefined || near === undefined ? undefined : (keyOf(this.op, record) ?? stableKeyOf(this.op, record, walk.params));
      held.push(mark !== undefined && ((time !== undefined && time <= mark - MARK_LAG_MS) || (key !== undefined && near!.has(key))));
      older.push(this.#since !== undefined && time !== undefined && time < this.#since);
    }
    // Only records the dataset will hold: one outside `since`/`until` is not held by a later run.
    if (this.#incremental && newestFirst) noteNear(this.op, walk, records.filter((record) => this.#admitted(record)), now);
    const reached = mark !== undefined && endsIn(held);
    if (reached) walk.stoppedAtMark = true;
    return reached || (newestFirst && endsIn(older)) ? 'stop' : 'more';
  }

  /**
   * Drops records outside `since`/`until`, gives a record without a usable key its stable key (one
   * with a key, the stand-in it replaces: `STAND_IN`), and every record its page's stamp of the fetch
   * clock (`_fetched_at`, `fetch-clock.ts`: the service's time when it said, in the order the pages
   * are staged; the latest fetch of a key is kept).
   */
  admit(walk: WalkState, records: unknown[], servedAt: number | undefined): unknown[] {
    const admitted: unknown[] = [];
    const fetched = fetchClock.stamp(servedAt);
    const held = heldNames(this.#partitioning);
    for (const each of records) {
      if (!this.#admitted(each)) continue;
      // A record's own fields named like a column the dataset adds are kept in `_extra` (`columns.ts`).
      const record = holdOwnFields(each, held);
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        admitted.push(record);
        continue;
      }
      const stable = stableKeyOf(this.op, record, walk.params);
      const keyed = keyOf(this.op, record) !== undefined;
      this.#stagedPartitions.add(partitionOf(timeOf(this.op, record), this.#partitioning.by));
      admitted.push({ ...record, ...(stable === undefined ? {} : { [keyed ? STAND_IN : STABLE_KEY]: stable }), [FETCHED_AT]: fetched });
    }
    return admitted;
  }

  #admitted(record: unknown): boolean {
    const time = timeOf(this.op, record);
    return time === undefined || this.#inBounds(time);
  }

  #inBounds(time: number): boolean {
    return (this.#since === undefined || time >= this.#since) && (this.#until === undefined || time < this.#until);
  }

  /**
   * Publishes the spool with every other writer's waiting (group commit, `commit.ts`): leaves
   * this writer's commit, then leads the publish or is taken by another's. With `handOff`, a
   * publish in progress takes the commit and this returns at once, without `dataset` changes. A
   * publish that widened a column is followed by the rewrite of the parts of the narrower type.
   */
  async publish(state: ExportState, complete: boolean, through?: SpoolPrefix): Promise<Published> {
    // A pass of another machine's may take the commit: what it names is on the store first.
    await this.persist?.();
    const commit: Commit = {
      writer: this.paths.writer,
      complete,
      ...(complete && this.#runId !== undefined ? { runId: this.#runId } : {}),
      state,
      ...(through === undefined ? {} : { through }),
      // A resumed run staged pages before this process: then the hint is left out, not given short.
      ...(this.#resumedStaging ? {} : { partitions: [...this.#stagedPartitions].sort() }),
    };
    this.#stagedPartitions.clear();
    this.#resumedStaging = through !== undefined;
    // Only a finished run hands off: a partial one goes on from the checkpoint its publish writes.
    const receipt = await this.#group.publish(commit, this.#handOff && complete);
    // The pass replaced this writer's staging through its log (`finishStoreStaging`): the working folder takes it.
    if (receipt !== undefined) await this.#log?.catchUp();
    // A complete run's pages are published and its receipt read: the state the publish kept for a resume goes.
    if (complete && receipt !== undefined) await this.discard();
    // Before it reports: the parts of a type its publish (or a killed writer's) widened are rewritten (`widen.ts`).
    const widening = await widenParts(this.op, this.paths, this.#group);
    const recorded = await this.#recordedSchema();
    this.#tracker = schemaTracker(recorded?.columns ?? [], recorded === undefined ? this.#parquetLayout : recordedLayout(recorded));
    if (complete && this.#runId !== undefined) this.#completedRun = this.#runId;
    const dataset = receipt === undefined ? undefined : { ...receipt.changes, ...(widening === undefined || widening.partitions === 0 ? {} : { widening }) };
    return { ...(dataset === undefined ? {} : { dataset }), repaired: receipt?.repaired ?? 0, spoolTaken: true };
  }

  #checkFrozen(records: readonly unknown[]): void {
    // The run that records the first schema cannot drift from it.
    if (this.#policy !== 'freeze' || this.#tracker.first) return;
    const drift = this.#tracker.observe(records, this.#maxDepth);
    if (!hasDrift(drift)) return;
    const report: SchemaDrift = { added: drift.added.map(({ name, kind }) => ({ column: name, kind })), missing: [], conflicting: drift.conflicting };
    throw new SchemaDriftError(`${this.op.id}: the schema is frozen and a page drifts from it (${describeDrift(report)})`, report, this.output, {
      endpoint: this.op.id,
    });
  }

  /** The plan of a publish pass, by the dataset as recorded now (a compaction since this run opened may have changed it: `compact.ts`). */
  async #plan(pass: string): Promise<PassPlan> {
    const recorded = await this.#recordedSchema();
    this.#checkLocks(recorded);
    // A first run of another writer's may have recorded how since this one opened: the recorded way is the dataset's.
    const written = await this.#writtenAs(recorded, recorded === undefined ? this.#asked : {});
    if (recorded !== undefined) this.#partitioning = written.partitioning;
    return new PassPlan({
      op: this.op,
      paths: this.paths,
      ...written,
      layout: recorded?.layout ?? this.#askedLayout,
      maxDepth: this.#maxDepth,
      recorded,
      locks: recorded?.locks ?? this.#recordedLocks().locks,
      pass,
    });
  }

  /**
   * How the dataset's parts are written: as recorded, or for a dataset that records nothing yet, as
   * `asked`; what is asked of a recorded one must agree with it (each refusal names the remedy).
   * `recover` sets its fields from this, and each pass works it out afresh: a commit this writer
   * handed off is published while `recover` runs, before it has set them.
   */
  async #writtenAs(
    recorded: RecordedSchema | undefined,
    asked: AskedWriting,
  ): Promise<{ format: DatasetFormat; partitioning: Partitioning; parquetLayout: ParquetLayout | undefined }> {
    const format = recorded?.format ?? asked.format ?? 'parquet';
    const parquetLayout = layoutForRun(recorded, format, asked.parquetLayout, this.paths);
    const partitioning = await partitioningFor(this.paths, recorded === undefined ? undefined : (recorded.partitioning ?? LEGACY_PARTITIONING), asked.partition);
    return { format, partitioning, parquetLayout };
  }

  async close(): Promise<void> {
    await this.paths.storage.close();
  }

  /** Records the drift a frozen schema met; the staging stays for a resume after the schema is settled. */
  async recordFrozenDrift(error: SchemaDriftError): Promise<void> {
    await writeObject(this.paths.storage, this.paths.names.drift, { operation: this.op.id, at: new Date().toISOString(), frozen: true, drift: error.drift });
  }
}

/** The files of a writer's staging its log keeps on a store (the journal, the spool, the held pages, the rest a partial publish kept). */
const STAGING_FILES = ['checkpoint.json', 'spool.ndjson', 'held.ndjson', 'spool-rest.ndjson'];

/**
 * The local folder that stands for the dataset `output` held in `storage`: its own folder for a
 * local dataset; on a store, its folder under the working folder `work` (the writer stages there,
 * and its locks are named by their paths under it).
 */
export function datasetRoot(output: string, storage: Storage, work: string | undefined): string {
  return storage.folder !== undefined ? output : workFolder(work ?? defaultWork(), storage.location);
}

/** Where writers stage for datasets on a store when no working folder is given. */
function defaultWork(): string {
  return join(tmpdir(), 'socialstream-work');
}

/** A dataset's own folder under the working folder `work`: by a hash of its location, so two datasets never share one. */
function workFolder(work: string, location: string): string {
  return join(resolve(work), createHash('sha256').update(location).digest('hex').slice(0, 16));
}

/** Commits this process read and found whole, by where they are (`objectPlace`): their version then (`Storage.version`). */
const checkedCommits = new Map<string, string>();

/** This run's locks in words, for a refusal. */
const MECHANISM_WORDS: Record<LockMechanism, string> = { folders: 'lock files', queue: 'Redis leases', leases: 'leases on the store' };

function checkLayout(layout: Layout): Layout {
  if (!Number.isSafeInteger(layout.buckets) || layout.buckets < 1 || layout.buckets > MAX_BUCKETS) {
    throw new TypeError(`layout.buckets must be an integer from 1 to ${MAX_BUCKETS}, got ${String(layout.buckets)}`);
  }
  if (!(layout.splitBytes >= 1)) throw new TypeError(`layout.splitBytes must be a positive number of bytes, got ${String(layout.splitBytes)}`);
  return layout;
}
