/**
 * The plan of a publish pass (docs/datasets.md "Crash safety, and writers that publish together"): the
 * staged records of every commit the pass took, sorted by partition in the pass's own folder under
 * `publishing/` while it forms, then merged into the bucket parts they touch (each new part written
 * in that folder, out of readers' sight), the walks' next marks, and what each writer changed, as
 * the journal that `finishPass` (`rewrite.ts`) then carries out. Planning changes nothing
 * readers see: a pass killed while it plans leaves the dataset and every commit as they were.
 */
// On the writers' staging and the pass's scratch folder alone: the dataset's own objects go through its Storage.
import { appendFile, mkdir, stat } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { mapAtOnce } from '../at-once.ts';
import { stringifyExact } from '../exact-json.ts';
import type { SchemaDrift } from '../errors.ts';
import { timeOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import { readStoredPart, type DatasetFormat, type HeldNames, type PartSchema } from './parts.ts';
import { objectPlace } from './objects.ts';
import { rebuildStaging } from './staging-log.ts';
import type { Storage } from './storage/types.ts';
import { heldNames } from './columns.ts';
import type { DatasetSchemaTracker } from './schema.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { DatasetError } from '../errors.ts';
import { fromNdjson, fromNdjsonPrefix } from '../../sinks/from-ndjson.ts';
import { bucketFor, bucketPartName, bucketPath, bucketsIn, FETCHED_AT, keyHash, writeBucket, type Bucket, type Layout } from './buckets.ts';
import { writeKeyIndex } from './key-index.ts';
import { dropKey, keyOfRow, STAND_IN } from './keys.ts';
import { PassKeys, type Moves } from './moves.ts';
import type { Commit, PassPlanning } from './commit.ts';
import { isClockStamp, laterStamp, olderStamp } from './fetch-clock.ts';
import { mergeColumns, schemaTracker } from './nesting.ts';
import { BucketMerge, rowHash, type GroupJournal, type GroupMember } from './rewrite.ts';
import type { RecordedSchema } from './scan.ts';
import { checkPartitionCollision, partitionOf, type DatasetPaths, type Partitioning } from './store.ts';
import { copySpoolPart, fileSize, type SpoolMark } from '../export/durable.ts';
import { freshState, type ExportState } from '../export/journal.ts';
import { laterMark, nextWalkMark, readWalkMarks, type WalkMark } from './marks.ts';

/** What a plan goes by: the dataset as recorded (or, for a new one, as the planning writer asks). */
export interface PlanContext {
  op: OperationSpec;
  paths: DatasetPaths;
  format: DatasetFormat;
  partitioning: Partitioning;
  layout: Layout;
  maxDepth: number | undefined;
  /** A Parquet dataset's layout, as recorded (or, for a new one, as this run asks). */
  parquetLayout: ParquetLayout | undefined;
  /** The dataset's recorded schema, if it has one. */
  recorded: RecordedSchema | undefined;
  /** How the dataset is (or becomes) locked, when not with lock folders. */
  locks: RecordedSchema['locks'];
  /** The pass (`GroupCommit`: one per pass): its new parts are staged under `names.pass(pass)`, its incoming records sorted and its parts encoded in `scratch(pass)`. */
  pass: string;
}

/** A staged record on its way into a part: its key, and which commit of the group it came from. */
interface Incoming {
  row: Record<string, unknown>;
  key: string;
  from: number;
}

/**
 * The group's records, sorted by partition on disk (`<scratch>/incoming/<partition>.incoming`, NDJSON),
 * so a publish holds one partition's incoming records in memory at a time, not the whole group's: a
 * group can then be as large as what waits, and the parts are rewritten once for all of it.
 */
class IncomingByPartition {
  /** Per partition, the commit each of its records (in file order) came from. */
  readonly from = new Map<string, number[]>();
  readonly #pending = new Map<string, string[]>();
  /** Per partition, the bytes this publish wrote to its file. */
  readonly #bytes = new Map<string, number>();
  #pendingChars = 0;

  constructor(readonly folder: string) {}

  async add(partition: string, record: Record<string, unknown>, from: number): Promise<void> {
    let list = this.from.get(partition);
    if (list === undefined) this.from.set(partition, (list = []));
    list.push(from);
    const line = `${stringifyExact(record)!}\n`;
    const pending = this.#pending.get(partition);
    if (pending === undefined) this.#pending.set(partition, [line]);
    else pending.push(line);
    this.#pendingChars += line.length;
    if (this.#pendingChars > FLUSH_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    await mkdir(this.folder, { recursive: true });
    for (const [partition, lines] of this.#pending) {
      const text = lines.join('');
      await appendFile(this.path(partition), text);
      this.#bytes.set(partition, (this.#bytes.get(partition) ?? 0) + Buffer.byteLength(text));
    }
    this.#pending.clear();
    this.#pendingChars = 0;
  }

  path(partition: string): string {
    // Not `.ndjson`: no reader's glob of a local dataset's parts may take it for one.
    return join(this.folder, `${partition}.incoming`);
  }

  /** A partition's incoming records, each with its key and commit; a file that is not as written (another publish touched it) fails the publish, which then leaves every commit waiting. */
  async *records(op: OperationSpec, partition: string): AsyncGenerator<Incoming> {
    const from = this.from.get(partition);
    // A partition that only loses older versions of records that moved: none come into it.
    if (from === undefined) return;
    let index = 0;
    for await (const row of fromNdjson(this.path(partition))) {
      if (index >= from.length) break;
      yield { row, key: keyOfRow(op, row)!, from: from[index++] };
    }
    if (index !== from.length || (await fileSize(this.path(partition))) !== this.#bytes.get(partition)) {
      throw new DatasetError(`${this.path(partition)} does not hold what this publish sorted into it: another publish ran at once (a lease lost); nothing was published, and the next publish takes the commits`, this.folder);
    }
  }
}

/** Incoming lines held in memory before they go to their partitions' files. */
const FLUSH_CHARS = 4 * 1024 * 1024;

/** Per commit of the group: what its records did to the dataset. */
interface Tally {
  added: number[];
  updated: number[];
  touched: Set<string>[];
  setAside: number[];
}

/**
 * A publish pass's plan, in two steps: `add` sorts the staged records of commits into the pass's
 * partition files (while the pass is formed, before it knows which partition locks to take), and
 * `merge`, holding those locks, merges each partition's records into the bucket parts they touch
 * and writes the new parts (staged), giving the journal.
 */
export class PassPlan implements PassPlanning {
  readonly commits: Commit[] = [];
  readonly #tracker: DatasetSchemaTracker;
  readonly #tally: Tally = { added: [], updated: [], touched: [], setAside: [] };
  readonly #rests: (KeptRest | undefined)[] = [];
  readonly #incoming: IncomingByPartition;
  /** The latest stamp of the fetch clock among the pass's records. */
  #fetched: string | undefined;
  readonly #keys = new PassKeys();
  /** The partitions besides its own whose locks the pass took for older versions of its keys (`movedFrom`). */
  #movedFrom = new Set<string>();

  constructor(readonly context: PlanContext) {
    this.#tracker = schemaTracker(context.recorded?.columns ?? [], context.parquetLayout);
    this.#incoming = new IncomingByPartition(join(context.paths.scratch(context.pass), 'incoming'));
  }

  /** Sorts the records of `commits` into the pass's partition files (out of readers' sight). */
  async add(commits: readonly Commit[]): Promise<void> {
    const first = this.commits.length;
    this.commits.push(...commits);
    this.#tally.added.push(...commits.map(() => 0));
    this.#tally.updated.push(...commits.map(() => 0));
    this.#tally.touched.push(...commits.map(() => new Set<string>()));
    this.#tally.setAside.push(...commits.map(() => 0));
    const spools = await Promise.all(commits.map((commit) => spoolOf(this.context, commit)));
    this.#rests.push(...(await Promise.all(commits.map((commit, index) => keepRest(this.context.paths, commit, spools[index])))));
    this.#fetched = laterStamp(this.#fetched, await readIncoming(this.context, commits, spools, first, this.#tracker, this.#tally, this.#incoming, this.#keys));
    await this.#incoming.flush();
  }

  /** The partitions the pass's records fall in, in order. */
  partitions(): string[] {
    return [...this.#incoming.from.keys()].sort();
  }

  /**
   * The partitions besides the pass's own whose parts' key indexes name one of its keys: older
   * versions of records that moved, which the pass removes. Read from the indexes alone; the pass
   * takes their locks with its own partitions'.
   */
  async movedFrom(working: readonly string[]): Promise<string[]> {
    const own = new Set(this.partitions());
    // The passes at work too: one placing a key of this pass in another partition publishes first (this one waits for that partition), and this one then finds its version in the index.
    const roots = [this.context.paths.names.keyIndexes, ...working.map((pass) => this.context.paths.names.passKeys(pass))];
    for (const root of roots) for (const partition of (await this.#keys.holding(this.context, root)).keys()) if (!own.has(partition)) this.#movedFrom.add(partition);
    return [...this.#movedFrom].sort();
  }

  /** Stores where this pass places its keys (under `root`, `DatasetNames.passKeys`), for passes formed while it publishes. */
  writeKeys(root: string): Promise<void> {
    return this.#keys.writeTo(this.context.paths, root, this.context.paths.scratch(this.context.pass));
  }

  /** Merges every partition's records into its bucket parts (staged): the pass's journal. The caller holds the locks of the partitions and of `movedFrom`. */
  async merge(): Promise<GroupJournal> {
    const { context, commits } = this;
    const columns = mergeColumns(context.recorded?.columns ?? [], this.#tracker.columns(), context.parquetLayout);
    checkPartitionCollision(context.paths, context.partitioning, columns);
    const schema: RecordedSchema = {
      version: 1,
      operation: context.op.id,
      format: context.format,
      columns,
      partitioning: context.partitioning,
      layout: context.layout,
      keys: 'indexed',
      ...(context.parquetLayout === undefined ? {} : { parquetLayout: context.parquetLayout }),
      ...(context.locks === undefined ? {} : { locks: context.locks }),
    };
    // Read again holding the locks: a pass that published since the lookup may have moved a key.
    const held = new Set([...this.partitions(), ...this.#movedFrom]);
    const moves = await this.#keys.moves(context, held, (partition) => this.#incoming.records(context.op, partition));
    // Partitions that gain records first, those that only lose older versions after: a reader may see a moved record twice for that moment, never miss it.
    const losing = [...moves.removed.keys()].filter((partition) => !this.#incoming.from.has(partition)).sort();
    const partitions = [...this.partitions(), ...losing];
    const journal: GroupJournal = { version: 2, renames: [], removes: [], schema, walks: await nextMarks(context.paths, commits), partitions, members: [], drift: this.#tracker.drift(), fetched: this.#fetched };
    // On a bucket, a few partitions at once: one's parts are read and stored (round trips) while another's are encoded.
    const atOnce = context.paths.storage.folder !== undefined ? 1 : PARTITIONS_AT_ONCE;
    const placed = await mapAtOnce(partitions, atOnce, async (partition) => {
      const placing: Placing = { renames: [], removes: [] };
      const repaired = await mergePartition(context, partition, this.#incoming.records(context.op, partition), schema, placing, this.#tally, moves);
      return { ...placing, repaired };
    });
    let repaired = 0;
    for (const [index, each] of placed.entries()) {
      if (index === partitions.length - losing.length) journal.placedAfter = journal.renames.length;
      journal.renames.push(...each.renames);
      journal.removes.push(...each.removes);
      repaired += each.repaired;
    }
    journal.placedAfter ??= journal.renames.length;
    journal.members = commits.map((commit, from) => memberOf(commit, from, this.#tally, journal.drift, from === 0 ? repaired : 0, this.#rests[from]));
    return journal;
  }
}

/** Per partition, the records of every commit's spool (`from` the index of the first in the pass); a record without a key is counted, not written (it would be appended again on every run). */
async function readIncoming(
  context: PlanContext,
  commits: readonly Commit[],
  spools: readonly string[],
  first: number,
  tracker: DatasetSchemaTracker,
  tally: Tally,
  incoming: IncomingByPartition,
  keys: PassKeys,
): Promise<string | undefined> {
  let latest: string | undefined;
  for (const [index, commit] of commits.entries()) {
    const from = first + index;
    const bytes = commit.through?.bytes ?? commit.state.spool.bytes;
    if (bytes === 0) continue;
    const spool = spools[index];
    // Records an older version staged carry no fetch time: they get the time their spool was begun
    // (last written, where the file system keeps no birth time), old-style: below every stamp of this version.
    const begun = await stat(spool);
    const older = olderStamp(begun.birthtimeMs > 0 ? begun.birthtimeMs : begun.mtimeMs);
    let chunk: Record<string, unknown>[] = [];
    for await (const staged of fromNdjsonPrefix(spool, bytes)) {
      const key = keyOfRow(context.op, staged);
      if (key === undefined) {
        tally.setAside[from]++;
        continue;
      }
      const record = typeof staged[FETCHED_AT] === 'string' ? staged : { ...staged, [FETCHED_AT]: older };
      if (isClockStamp(record[FETCHED_AT])) latest = laterStamp(latest, record[FETCHED_AT]);
      const partition = partitionOf(timeOf(context.op, record), context.partitioning.by);
      // The stand-in key a record with a key of its own would have had: a version kept under it is this record's.
      const standIn = record[STAND_IN];
      delete record[STAND_IN];
      keys.note(key, partition, typeof standIn === 'string' ? standIn : undefined);
      await incoming.add(partition, record, from);
      tally.touched[from].add(partition);
      chunk.push(record);
      if (chunk.length >= 1_000) {
        tracker.observe(chunk, context.maxDepth);
        chunk = [];
      }
    }
    tracker.observe(chunk, context.maxDepth);
  }
  return latest;
}

/**
 * Merges a partition's incoming records into the bucket parts they fall in, less those a later
 * version elsewhere outranks, and removes the older versions of records that moved away; only those
 * parts are rewritten, each with its key index. Returns the strings repaired.
 */
/** What merging a partition stages: the renames and removals its parts take (`GroupJournal`). */
type Placing = Pick<GroupJournal, 'renames' | 'removes'>;

/** Partitions a pass into a bucket merges at once (each holds its merge's rows in memory meanwhile; on a local folder, one). */
const PARTITIONS_AT_ONCE = 4;

async function mergePartition(context: PlanContext, partition: string, rows: AsyncIterable<Incoming>, schema: PartSchema, journal: Placing, tally: Tally, moves: Moves): Promise<number> {
  const { paths, format, layout, op } = context;
  const { storage, names } = paths;
  const folder = names.partition(partition, context.partitioning.column);
  const parts = await bucketsIn(storage, folder, format);
  const modified = new Map(parts.map((part) => [`${part.bucket}-${part.of}`, part.modifiedMs]));
  const scratch = paths.scratch(context.pass);
  const byBucket = new Map<string, { bucket: Bucket; rows: Incoming[] }>();
  const groupOf = (key: string) => {
    const bucket = bucketFor(parts, keyHash(key), layout.buckets);
    const name = `${bucket.bucket}-${bucket.of}`;
    const group = byBucket.get(name) ?? { bucket, rows: [] };
    byBucket.set(name, group);
    return group;
  };
  for await (const entry of rows) if (!moves.dropped.has(dropKey(partition, entry.key))) groupOf(entry.key).rows.push(entry);
  const removed = moves.removed.get(partition) ?? new Set<string>();
  for (const key of removed) groupOf(key);
  let repaired = 0;
  for (const { bucket, rows: bucketRows } of byBucket.values()) {
    const target = bucketPath(folder, bucket, format);
    const merge = new BucketMerge(op);
    // A row an older version published without a fetch time gets one, below every stamp of this
    // version: the time its part was last written, as the store's listing gives it.
    const older = olderStamp(modified.get(`${bucket.bucket}-${bucket.of}`) ?? 0);
    const existing = modified.has(`${bucket.bucket}-${bucket.of}`) ? readExisting(paths.storage, target, format, heldNames(context.partitioning)) : [];
    for await (const row of existing) {
      const key = keyOfRow(op, row);
      if (key !== undefined && removed.has(key)) continue;
      merge.add(typeof row[FETCHED_AT] === 'string' ? row : { ...row, [FETCHED_AT]: older }, key);
    }
    countChanges(merge, bucketRows, tally, moves.moved);
    const kept = merge.rows();
    const index = (each: Bucket) => names.keyIndex(partition, bucketPartName(each, format));
    if (kept.length === 0) {
      // Its last record moved away: the part goes (a part of no rows would be read for nothing).
      journal.removes.push(target, index(bucket));
      continue;
    }
    const stagedPath = (each: Bucket) => join(scratch, `${partition}-b${each.bucket}-of-${each.of}.staged`);
    const written = await writeBucket(kept, bucket, (row) => rowHash(op, row), stagedPath, schema, layout.splitBytes);
    for (const part of written) {
      // Old rows were repaired when first written: the count is this publish's strings.
      repaired += part.repaired;
      const keys = kept.flatMap((row) => {
        const key = keyOfRow(op, row);
        return key !== undefined && (written.length === 1 || keyHash(key) % part.of === part.bucket) ? [key] : [];
      });
      // Staged in the pass's folder, under the names it had on disk before the storage seam.
      const staged = `${names.pass(context.pass)}${basename(part.staged)}`;
      await storage.upload(staged, part.staged);
      await writeKeyIndex(storage, `${staged}.keys`, keys, scratch);
      journal.renames.push([staged, bucketPath(folder, part, format)], [`${staged}.keys`, index(part)]);
    }
    // A split: the part it replaces goes once its halves are in place.
    if (written.length !== 1 || written[0].of !== bucket.of) journal.removes.push(target, index(bucket));
  }
  return repaired;
}

/** Adds a bucket's incoming rows to its merge, counting per commit each key once: new to the dataset, or a later fetch than the one held (here or, `moved`, elsewhere). */
function countChanges(merge: BucketMerge, rows: readonly Incoming[], tally: Tally, moved: ReadonlySet<string>): void {
  const counted = new Map<number, Set<string>>();
  for (const { row, key, from } of rows) {
    const held = merge.has(key) || moved.has(key);
    const kept = merge.add(row, key);
    let seen = counted.get(from);
    if (seen === undefined) counted.set(from, (seen = new Set()));
    if (seen.has(key)) continue;
    seen.add(key);
    if (!held) tally.added[from]++;
    else if (kept) tally.updated[from]++;
  }
}

/** The walks' marks after the group: each walk's state read afresh (another writer of the same walk may have published since this one opened). */
async function nextMarks(paths: DatasetPaths, commits: readonly Commit[]): Promise<WalkMark[]> {
  const walks = new Map<string, WalkMark>();
  for (const commit of commits) {
    // Its walks staged records this publish leaves staged: their marks move when those are published.
    if (commit.through !== undefined) continue;
    for (const walk of commit.state.walks) {
      const name = walkName(walk.params);
      const next = nextWalkMark(walks.get(name) ?? (await readWalkMarks(paths, [walk.params])).get(name), walk);
      if (next !== undefined) walks.set(name, laterMark(walks.get(name), next));
    }
  }
  return [...walks.values()];
}

function memberOf(commit: Commit, from: number, tally: Tally, drift: SchemaDrift, repaired: number, rest: KeptRest | undefined): GroupMember {
  return {
    writer: commit.writer,
    ...(commit.id === undefined ? {} : { commit: commit.id }),
    // The staging's totals count every page of the run, whichever process staged it.
    ...(commit.runId === undefined ? {} : { completedRun: commit.runId, completedTotals: { records: commit.state.records, pages: commit.state.pages } }),
    next: commit.complete && commit.handOff === true ? null : afterPublish(commit.state, rest?.mark),
    ...(rest === undefined ? {} : { rest: rest.path }),
    changes: {
      added: tally.added[from],
      updated: tally.updated[from],
      partitions: [...tally.touched[from]].sort(),
      drift,
      writer: commit.writer,
      stoppedAtMark: commit.state.walks.filter((walk) => walk.stoppedAtMark === true).length,
      setAside: tally.setAside[from],
    },
    repaired,
  };
}

/**
 * The staging state once the spool is published: the same walks, totals and run (its caps go on
 * counting what it spent), an empty spool or the `rest` it kept staged. A complete run's is its
 * finished state, kept until its writer reads its receipt: a resume after a kill finishes that run.
 */
function afterPublish(state: ExportState, rest?: SpoolMark): ExportState {
  const spool = rest ?? freshState(state.op, []).spool;
  return { ...state, walks: state.walks.map((walk) => ({ ...walk })), spool, run: { ...state.run } };
}

/**
 * Where the pass reads `commit`'s spool: the writer's own file on a local dataset, and this writer's
 * own on a store; another writer's on a store is rebuilt from its staging log into the pass's
 * scratch (its commit was left once its staging was on the store: `DatasetDestination.publish`).
 */
async function spoolOf(context: PlanContext, commit: Commit): Promise<string> {
  const { paths } = context;
  const own = paths.ofWriter(commit.writer);
  if (commit.writer === paths.writer || paths.storage.folder !== undefined) return own.spool;
  const folder = join(paths.scratch(context.pass), `staging-${commit.writer}`);
  await rebuildStaging(paths.storage, own.names.stagingLog, folder, ['spool.ndjson']);
  return join(folder, 'spool.ndjson');
}

/** A commit's records after its `through`, copied into a spool of their own: the writer's spool once the publish is finished. */
interface KeptRest {
  /** Relative to the dataset's folder, as the journal holds paths. */
  path: string;
  mark: SpoolMark;
}

/**
 * The records of `commit`'s spool after its `through`, copied into the writer's staging
 * (`GroupMember.rest`); written before the publish journal, so a kill before it leaves the staging as it was.
 */
async function keepRest(paths: DatasetPaths, commit: Commit, spool: string): Promise<KeptRest | undefined> {
  if (commit.through === undefined) return undefined;
  const own = paths.ofWriter(commit.writer);
  const path = join(own.staging, 'spool-rest.ndjson');
  await mkdir(own.staging, { recursive: true });
  const mark = await copySpoolPart(spool, commit.through.bytes, commit.state.spool.bytes, path);
  return { path: relative(paths.dir, path), mark };
}

/** The rows of a part, none when it is gone (listed, then removed: a replay's). */
async function* readExisting(storage: Storage, name: string, format: DatasetFormat, held: HeldNames): AsyncGenerator<Record<string, unknown>> {
  try {
    yield* readStoredPart(storage, name, format, held);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    const place = objectPlace(storage, name);
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatasetError(`cannot read the part file ${place} back to merge into it (${reason}); move it aside, or restore it, then resume`, place, { cause: error });
  }
}
