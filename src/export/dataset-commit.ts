/**
 * Group commit (README § 8 "Group commit"): how a dataset's writers publish together. A writer whose
 * pages are staged leaves a commit (`commits/<writer>.json`, durable before anything else happens)
 * and then either leads or is taken:
 *
 * - **Leading**: whoever takes the publish lock publishes every commit waiting, its own first, in
 *   passes (`planGroup`, then `finishGroup`), and keeps going while commits arrive, so the parts of
 *   a partition are rewritten once for everything that waited, not once a writer. A pass takes at
 *   most `PASS_BYTES` of spools (its own commit always).
 * - **Waiting** (`handOff: false`, the default): a writer that finds the lock held looks every
 *   `POLL_MS` whether its commit was taken (the leader writes its receipt, then removes the commit),
 *   and tries the lock now and then in case the leader died.
 * - **Handing off** (`handOff: true`, a queue worker's walks): a writer that finds the lock held
 *   returns at once, leaving its commit to the holder. The holder looks for commits again after it
 *   releases the lock and leads again while any wait, so a commit left while it held the lock is
 *   always published: by it, or by whoever took the lock after it (and looks again in turn). A
 *   leader killed -9 leaves the commits for the next writer that publishes, or that opens the
 *   dataset as the same writer (`DatasetDestination.recover`).
 *
 * Total rewriting stays about linear in the data: while a pass rewrites the parts, every walk that
 * finishes meanwhile leaves its commit, so the next pass takes them all at once; passes grow as the
 * dataset does, instead of being as many as the walks.
 */
import { randomUUID } from 'node:crypto';
import { basename, join } from 'node:path';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { DatasetError, LockedError } from '../errors.ts';
import { finishCompaction } from './compaction-journal.ts';
import { finishGroup, type GroupJournal } from './dataset-rewrite.ts';
import { readCommitFile, readReceiptFile } from './dataset-state.ts';
import { DatasetPaths, tryLock, withLock } from './dataset-store.ts';
import { fileSize, writeJsonAtomic } from './durable.ts';
import type { SpoolPrefix } from './destination.ts';
import type { ExportState } from './journal.ts';
import type { DatasetChanges, ExportLocks, PublishFence } from './types.ts';

/** How often a waiting writer looks whether its pages were taken; every `TRY_EVERY`th look it tries the lock. */
const POLL_MS = 20;
const TRY_EVERY = 10;
/** A publish of a large group rewrites many parts; a lock held longer than this is a run that hangs. */
const PUBLISH_PATIENCE_MS = 10 * 60_000;
/**
 * The spools one pass of a publish takes at most: they are sorted into partition files on disk
 * (`dataset-plan.ts`) and merged one partition at a time, so this bounds the pass's temporary disk
 * and time, not its memory.
 */
export const PASS_BYTES = 1024 * 1024 * 1024;

/** A writer's staged pages, waiting for a publish (`DatasetPaths.commit`). */
export interface Commit {
  writer: string;
  complete: boolean;
  runId?: string;
  state: ExportState;
  /** Only these first records of the spool are published; those after stay staged (a lowered limit, README §7). */
  through?: SpoolPrefix;
}

/** What a publish tells a writer it took the pages of (`DatasetPaths.receipt`). */
export interface Receipt {
  changes: DatasetChanges;
  repaired: number;
}

/** The publish lock as the writer holds it: the caller's (Redis leases in queue mode), else the lock folder. */
export type PublishLocks = Partial<Pick<ExportLocks, 'publish' | 'tryPublish'>>;

/**
 * Plans the publish of a group of commits, the first the leader's own when it has one waiting,
 * staging its files in `staging` (a folder of the pass's own under `publishing/`).
 */
export type PlanGroup = (commits: readonly Commit[], staging: string) => Promise<GroupJournal>;

export class GroupCommit {
  constructor(
    readonly paths: DatasetPaths,
    readonly locks: PublishLocks,
    readonly plan: PlanGroup,
  ) {}

  /**
   * Leaves `commit` and sees it published: the receipt of its publish, or with `handOff`, undefined
   * when it was left to a publish in progress.
   */
  async publish(commit: Commit, handOff: boolean): Promise<Receipt | undefined> {
    await mkdir(this.paths.commits, { recursive: true });
    await writeJsonAtomic(this.paths.commit(), commit);
    try {
      return handOff ? await this.#handOff() : await this.awaitOwn();
    } catch (error) {
      // Not published: the staging is whole, and a resume publishes it.
      if ((await fileSize(this.paths.publishJournal)) === undefined) await rm(this.paths.commit(), { force: true }).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Until this writer's commit is taken: it is gone once another's publish took it (the receipt is
   * written first), else this writer takes the lock when it is free and leads. Without a lock that
   * can be tried, waits for the lock.
   */
  async awaitOwn(): Promise<Receipt> {
    if (this.locks.publish !== undefined && this.locks.tryPublish === undefined) return this.#afterLeading(await this.locked((fence) => this.#lead(new Set(), fence)));
    const deadline = Date.now() + PUBLISH_PATIENCE_MS;
    for (let polls = 0; ; polls++) {
      if (!(await this.#waiting())) return this.#receipt();
      // The lock is tried less often than the commit is looked at: in queue mode each try is a Redis round trip.
      const led = polls % TRY_EVERY === 0 ? await this.#attempt((fence) => this.#lead(new Set(), fence)) : undefined;
      if (led !== undefined) return this.#afterLeading(led.value);
      if (Date.now() > deadline) throw new DatasetError(`${this.paths.meta} is locked by another run that has been publishing for ten minutes (${this.paths.lock})`, this.paths.dir);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Leads while the lock is free and commits wait; returns once another holds it (it takes what waits) or none wait. */
  async #handOff(): Promise<Receipt | undefined> {
    if (this.locks.publish !== undefined && this.locks.tryPublish === undefined) return this.#afterLeading(await this.locked((fence) => this.#lead(new Set(), fence)));
    let receipt: Receipt | undefined;
    // Commits a pass could not publish stay for their own writers: looking again for them would never end.
    const refused = new Set<string>();
    for (;;) {
      const led = await this.#attempt((fence) => this.#lead(refused, fence));
      if (led === undefined) break;
      receipt ??= led.value;
      if (!(await this.#othersWait(refused))) break;
    }
    if (receipt === undefined && !(await this.#waiting())) return this.#receipt();
    // Its receipt was not read: the next open of this writer drops it.
    return receipt;
  }

  /**
   * Holding the lock: finishes what a kill left, then publishes the commits waiting, its own first,
   * pass after pass while more wait. Returns this writer's receipt when its own commit was among them.
   *
   * Each pass stages in a folder of its own, and asks the lock's `fence` (a Redis lease's) before its
   * journal: a leader that stalled past its lease, while another took the lock and published, then
   * neither overwrites the other's staged parts nor puts its older parts over theirs.
   */
  async #lead(refused: Set<string>, fence: PublishFence | undefined): Promise<Receipt | undefined> {
    await finishCompaction(this.paths);
    // A publish killed after its journal may have taken this writer's commit: finishing it says so.
    await finishGroup(this.paths);
    let own: Receipt | undefined;
    for (let took = 0; ; ) {
      // As long as the last pass took: the walks running meanwhile (in this process too) leave their
      // commits, and the next pass takes them all at once. Publishing then takes at most about half
      // the time, however large the dataset: its rewrites grow with the data, not with the walks.
      if (took > 0 && (await this.#othersWait(refused))) await new Promise((resolve) => setTimeout(resolve, took));
      const pass = await this.#nextPass(refused);
      if (pass.length === 0) return own;
      const started = performance.now();
      const staging = join(this.paths.publishing, randomUUID());
      const journal = await this.#planPass(pass, refused, staging);
      if (journal === undefined) continue;
      if (fence !== undefined && !(await fence())) {
        await rm(staging, { recursive: true, force: true });
        throw new LockedError(
          `${this.paths.lock}: this publish lost its lease to another worker while it planned (its process stalled past the lease); nothing of it was published, and its pages go with that worker's publish or on resume`,
          this.paths.lock,
          0,
        );
      }
      await writeJsonAtomic(this.paths.publishJournal, journal);
      await finishGroup(this.paths);
      took = performance.now() - started;
      const member = journal.members.find((each) => each.writer === this.paths.writer);
      if (member !== undefined) {
        own = { changes: member.changes, repaired: member.repaired };
        // Read here: a writer leading reads its receipt from the journal, not the file.
        await rm(this.paths.receipt(), { force: true });
      }
    }
  }

  /**
   * The plan of a pass. When it cannot be published (a record of another writer's refused, say): a
   * pass with this writer's own commit is planned again with it alone (its error is this writer's);
   * one without is left for its writers, who meet the error when they publish it themselves.
   */
  async #planPass(pass: readonly Commit[], refused: Set<string>, staging: string): Promise<GroupJournal | undefined> {
    const own = pass[0].writer === this.paths.writer;
    try {
      return await this.plan(pass, staging);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      if (own && pass.length > 1) {
        for (const commit of pass.slice(1)) refused.add(commit.writer);
        return this.plan(pass.slice(0, 1), staging);
      }
      if (own) throw error;
      for (const commit of pass) refused.add(commit.writer);
      return undefined;
    }
  }

  /** The commits of the next pass: this writer's first when it waits, then others' in name order up to `PASS_BYTES` of spools. */
  async #nextPass(refused: ReadonlySet<string>): Promise<Commit[]> {
    const pass: Commit[] = [];
    let bytes = 0;
    const paths = await commitsWaiting(this.paths);
    const own = this.paths.commit();
    for (const path of [...paths.filter((each) => each === own), ...paths.filter((each) => each !== own)]) {
      const writer = writerOfCommit(path);
      if (refused.has(writer)) continue;
      const commit = await readCommitFile(path, writer, commitRemedy(path));
      if (commit === undefined) continue;
      if (pass.length > 0 && bytes + commit.state.spool.bytes > PASS_BYTES) break;
      pass.push(commit);
      bytes += commit.state.spool.bytes;
    }
    return pass;
  }

  /** Whether commits wait that a pass may take (not those a pass could not publish). */
  async #othersWait(refused: ReadonlySet<string>): Promise<boolean> {
    return (await commitsWaiting(this.paths)).some((path) => !refused.has(writerOfCommit(path)));
  }

  /** This writer's receipt when its lead took its commit; else the file another's publish left. */
  async #afterLeading(receipt: Receipt | undefined): Promise<Receipt> {
    return receipt ?? this.#receipt();
  }

  async #waiting(): Promise<boolean> {
    return (await fileSize(this.paths.commit())) !== undefined;
  }

  async #receipt(): Promise<Receipt> {
    const path = this.paths.receipt();
    const receipt = await readReceiptFile(path, `delete it: the pages it reports on are in the dataset (dataset info counts them)`);
    await rm(path, { force: true });
    if (receipt === undefined) throw new DatasetError(`${this.paths.dir}: the publish of ${this.paths.writer}'s pages left no receipt (${path}); resume the export`, this.paths.dir);
    return receipt;
  }

  #attempt<T>(fn: (fence?: PublishFence) => Promise<T>): Promise<{ value: T } | undefined> {
    const tryPublish = this.locks.tryPublish;
    return tryPublish === undefined ? tryLock(this.paths, fn) : tryPublish(this.paths.lock, fn);
  }

  /** Runs `fn` holding the publish lock, waiting for it (a migration or a kill's leftovers are settled so). */
  locked<T>(fn: (fence?: PublishFence) => Promise<T>): Promise<T> {
    return this.locks.publish === undefined ? withLock(this.paths, fn) : this.locks.publish(this.paths.lock, fn);
  }

  /** Whether the lock is Redis leases (a queue's workers), which a pid-file writer cannot see. */
  get queueLocks(): boolean {
    return this.locks.publish !== undefined;
  }
}

/**
 * Whether `writer`'s commit in the dataset at `dir` still waits for a publish. Only a publish or its
 * own writer removes it, so a commit handed off and now gone is published.
 */
export async function commitWaits(dir: string, operation: string, writer: string): Promise<boolean> {
  return (await fileSize(new DatasetPaths(dir, operation, writer).commit())) !== undefined;
}

/** What to do with a commit that is damaged. */
export function commitRemedy(path: string): string {
  return `delete ${path}; its writer publishes on resume`;
}

/** The writer whose commit is at `path` (`DatasetPaths.commit`). */
export function writerOfCommit(path: string): string {
  return basename(path, '.json');
}

/** The commits waiting, by path, in name order. */
export async function commitsWaiting(paths: DatasetPaths): Promise<string[]> {
  const names = await readdir(paths.commits).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith('.json') && !name.endsWith('.done.json')).sort().map((name) => join(paths.commits, name));
}
