/**
 * A growing dataset as an export's destination (README § 8): part files per operation in a Hive
 * layout partitioned by the records' own time and laid into buckets by record key
 * (`dataset-buckets.ts`), one row per key in the whole dataset whoever fetched it, a schema kept
 * stable across runs, and per walk a high-water mark so a later run of a newest-first walk stops at
 * the first page that is wholly held (`inspect`).
 *
 * The engine stages pages in the writer's staging folder (`_dataset/<op>/staging-<writer>/`), out of
 * sight of readers. Publishing is a group commit: a writer whose pages are staged leaves a commit
 * (`commits/<writer>.json`) and waits for the publish lock; whoever takes it publishes every commit
 * waiting (its own first), so many writers that finish at once share one rewrite of the parts they
 * touch. The publish merges the group's spools into new parts, writes a journal naming them, the walk
 * states and each writer's staging after it, then renames them into place: killed before the
 * journal, the dataset is as it was and every staging intact; killed after it, whoever takes the lock
 * next finishes it. Each record lives in one bucket part of the partition of its own (unchanging)
 * time, and each part is replaced whole, so a reader sees each record exactly once at every moment.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { DatasetError, HeldStateError, SchemaDriftError, type SchemaDrift } from '../errors.ts';
import { isNewestFirst, keyOf, plausibleTimeOf, stableKeyOf, timeOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import { readPart, type DatasetFormat } from '../../sinks/dataset-parts.ts';
import { describeDrift, hasDrift, mergeSchemas, SchemaTracker } from '../../sinks/dataset-schema.ts';
import { bucketFor, bucketPath, bucketsIn, DEFAULT_LAYOUT, FETCHED_AT, keyHash, MAX_BUCKETS, writeBucket, type Bucket, type Layout } from './dataset-buckets.ts';
import { BucketMerge, finishGroup, finishLegacyPublishes, groupJournalRemedy, keyOfRow, rewriteIntoBuckets, rowHash, STABLE_KEY, type GroupJournal, type GroupMember } from './dataset-rewrite.ts';
import { scanParts, type RecordedSchema } from './dataset-scan.ts';
import { checkOtherSchemas, checkParts, readCommitFile, readGroupJournal, readMarksFile, readReceiptFile, readSchemaFile } from './dataset-state.ts';
import { checkPartitionCollision, DatasetPaths, LEGACY_PARTITIONING, partitioningFor, partitionOf, tryLock, withLock, writerName, type PartitionBy, type Partitioning } from './dataset-store.ts';
import { finishCompaction, hasPendingCompaction } from './compaction-journal.ts';
import { fromNdjsonPrefix } from '../../sinks/from-ndjson.ts';
import { DEFAULT_MAX_DEPTH } from '../../sinks/rows.ts';
import type { Destination, DestinationCapabilities, Published, SpoolPrefix } from './destination.ts';
import { copySpoolPart, fileSize, writeJsonAtomic, type SpoolMark } from './durable.ts';
import { believed, endsIn, laterMark, MARK_LAG_MS, nextWalkMark, noteNear, readWalkMarks, type WalkMark } from './marks.ts';
import { freshState, type ExportState, type WalkState } from './journal.ts';
import type { DatasetChanges, SchemaPolicy } from './types.ts';

export { describeDrift } from '../../sinks/dataset-schema.ts';

export interface DatasetDestinationOptions {
  format?: DatasetFormat;
  schema?: SchemaPolicy;
  shard?: { index: number; count: number };
  /** A writer name of the caller's (`ExportOptions.writer`), instead of `all` or the shard's. */
  writer?: string;
  /** The scheduler's run this export is (`ExportOptions.runId`). */
  runId?: string;
  /**
   * The lock writers publish under (`ExportOptions.locks.publish`: Redis leases in queue mode),
   * instead of the lock folder. A dataset published with it once is refused to writers without it.
   */
  publishLock?: <T>(path: string, fn: () => Promise<T>) => Promise<T>;
  /** The same lock taken only if free (`ExportLocks.tryPublish`). */
  tryPublishLock?: <T>(path: string, fn: () => Promise<T>) => Promise<{ value: T } | undefined>;
  incremental?: boolean;
  maxDepth?: number;
  partition?: PartitionBy;
  /** How a new dataset lays rows into part files; a dataset keeps the layout it was created with. */
  layout?: Partial<Layout>;
  /** The walks of this export: each reads its own state before the first request. */
  walks?: readonly Readonly<Record<string, string>>[];
  /** Record-time bounds in Unix ms (`since` inclusive, `until` exclusive). */
  since?: number;
  until?: number;
}

/** How often a writer waiting to publish looks whether its pages were taken; every `TRY_EVERY`th look it tries the lock. */
const POLL_MS = 20;
const TRY_EVERY = 10;
/** A publish of a large group rewrites many parts; a lock held longer than this is a run that hangs. */
const PUBLISH_PATIENCE_MS = 10 * 60_000;

/** A writer's staged pages, waiting for a publish (`DatasetPaths.commit`). */
interface Commit {
  writer: string;
  complete: boolean;
  runId?: string;
  state: ExportState;
  /** Only these first records of the spool are published; those after stay staged (a lowered limit, README §7). */
  through?: SpoolPrefix;
}

/** What a publish tells a writer it took the pages of (`DatasetPaths.receipt`). */
interface Receipt {
  changes: DatasetChanges;
  repaired: number;
}

export class DatasetDestination implements Destination {
  readonly capabilities: DestinationCapabilities = { duplicates: 'merge', partialPublish: 'staged', publishesPrefix: true, drift: 'record' };
  readonly paths: DatasetPaths;
  readonly folder: string;
  readonly files;
  readonly remedy: string;
  readonly #policy: SchemaPolicy;
  readonly #incremental: boolean;
  readonly #maxDepth: number;
  readonly #askedFormat: DatasetFormat | undefined;
  readonly #askedPartition: PartitionBy | undefined;
  readonly #askedLayout: Layout;
  readonly #walks: readonly Readonly<Record<string, string>>[];
  readonly #publishLock: DatasetDestinationOptions['publishLock'];
  readonly #tryPublishLock: DatasetDestinationOptions['tryPublishLock'];
  readonly #runId: string | undefined;
  #format: DatasetFormat = 'parquet';
  #partitioning: Partitioning = LEGACY_PARTITIONING;
  /** For `freeze`: the recorded schema each page is held to as it comes (publishing measures drift afresh). */
  #tracker = new SchemaTracker([]);
  /** The state of each walk of this export that has one: its mark and the keys near it. */
  #marks = new Map<string, WalkMark>();
  /** Per walk, the keys near its mark, for `inspect`. */
  #near = new Map<string, Set<string>>();
  #completedRun: string | undefined;
  readonly #since: number | undefined;
  readonly #until: number | undefined;

  constructor(
    readonly output: string,
    readonly op: OperationSpec,
    options: DatasetDestinationOptions,
  ) {
    this.paths = new DatasetPaths(output, op.id, options.writer ?? writerName(options.shard));
    this.folder = resolve(output);
    this.files = {
      lock: join(this.paths.meta, `writer-${this.paths.writer}.lock`),
      journal: this.paths.checkpoint,
      spool: this.paths.spool,
      held: join(this.paths.staging, 'held.ndjson'),
    };
    this.remedy = `restart the export (--restart) to discard ${this.paths.staging} and start over; the published dataset stays`;
    this.#policy = options.schema ?? 'evolve';
    this.#incremental = options.incremental ?? true;
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.#askedFormat = options.format;
    this.#askedPartition = options.partition;
    this.#askedLayout = checkLayout({ ...DEFAULT_LAYOUT, ...options.layout });
    this.#walks = options.walks ?? [];
    this.#publishLock = options.publishLock;
    this.#tryPublishLock = options.tryPublishLock;
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
    if ((await fileSize(this.paths.run)) !== undefined && restart) await this.discard();
    if ((await fileSize(this.paths.run)) !== undefined) {
      throw new HeldStateError(
        `${this.paths.staging} was staged by socialstream 0.1.0, whose staging this version does not read: finish it with 0.1.0 (export --resume), or ${this.remedy}`,
        this.output,
      );
    }
    let schema = await this.#recordedSchema();
    this.#checkLocks(schema);
    await this.#checkWaiting();
    if (await this.#unsettled(schema)) {
      await this.#locked(async () => {
        await this.#settle();
        await rm(this.paths.commit(), { force: true });
        await rm(this.paths.receipt(), { force: true });
      });
      schema = await this.#recordedSchema();
    }
    if (schema !== undefined && this.#askedFormat !== undefined && schema.format !== this.#askedFormat) {
      throw new DatasetError(`${this.output} holds ${this.op.id} as ${schema.format} part files; a run cannot add ${this.#askedFormat} parts to it`, this.output);
    }
    if (schema === undefined) await checkOtherSchemas(this.paths);
    this.#format = schema?.format ?? this.#askedFormat ?? 'parquet';
    this.#partitioning = await partitioningFor(this.paths, schema === undefined ? undefined : (schema.partitioning ?? LEGACY_PARTITIONING), this.#askedPartition);
    this.#tracker = new SchemaTracker(schema?.columns ?? []);
    const [rounding] = this.#tracker.doubles(this.op.bigIntegers ?? []);
    if (rounding !== undefined) throw this.#roundingError(rounding, 'integers past 2^53, which this operation sends there');
    // Before any request: a part this run would merge into must read back.
    await this.#checkParts(schema, this.#format, this.#partitioning);
    const writer = await readMarksFile(this.paths);
    this.#completedRun = writer?.completedRun;
    this.#marks = this.#incremental && this.op.newestFirst !== undefined ? await readWalkMarks(this.paths, this.#walks) : new Map<string, WalkMark>();
    this.#near = new Map([...this.#marks].map(([name, mark]) => [name, new Set(mark.near.map(([key]) => key))]));
  }

  #recordedSchema(): Promise<RecordedSchema | undefined> {
    return readSchemaFile(this.paths);
  }

  async #checkParts(schema: RecordedSchema | undefined, format: DatasetFormat, partitioning: Partitioning): Promise<void> {
    const parts = await scanParts(this.output, { operation: this.op.id, schema, format, partitioning, paths: this.paths });
    await checkParts(parts.map((part) => part.path), format, this.paths);
  }

  /**
   * Checks, before any request, what this run's publish will read of other writers: a group publish
   * a kill left (whoever publishes next finishes it) and the commits waiting (a publish takes them;
   * this writer's own, a kill left, is dropped unread).
   */
  async #checkWaiting(): Promise<void> {
    await readGroupJournal(this.paths, groupJournalRemedy(this.paths));
    for (const path of await commitsWaiting(this.paths)) if (path !== this.paths.commit()) await readCommitFile(path, writerOfCommit(path), commitRemedy(path));
  }

  /** One lock mechanism per dataset: one written through a queue takes Redis leases, which a pid-file writer cannot see. */
  #checkLocks(schema: RecordedSchema | undefined): void {
    if (schema?.locks !== 'queue' || this.#publishLock !== undefined) return;
    throw new DatasetError(
      `${this.output} is written through a queue (socialstream worker), whose workers lock it with Redis leases that this run cannot see: ` +
        'export into it through the queue (--queue), or into another directory',
      this.output,
    );
  }

  /** Whether something a kill left, or an older layout, must be settled under the lock before this run reads the dataset. */
  async #unsettled(schema: RecordedSchema | undefined): Promise<boolean> {
    if (schema !== undefined && schema.layout === undefined) return true;
    // A publish journal of another's is not waited for: its publisher finishes it, or whoever publishes next.
    for (const path of [this.paths.journal, this.paths.commit(), this.paths.receipt()]) if ((await fileSize(path)) !== undefined) return true;
    return hasPendingCompaction(this.paths);
  }

  /** Under the publish lock: finishes what kills left, and migrates per-writer parts into buckets. */
  async #settle(): Promise<void> {
    await finishCompaction(this.paths);
    await finishGroup(this.paths);
    await finishLegacyPublishes(this.paths);
    const schema = await this.#recordedSchema();
    if (schema === undefined || schema.layout !== undefined) return;
    const partitioning = schema.partitioning ?? LEGACY_PARTITIONING;
    // The migration reads every part: one cut short is named, not met half way.
    await this.#checkParts(schema, schema.format, partitioning);
    await rewriteIntoBuckets(this.op, { operation: this.op.id, schema, format: schema.format, partitioning, paths: this.paths }, partitioning.by, true);
  }

  /** A dataset is "complete" only for the run it last published complete (`runId`): any other run buys what is new. */
  isComplete(): Promise<boolean> {
    return Promise.resolve(this.#runId !== undefined && this.#completedRun === this.#runId);
  }

  async discard(): Promise<void> {
    await rm(this.paths.staging, { recursive: true, force: true });
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
      this.#checkExact(records);
      this.#checkFrozen(records);
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
   * Drops records outside `since`/`until`, gives a record without a usable key its stable key, and
   * every record the time its page was staged (`_fetched_at`: the newest fetch of a key is kept).
   */
  admit(walk: WalkState, records: unknown[]): unknown[] {
    const admitted: unknown[] = [];
    const fetched = new Date().toISOString();
    for (const record of records) {
      if (!this.#admitted(record)) continue;
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        admitted.push(record);
        continue;
      }
      const stable = keyOf(this.op, record) === undefined ? stableKeyOf(this.op, record, walk.params) : undefined;
      admitted.push({ ...record, ...(stable === undefined ? {} : { [STABLE_KEY]: stable }), [FETCHED_AT]: fetched });
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
   * Publishes the spool with every other writer's waiting (group commit): leaves this writer's
   * commit, then waits for the publish lock. Holding it, a writer whose commit another's publish
   * took reads what it changed; any other publishes the commits waiting, its own first.
   */
  async publish(state: ExportState, complete: boolean, through?: SpoolPrefix): Promise<Published> {
    const commit: Commit = {
      writer: this.paths.writer,
      complete,
      ...(complete && this.#runId !== undefined ? { runId: this.#runId } : {}),
      state,
      ...(through === undefined ? {} : { through }),
    };
    await mkdir(this.paths.commits, { recursive: true });
    await writeJsonAtomic(this.paths.commit(), commit);
    const lead = async (): Promise<Receipt> => {
      if ((await fileSize(this.paths.commit())) === undefined) return this.#receipt();
      await finishCompaction(this.paths);
      // A publish killed after its journal may have taken this commit: finishing it says so.
      await finishGroup(this.paths);
      if ((await fileSize(this.paths.commit())) === undefined) return this.#receipt();
      const journal = await this.#planGroup(commit);
      await writeJsonAtomic(this.paths.publishJournal, journal);
      await finishGroup(this.paths);
      return this.#receipt();
    };
    try {
      const receipt = await this.#waitOrLead(lead);
      this.#tracker = new SchemaTracker((await this.#recordedSchema())?.columns ?? []);
      if (complete && this.#runId !== undefined) this.#completedRun = this.#runId;
      return { dataset: receipt.changes, repaired: receipt.repaired, spoolTaken: true };
    } catch (error) {
      // Not published: the staging is whole, and a resume publishes it.
      if ((await fileSize(this.paths.publishJournal)) === undefined) await rm(this.paths.commit(), { force: true }).catch(() => undefined);
      throw error;
    }
  }

  async #receipt(): Promise<Receipt> {
    const path = this.paths.receipt();
    const receipt = await readReceiptFile(path, `delete it: the pages it reports on are in the dataset (dataset info counts them)`);
    await rm(path, { force: true });
    if (receipt === undefined) throw new DatasetError(`${this.output}: the publish of ${this.paths.writer}'s pages left no receipt (${path}); resume the export`, this.output);
    return receipt;
  }

  /**
   * The plan of every commit waiting, this writer's first; when the group cannot be published (a
   * record of another writer's refused, say), this writer's alone, the others left for their own.
   */
  async #planGroup(own: Commit): Promise<GroupJournal> {
    const others: Commit[] = [];
    for (const path of await commitsWaiting(this.paths)) {
      if (path === this.paths.commit()) continue;
      const commit = await readCommitFile(path, writerOfCommit(path), commitRemedy(path));
      if (commit !== undefined) others.push(commit);
    }
    if (others.length === 0) return this.#plan([own]);
    try {
      return await this.#plan([own, ...others]);
    } catch {
      await rm(this.paths.publishing, { recursive: true, force: true });
      return this.#plan([own]);
    }
  }

  /**
   * Until this writer's commit is taken: it is gone once another's publish took it (the receipt is
   * written first), else this writer takes the lock when it is free and leads. Without a lock that
   * can be tried, waits for the lock.
   */
  async #waitOrLead(lead: () => Promise<Receipt>): Promise<Receipt> {
    const tryPublish = this.#tryPublishLock;
    if (this.#publishLock !== undefined && tryPublish === undefined) return this.#locked(lead);
    const attempt = (fn: () => Promise<Receipt>) => (tryPublish === undefined ? tryLock(this.paths, fn) : tryPublish(this.paths.lock, fn));
    const deadline = Date.now() + PUBLISH_PATIENCE_MS;
    for (let polls = 0; ; polls++) {
      if ((await fileSize(this.paths.commit())) === undefined) return this.#receipt();
      // The lock is tried less often than the commit is looked at: in queue mode each try is a Redis round trip.
      const led = polls % TRY_EVERY === 0 ? await attempt(lead) : undefined;
      if (led !== undefined) return led.value;
      if (Date.now() > deadline) throw new DatasetError(`${this.paths.meta} is locked by another run that has been publishing for ten minutes (${this.paths.lock})`, this.output);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    return this.#publishLock === undefined ? withLock(this.paths, fn) : this.#publishLock(this.paths.lock, fn);
  }

  /** Refuses a page whose bigints a column recorded as double would round (README "Big integers"). */
  #checkExact(records: readonly unknown[]): void {
    const [first] = this.#tracker.rounding(records);
    if (first !== undefined) throw this.#roundingError(first.column, `integers past 2^53 such as ${first.value} from this page`);
  }

  #roundingError(column: string, what: string): DatasetError {
    return new DatasetError(
      `${this.op.id}: ${this.output} recorded ${column} as double, which rounds ${what}; ` +
        `its parts may hold earlier values of ${column} rounded, and their digits cannot be recovered. ` +
        `Export into a new dataset directory (or move ${this.output} aside first): it records ${column} as an exact integer. Nothing of this run was published.`,
      this.output,
      { endpoint: this.op.id },
    );
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

  /** Reads every commit's staged records, merges them into the bucket parts they touch, and writes the new parts (staged). */
  async #plan(commits: readonly Commit[]): Promise<GroupJournal> {
    const recorded = await this.#recordedSchema();
    this.#checkLocks(recorded);
    // A compaction since this run opened may have changed it (`compact.ts`): the recorded one is the dataset's.
    if (recorded?.partitioning !== undefined) this.#partitioning = recorded.partitioning;
    const layout = recorded?.layout ?? this.#askedLayout;
    const tracker = new SchemaTracker(recorded?.columns ?? []);
    /** Per partition, the incoming rows and the commit each came from. */
    const incoming = new Map<string, { row: Record<string, unknown>; key: string; from: number }[]>();
    const setAside = commits.map(() => 0);
    const rests = await Promise.all(commits.map((commit) => this.#keepRest(commit)));
    for (const [from, commit] of commits.entries()) {
      const bytes = commit.through?.bytes ?? commit.state.spool.bytes;
      if (bytes === 0) continue;
      let chunk: Record<string, unknown>[] = [];
      for await (const record of fromNdjsonPrefix(new DatasetPaths(this.output, this.op.id, commit.writer).spool, bytes)) {
        const key = keyOfRow(this.op, record);
        // Without a key it would be appended again on every run: it is counted instead.
        if (key === undefined) {
          setAside[from]++;
          continue;
        }
        const partition = partitionOf(timeOf(this.op, record), this.#partitioning.by);
        let list = incoming.get(partition);
        if (list === undefined) incoming.set(partition, (list = []));
        list.push({ row: record, key, from });
        chunk.push(record);
        if (chunk.length >= 1_000) {
          tracker.observe(chunk, this.#maxDepth);
          chunk = [];
        }
      }
      tracker.observe(chunk, this.#maxDepth);
    }
    const columns = mergeSchemas(recorded?.columns ?? [], tracker.columns());
    checkPartitionCollision(this.paths, this.#partitioning, columns);
    const schema: RecordedSchema = {
      version: 1,
      operation: this.op.id,
      format: this.#format,
      columns,
      partitioning: this.#partitioning,
      layout,
      ...(recorded?.locks === 'queue' || this.#publishLock !== undefined ? { locks: 'queue' as const } : {}),
    };
    const renames: [string, string][] = [];
    const removes: string[] = [];
    const added = commits.map(() => 0);
    const updated = commits.map(() => 0);
    const touched = commits.map(() => new Set<string>());
    let repaired = 0;
    const partitions = [...incoming.keys()].sort();
    for (const partition of partitions) {
      const folder = this.paths.partitionFolder(partition, this.#partitioning.column);
      const parts = await bucketsIn(folder, this.#format);
      const byBucket = new Map<string, { bucket: Bucket; rows: { row: Record<string, unknown>; key: string; from: number }[] }>();
      for (const entry of incoming.get(partition)!) {
        const bucket = bucketFor(parts, keyHash(entry.key), layout.buckets);
        const name = `${bucket.bucket}-${bucket.of}`;
        const group = byBucket.get(name) ?? { bucket, rows: [] };
        group.rows.push(entry);
        byBucket.set(name, group);
        touched[entry.from].add(partition);
      }
      for (const { bucket, rows } of byBucket.values()) {
        const target = bucketPath(folder, bucket, this.#format);
        const merge = new BucketMerge(this.op);
        for await (const row of readExisting(target, this.#format)) merge.add(row);
        const counted = commits.map(() => new Set<string>());
        for (const { row, key, from } of rows) {
          const held = merge.has(key);
          const kept = merge.add(row, key);
          if (counted[from].has(key)) continue;
          counted[from].add(key);
          if (!held) added[from]++;
          else if (kept) updated[from]++;
        }
        const stagedPath = (each: Bucket) => join(this.paths.publishing, `${partition}-b${each.bucket}-of-${each.of}.staged`);
        const written = await writeBucket(merge.rows(), bucket, (row) => rowHash(this.op, row), stagedPath, this.#format, columns, layout.splitBytes);
        for (const part of written) {
          // Old rows were repaired when first written: the count is this publish's strings.
          repaired += part.repaired;
          renames.push([relative(this.output, part.staged), relative(this.output, bucketPath(folder, part, this.#format))]);
        }
        // A split: the part it replaces goes once its halves are in place.
        if (written.length !== 1 || written[0].of !== bucket.of) removes.push(relative(this.output, target));
      }
    }
    const drift = tracker.drift();
    const walks = new Map<string, WalkMark>();
    for (const commit of commits) {
      // Its walks staged records this publish leaves staged: their marks move when those are published.
      if (commit.through !== undefined) continue;
      for (const walk of commit.state.walks) {
        const name = walkName(walk.params);
        // Read afresh: another writer of the same walk may have published since this one opened.
        const next = nextWalkMark(walks.get(name) ?? (await readWalkMarks(this.paths, [walk.params])).get(name), walk);
        if (next !== undefined) walks.set(name, laterMark(walks.get(name), next));
      }
    }
    const members = commits.map(
      (commit, from): GroupMember => ({
        writer: commit.writer,
        ...(commit.runId === undefined ? {} : { completedRun: commit.runId }),
        next: commit.complete ? null : afterPublish(commit.state, rests[from]?.mark),
        ...(rests[from] === undefined ? {} : { rest: rests[from].path }),
        changes: {
          added: added[from],
          updated: updated[from],
          partitions: [...touched[from]].sort(),
          drift,
          writer: commit.writer,
          stoppedAtMark: commit.state.walks.filter((walk) => walk.stoppedAtMark === true).length,
          setAside: setAside[from],
        },
        repaired: from === 0 ? repaired : 0,
      }),
    );
    return { version: 2, renames, removes, schema, walks: [...walks.values()], members, drift };
  }

  /**
   * The records of `commit`'s spool after its `through`, copied into a spool of their own for the
   * writer's staging after the publish (`GroupMember.rest`); written before the publish journal, so
   * a kill before it leaves the staging as it was.
   */
  async #keepRest(commit: Commit): Promise<{ path: string; mark: SpoolMark } | undefined> {
    if (commit.through === undefined) return undefined;
    const own = new DatasetPaths(this.output, this.op.id, commit.writer);
    const path = join(own.staging, 'spool-rest.ndjson');
    const mark = await copySpoolPart(own.spool, commit.through.bytes, commit.state.spool.bytes, path);
    return { path: relative(this.output, path), mark };
  }

  /** Records the drift a frozen schema met; the staging stays for a resume after the schema is settled. */
  async recordFrozenDrift(error: SchemaDriftError): Promise<void> {
    await writeJsonAtomic(this.paths.drift, { operation: this.op.id, at: new Date().toISOString(), frozen: true, drift: error.drift });
  }
}

/** The commits waiting, by path. */
function commitRemedy(path: string): string {
  return `delete ${path}; its writer publishes on resume`;
}

/** The writer whose commit is at `path` (`DatasetPaths.commit`). */
function writerOfCommit(path: string): string {
  return basename(path, '.json');
}

async function commitsWaiting(paths: DatasetPaths): Promise<string[]> {
  const names = await readdir(paths.commits).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith('.json') && !name.endsWith('.done.json')).sort().map((name) => join(paths.commits, name));
}

function checkLayout(layout: Layout): Layout {
  if (!Number.isSafeInteger(layout.buckets) || layout.buckets < 1 || layout.buckets > MAX_BUCKETS) {
    throw new TypeError(`layout.buckets must be an integer from 1 to ${MAX_BUCKETS}, got ${String(layout.buckets)}`);
  }
  if (!(layout.splitBytes >= 1)) throw new TypeError(`layout.splitBytes must be a positive number of bytes, got ${String(layout.splitBytes)}`);
  return layout;
}

/** The staging state once the spool is published: the same walks and totals, an empty spool or the `rest` it kept staged. */
function afterPublish(state: ExportState, rest?: SpoolMark): ExportState {
  const spool = rest ?? freshState(state.op, []).spool;
  return { ...state, walks: state.walks.map((walk) => ({ ...walk })), spool, run: { ...state.run } };
}

/** The rows of a part, none when it does not exist yet. */
async function* readExisting(path: string, format: DatasetFormat): AsyncGenerator<Record<string, unknown>> {
  try {
    yield* readPart(path, format);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatasetError(`cannot read the part file ${path} back to merge into it (${reason}); move it aside, or restore it, then resume`, path, { cause: error });
  }
}
