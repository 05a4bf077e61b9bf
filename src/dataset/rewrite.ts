/**
 * What changes a dataset's part files, besides staging: finishing a publish from its journal (any
 * writer finishes the one a kill left, whoever wrote it), merging rows into a bucket part by the
 * fetch-time rule, and rewriting a whole operation into bucket parts, which is both `dataset
 * compact` and the migration of a dataset of per-writer parts (`part-<writer>`, `part-walk-…`,
 * `part-shard-K-of-N`) to buckets on its first open by this version.
 *
 * A publish replaces bucket parts in place, one move each (`placement.ts`: a rename on a local
 * dataset), and a record lives in one part: a reader globbing the dataset sees every record exactly
 * once at every moment. A split, a compaction or a migration replaces several files with others:
 * moves first, then removals, so
 * for that moment a reader may see a row in an old part and a new one, never miss one (docs/datasets.md).
 */
import { randomUUID } from 'node:crypto';
// On the writers' staging (spool, checkpoint) and scratch folders alone: the dataset's own objects go through its Storage.
import { readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { DatasetError, type SchemaDrift } from '../errors.ts';
import { timeOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import { readStoredPart } from './parts.ts';
import { placeStaged } from './placement.ts';
import { heldNames } from './columns.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import { bucketFor, bucketPartName, bucketPath, DEFAULT_LAYOUT, FETCHED_AT, fetchedLater, keyHash, writeBucket, type Bucket, type Layout } from './buckets.ts';
import { outrankedVersions, withFetchedAt } from './duplicates.ts';
import { writeKeyIndex } from './key-index.ts';
import { dropKey, keyOfRow } from './keys.ts';
import { scanParts, type RecordedSchema, type ScannedOperation, type ScannedPart } from './scan.ts';
import { dropPass, type DatasetPaths, partitionOf, passFolders, UNDATED, UNPARTITIONED, type PartitionBy } from './store.ts';
import { dropCompactionStaging, finishCompaction, writeCompactionJournal, type CompactionJournal } from './compaction-journal.ts';
import { readClockFile, readGroupJournal, readMarksFile, readPublishJournal, readSchemaFile, readWalkMarkFile } from './state.ts';
import type { DatasetLocks } from './locks.ts';
import { compareFetchTimes } from './fetch-clock.ts';
import { convertedSchema, mergeColumns, recordedLayout } from './nesting.ts';
import { objectPlace, objectsIn, readObject, writeObject } from './objects.ts';
import { stateJournalText, writeState, type ExportState } from '../export/journal.ts';
import { removeStagingLog, replaceStaging } from './staging-log.ts';
import { lacksTableSchema, writeRecordedSchema } from './table-schema.ts';
import { laterMark, type MarksFile, type RunTotals, type WalkMark } from './marks.ts';
import type { DatasetChanges } from '../export/types.ts';

/** One writer of a publish: what it changed, and where its staging goes afterwards. */
export interface GroupMember {
  writer: string;
  /** The id of the commit the pass took (`Commit.id`): a replay finishes the member only while that commit waits. */
  commit?: string;
  /** The run it published complete (`ExportOptions.runId`). */
  completedRun?: string;
  /** That run's records and pages over every attempt (its staging's totals). */
  completedTotals?: RunTotals;
  /**
   * Its staging after the publish: the run's state with the spool published (its caps' counts, its
   * walks' checkpoints; for a complete run, finished), or null when its writer handed the commit off
   * and ended its run (the staging goes).
   */
  next: ExportState | null;
  /**
   * The spool of the records it keeps staged past the prefix it published (a lowered limit), relative
   * to the dataset directory: it replaces the spool. Without it the spool goes.
   */
  rest?: string;
  changes: DatasetChanges;
  repaired: number;
}

/** A publish pass's journal (`DatasetNames.passJournal`), written before its first rename. */
export interface GroupJournal {
  version: 2;
  /** Staged part → its place, relative to the dataset directory. */
  renames: [string, string][];
  /** Parts a split replaced, relative to the dataset directory. */
  removes: string[];
  /**
   * Where the renames of partitions that only lose records that moved begin: they are placed after
   * the others (`placeStaged`). Absent in journals of versions that placed every rename in turn.
   */
  placedAfter?: number;
  schema: RecordedSchema;
  walks: WalkMark[];
  /** The partitions whose parts it replaces: whoever finishes it holds their locks. */
  partitions?: string[];
  members: GroupMember[];
  drift: SchemaDrift;
  /** The latest fetch stamp among its records, for `paths.clock` (`fetch-clock.ts`). */
  fetched?: string;
}

/** What to do with a pass's journal that is damaged. */
export function passJournalRemedy(paths: DatasetPaths, pass: string): string {
  return `delete ${paths.pass(pass)}: the parts are then as before that publish, whose writers publish again on resume`;
}

/** What to do with the journal of an older version's publish that is damaged. */
export function groupJournalRemedy(paths: DatasetPaths): string {
  return `delete ${objectPlace(paths.storage, paths.names.publishJournal)} and ${objectPlace(paths.storage, paths.names.publishing.slice(0, -1))}: the parts are then as before that publish, whose writers publish again on resume`;
}

/**
 * Finishes the pass `pass` from its journal (read from its folder when not given), then removes
 * the folder; a pass without a journal (killed before it) changed nothing, and only its folder
 * goes. The caller holds the locks of the journal's partitions and the pass's. Returns whether it had a journal.
 */
export async function finishPass(paths: DatasetPaths, pass: string, locks: DatasetLocks, journal?: GroupJournal): Promise<boolean> {
  journal ??= await readGroupJournal(paths, paths.names.passJournal(pass), passJournalRemedy(paths, pass));
  if (journal !== undefined) await carryOut(paths, journal, locks);
  // The journal first: a pass folder without one is dropped whole by whoever finds it.
  await paths.storage.remove(paths.names.passJournal(pass));
  await dropPass(paths, pass);
  return journal !== undefined;
}

/**
 * Finishes the publish an older version's kill left (`names.publishJournal`, one for the whole
 * operation), if there is one, and drops the folders its passes staged in. The caller holds the
 * publish lock and no pass of this version is live. Returns whether there was one.
 */
export async function finishLegacyGroup(paths: DatasetPaths, locks: DatasetLocks): Promise<boolean> {
  const journal = await readGroupJournal(paths, paths.names.publishJournal, groupJournalRemedy(paths));
  if (journal === undefined) return false;
  await carryOut(paths, journal, locks);
  for (const pass of await passFolders(paths)) {
    if (!(await paths.storage.exists(paths.names.passClaim(pass)))) await dropPass(paths, pass);
  }
  await paths.storage.remove(paths.names.publishJournal);
  return true;
}

/**
 * Carries out a publish journal: renames, removals, the sign of a widening, the schema merged into the one recorded (under
 * the meta lock, when the pass's records changed it), the walk states (the pass holds its walks'
 * locks), then each member's files. Every step is idempotent, so a journal is replayed from the
 * start by whoever finds it.
 */
async function carryOut(paths: DatasetPaths, journal: GroupJournal, locks: DatasetLocks): Promise<void> {
  await placeStaged(paths.storage, journal.renames, journal.removes, journal.placedAfter);
  const recordNow = async (recorded: RecordedSchema | undefined) => schemaChanges(recorded, journal.schema) || (await lacksTableSchema(paths, recorded));
  if (await recordNow(await readSchemaFile(paths))) {
    await locks.run(paths.metaLock, async () => {
      const recorded = await readSchemaFile(paths);
      if (!(await recordNow(recorded))) return;
      // Before the schema and any receipt, under the lock the widening writer removes it under (`widen.ts`).
      if ((journal.drift.widened ?? []).length > 0) await writeObject(paths.storage, paths.names.widening, { id: randomUUID() });
      await writeRecordedSchema(paths, mergedSchema(recorded, journal.schema));
    });
  }
  if (journal.fetched !== undefined) await recordClock(paths, journal.fetched, locks);
  // The objects of walks are each their own: written at once, their syncs overlap.
  await Promise.all(
    journal.walks.map(async (walk) => {
      const name = walkName(walk.params);
      await writeObject(paths.storage, paths.names.walkMark(name), laterMark(await readWalkMarkFile(paths, name), walk));
    }),
  );
  const at = new Date().toISOString();
  await Promise.all(journal.members.map((member) => finishMember(paths, member, at)));
}

/** The schema recorded once a pass's is merged in: another pass may have recorded columns since this one read it, so it is their union. */
function mergedSchema(recorded: RecordedSchema | undefined, pass: RecordedSchema): RecordedSchema {
  return { ...pass, columns: mergeColumns(recorded?.columns ?? [], pass.columns, recordedLayout(pass)), ...(recorded?.locks === undefined ? {} : { locks: recorded.locks }) };
}

/** Whether merging a pass's schema changes the one recorded (most passes add no column: they need not take the meta lock). */
function schemaChanges(recorded: RecordedSchema | undefined, pass: RecordedSchema): boolean {
  return recorded === undefined || JSON.stringify(mergedSchema(recorded, pass)) !== JSON.stringify(recorded);
}

/**
 * A member's files after the publish: its run, drift and staging, then its receipt, and last its
 * commit goes (the sign it was taken). Only while the commit the pass took waits: a replay after
 * a kill finds it gone when it was finished, and its writer may have staged again since.
 */
async function finishMember(paths: DatasetPaths, member: GroupMember, at: string): Promise<void> {
  const waiting = (await readObject(paths.storage, paths.names.commit(member.writer), `delete it; its writer publishes on resume`)) as { id?: unknown } | undefined;
  if (waiting === undefined || waiting.id !== member.commit) return;
  const own = paths.ofWriter(member.writer);
  const completed = member.completedRun === undefined ? await readMarksFile(own) : member;
  // A partial publish keeps the run the writer last completed.
  const state: MarksFile = {
    version: 1,
    operation: paths.operation,
    walks: {},
    ...(completed?.completedRun === undefined ? {} : { completedRun: completed.completedRun }),
    ...(completed?.completedTotals === undefined ? {} : { completedTotals: completed.completedTotals }),
  };
  await Promise.all([
    writeObject(paths.storage, own.names.state, state),
    writeObject(paths.storage, own.names.drift, { operation: paths.operation, at, frozen: false, drift: member.changes.drift }),
  ]);
  if (paths.storage.folder === undefined) {
    await finishStoreStaging(own, member, member.rest === undefined ? undefined : join(paths.dir, member.rest));
  } else if (member.next === null) {
    await rm(own.staging, { recursive: true, force: true });
  } else {
    // The walks go on from their checkpoints; the records are in the parts now, so the spool starts
    // empty, or holds only those the publish left staged.
    await writeState(own.checkpoint, member.next);
    if (member.rest === undefined) await rm(own.spool, { force: true });
    else await renameDone(join(paths.dir, member.rest), own.spool);
  }
  await writeObject(paths.storage, paths.names.receipt(member.writer), { changes: member.changes, repaired: member.repaired });
  await paths.storage.remove(paths.names.commit(member.writer));
}

/**
 * On a store, a member's staging is its staging log (`staging-log.ts`), which the pass replaces as
 * the local files are replaced on a local dataset: the journal after the publish and the spool it
 * kept, in one object its writer takes when it reads its receipt (`StagingLog.catchUp`), or the log
 * removed. Replayed after a kill, the same files are stored again.
 */
async function finishStoreStaging(own: DatasetPaths, member: GroupMember, rest: string | undefined): Promise<void> {
  if (member.next === null) {
    await removeStagingLog(own.storage, own.names.stagingLog);
    await rm(own.staging, { recursive: true, force: true });
    return;
  }
  // The rest stays where the pass wrote it: a replay after a kill stores it again.
  const spool = rest === undefined ? null : await readFile(rest).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
  await replaceStaging(own.storage, own.names.stagingLog, {
    'checkpoint.json': new TextEncoder().encode(stateJournalText(member.next)),
    'spool.ndjson': spool,
    'spool-rest.ndjson': null,
  });
}

/** Renames `from` to `to`; done already when `from` is gone (a replay of the journal after a kill). */
async function renameDone(from: string, to: string): Promise<void> {
  await rename(from, to).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** Finishes every writer's own publish a kill left (versions before group commit); the caller holds the publish lock. */
export async function finishLegacyPublishes(paths: DatasetPaths): Promise<void> {
  const names = await readdir(paths.meta).catch(() => [] as string[]);
  for (const name of names.filter((each) => each.startsWith('staging-')).sort()) {
    const own = paths.ofWriter(name.slice('staging-'.length));
    const journal = await readPublishJournal(own, `restart the export (--restart) of writer ${own.writer} to discard ${own.staging}; the published dataset stays`);
    if (journal === undefined) continue;
    await placeStaged(paths.storage, journal.renames.map(([from, to]) => [relative(paths.dir, from), relative(paths.dir, to)]), []);
    await writeRecordedSchema(paths, journal.schema);
    await writeObject(paths.storage, own.names.state, journal.marks);
    await writeObject(paths.storage, own.names.drift, { operation: paths.operation, at: new Date().toISOString(), frozen: false, drift: journal.drift });
    if (journal.next === null) {
      await rm(own.staging, { recursive: true, force: true });
      continue;
    }
    await writeState(own.checkpoint, journal.next);
    await rm(own.spool, { force: true });
    await rm(join(own.staging, 'parts'), { recursive: true, force: true });
    await paths.storage.remove(own.names.journal);
  }
}

/** Records `fetched` as the dataset's latest fetch stamp, unless a later one is (under the meta lock: passes finish at once). */
async function recordClock(paths: DatasetPaths, fetched: string, locks: DatasetLocks): Promise<void> {
  const later = async () => {
    const recorded = await readClockFile(paths);
    return recorded === undefined || compareFetchTimes(fetched, recorded) > 0;
  };
  if (!(await later())) return;
  await locks.run(paths.metaLock, async () => {
    if (await later()) await writeObject(paths.storage, paths.names.clock, { version: 1, operation: paths.operation, latest: fetched });
  });
}

/** Rows of one bucket, one a key: the version fetched last (`fetchedLater`); rows without a key are kept as they are. */
export class BucketMerge {
  readonly #byKey = new Map<string, Record<string, unknown>>();
  readonly #keyless: Record<string, unknown>[] = [];

  constructor(readonly op: OperationSpec) {}

  has(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** Takes in a row; returns whether it is the version kept (so far). */
  add(row: Record<string, unknown>, key = keyOfRow(this.op, row)): boolean {
    if (key === undefined) {
      this.#keyless.push(row);
      return true;
    }
    const held = this.#byKey.get(key);
    if (held !== undefined && !fetchedLater(row, held)) return false;
    this.#byKey.set(key, row);
    return true;
  }

  rows(): Record<string, unknown>[] {
    return [...this.#byKey.values(), ...this.#keyless];
  }
}

/** Where a row goes among buckets: its key's hash (a row without a key, by its JSON). */
export function rowHash(op: OperationSpec, row: Record<string, unknown>): number {
  return keyHash(keyOfRow(op, row) ?? JSON.stringify(row, (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)));
}

export interface Rewritten {
  parts: { before: number; after: number };
  bytes: { before: number; after: number };
  rows: number;
}

/**
 * Rewrites every part of an operation into bucket parts partitioned `by` (as recorded, or coarser):
 * a key found in several parts (several writers' parts, before buckets) keeps the version fetched
 * last, a row without `_fetched_at` counting as fetched when its part was last written. The
 * caller holds the publish lock and has finished any publish. Old marks of writers become walk
 * state files. `finish: false` stops after the journal (for tests of recovery). `parquetLayout`, when
 * another than the recorded one, converts the parts to it (`nesting.ts`). `only`, a partition
 * of the recorded partitioning, rewrites that partition's parts alone (the widening, `widen.ts`).
 */
export async function rewriteIntoBuckets(spec: OperationSpec, operation: ScannedOperation, by: PartitionBy, finish: boolean, parquetLayout?: ParquetLayout, only?: string): Promise<Rewritten> {
  const { paths } = operation;
  const dir = paths.dir;
  const from = operation.partitioning;
  const groups = inPartition(groupsOf(await scanParts(dir, operation, only), by), only);
  const parts = [...groups.values()].flat();
  const converting = parquetLayout !== undefined && parquetLayout !== recordedLayout(operation.schema!);
  const schema = converting ? await convertedSchema(paths.storage, operation.schema!, parts, parquetLayout) : operation.schema!;
  const layout: Layout = schema.layout ?? DEFAULT_LAYOUT;
  const bytes = parts.reduce((sum, part) => sum + part.bytes, 0);
  const columns = mergeColumns(schema.columns, [{ name: FETCHED_AT, kind: 'string' }], recordedLayout(schema));
  const rewritten: RecordedSchema = { ...schema, columns, partitioning: { by, column: from.column }, layout, keys: 'indexed', shards: undefined };
  const journal: CompactionJournal = {
    version: 1,
    operation: operation.operation,
    renames: [],
    removes: [],
    schema: rewritten,
    ...(await walksOfWriters(paths)),
  };
  const staging = paths.names.compaction;
  await dropCompactionStaging(paths);
  // Parts are encoded here, then go to the store staged under `staging`.
  const scratch = paths.scratch(`compact-${randomUUID()}`);
  const targets = new Set<string>();
  // A key kept in several partitions, or under its stand-in beside its own, keeps its later fetch alone.
  const held = heldNames(from);
  const outranked = await outrankedVersions(spec, paths, operation.format, held, [...groups].flatMap(([partition, group]) => group.map((part) => ({ part, partition }))));
  let rows = 0;
  try {
    for (const [partition, group] of groups) {
      const merge = new BucketMerge(spec);
      for (const part of group) {
        for await (const record of readStoredPart(paths.storage, part.name, operation.format, held)) {
          // A row goes where a later publish looks for it: the partition of its own time.
          if (partitionOf(timeOf(spec, record), by) !== partition) {
            throw new DatasetError(`${part.path} holds rows whose time is not of its partition; a rewrite would move them where no run merges into them`, dir);
          }
          const key = keyOfRow(spec, record);
          if (key === undefined || !outranked.has(dropKey(partition, key))) merge.add(withFetchedAt(record, part), key);
        }
      }
      const folder = paths.names.partition(partition, from.column);
      const buckets = new Map<string, [Bucket, Record<string, unknown>[]]>();
      for (const row of merge.rows()) {
        const bucket = bucketFor([], rowHash(spec, row), layout.buckets);
        const name = `${bucket.bucket}-${bucket.of}`;
        const entry = buckets.get(name) ?? [bucket, []];
        entry[1].push(row);
        buckets.set(name, entry);
      }
      for (const [bucket, bucketRows] of buckets.values()) {
        const stagedPath = (each: Bucket) => join(scratch, `${partition}-b${each.bucket}-of-${each.of}.staged`);
        const all = await writeBucket(bucketRows, bucket, (row) => rowHash(spec, row), stagedPath, rewritten, layout.splitBytes);
        for (const written of all) {
          const target = bucketPath(folder, written, operation.format);
          const index = paths.names.keyIndex(partition, bucketPartName(written, operation.format));
          const keys = bucketRows.flatMap((row) => {
            const key = keyOfRow(spec, row);
            return key !== undefined && (all.length === 1 || keyHash(key) % written.of === written.bucket) ? [key] : [];
          });
          const staged = `${staging}${basename(written.staged)}`;
          await paths.storage.upload(staged, written.staged);
          await writeKeyIndex(paths.storage, `${staged}.keys`, keys, scratch);
          journal.renames.push([staged, target], [`${staged}.keys`, index]);
          targets.add(target);
          targets.add(index);
        }
        rows += bucketRows.length;
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  for (const part of parts) if (!targets.has(part.name)) journal.removes.push(part.name);
  for (const index of await keyIndexFiles(paths, only)) if (!targets.has(index)) journal.removes.push(index);
  await writeCompactionJournal(paths, journal);
  if (finish) await finishCompaction(paths);
  const after = [...inPartition(groupsOf(await scanParts(dir, { ...operation, partitioning: { by, column: from.column } }, only), by), only).values()].flat();
  return {
    parts: { before: parts.length, after: finish ? after.length : journal.renames.length },
    bytes: { before: bytes, after: after.reduce((sum, part) => sum + part.bytes, 0) },
    rows,
  };
}

/** The key indexes of an operation's parts (of partition `only`, when given), by name: one listing. */
async function keyIndexFiles(paths: DatasetPaths, only?: string): Promise<string[]> {
  const prefix = only === undefined ? paths.names.keyIndexes : `${paths.names.keyIndexes}${only}/`;
  const names: string[] = [];
  for await (const { name } of paths.storage.list(prefix)) names.push(name);
  return names;
}

/** The marks writers kept before walks had their own files, as walk states (the latest mark of a walk), and the writers' files without them. */
async function walksOfWriters(paths: DatasetPaths): Promise<Pick<CompactionJournal, 'walks' | 'writers'>> {
  const states = paths.names.states;
  const names = await objectsIn(paths.storage, states, (rest) => /^.+\.json$/.test(rest));
  const walks = new Map<string, WalkMark>();
  const writers: Record<string, MarksFile> = {};
  for (const name of names) {
    const writer = name.slice(states.length, -'.json'.length);
    const file = await readMarksFile(paths.ofWriter(writer));
    if (file === undefined || Object.keys(file.walks ?? {}).length === 0) continue;
    for (const [walk, { params, mark }] of Object.entries(file.walks)) {
      walks.set(walk, laterMark(walks.get(walk), { version: 1, params, mark, markTime: new Date(mark).toISOString(), near: [] }));
    }
    writers[writer] = { ...file, walks: {} };
  }
  for (const [walk, mark] of walks) {
    const own = await readWalkMarkFile(paths, walk);
    if (own !== undefined) walks.set(walk, laterMark(own, mark));
  }
  return { walks: [...walks.values()], writers };
}

const PREFIX: Record<Exclude<PartitionBy, 'none'>, number> = { day: 10, month: 7, year: 4 };

/**
 * Parts grouped by the (coarser) partition their folders fall in. A folder that names no date
 * (Hive's default, `undated` from before it, or `+057425-04` from before out-of-range years were
 * undated) holds undated rows.
 */
export function groupsOf(parts: readonly ScannedPart[], by: PartitionBy): Map<string, ScannedPart[]> {
  const groups = new Map<string, ScannedPart[]>();
  for (const part of parts) {
    const dated = /^\d{4}(?:-\d{2}){0,2}$/.test(part.partition);
    const partition = by === 'none' ? UNPARTITIONED : dated ? part.partition.slice(0, PREFIX[by]) : UNDATED;
    const group = groups.get(partition);
    if (group === undefined) groups.set(partition, [part]);
    else group.push(part);
  }
  return groups;
}

/** The groups of partition `only` alone (none when it holds no part), or all of them. */
function inPartition(groups: Map<string, ScannedPart[]>, only: string | undefined): Map<string, ScannedPart[]> {
  if (only === undefined) return groups;
  const group = groups.get(only);
  return new Map(group === undefined ? [] : [[only, group]]);
}
