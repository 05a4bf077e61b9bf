/**
 * Group commit (docs/datasets.md "Group commit"): how a dataset's writers publish together. A writer whose
 * pages are staged leaves a commit (`commits/<writer>.json`, durable before anything else happens)
 * and then either leads a publish pass or is taken by another's. A pass goes in two stages, under
 * the locks of `locks.ts`:
 *
 * - **Forming**, holding the publish lock: it finishes what kills left (a compaction, an older
 *   version's publish, passes that died), claims the commits waiting (its own first, then others'
 *   up to `PASS_COMMITS` commits and `PASS_BYTES` of spools; `claim.json` in its folder keeps other passes off them), sorts
 *   their records by partition, and takes those partitions' locks. Commits left while it waited
 *   for a partition join it. Then it lets the publish lock go: the next pass forms while this one
 *   publishes.
 * - **Publishing**, holding its partitions' locks: it merges the records into the bucket parts they
 *   touch (`plan.ts`), writes its journal and carries it out (`finishPass`). Passes that
 *   touch other partitions publish at once; one that touches the same waits for it while forming
 *   and takes in everything that arrived meanwhile, so a partition's parts are rewritten once for
 *   all that waited, not once a writer: total rewriting stays about linear in the data.
 *
 * A writer that finds the publish lock held either waits (`handOff: false`, the default: it looks
 * every `POLL_MS` whether its commit was taken, and tries the lock now and then in case no one
 * leads) or hands off (`handOff: true`, a queue worker's walks): it returns at once, leaving its
 * commit to the holder, who forms passes again after its own while commits wait. A writer handing
 * off does not wait for partitions either: a pass at work on one its records fall in (`Commit.partitions`
 * against the passes' claims, read from files) takes its commit once done. A pass killed -9
 * leaves its folder and a lock that is free: the next pass formed finishes it from its journal, or
 * drops it when it has none (its commits are then taken again).
 */
import { randomUUID } from 'node:crypto';
import { DatasetError, LockedError } from '../errors.ts';
import { finishCompaction } from './compaction-journal.ts';
import { allHeld, DatasetLocks, releaseAll, type Held, type PublishLocks } from './locks.ts';
import { claimed, claimOf, claimsOfLivePasses, exclusively, passEnds, recoverPasses } from './passes.ts';
import { finishLegacyGroup, finishPass, type GroupJournal } from './rewrite.ts';
import { readCommitFile, readReceiptFile } from './state.ts';
import { dropPass, passFolders, type DatasetPaths } from './store.ts';
import { objectPlace, objectsIn, writeObject } from './objects.ts';
import { walkName } from '../operations/walk-name.ts';
import type { SpoolPrefix } from '../export/destination.ts';
import type { ExportState } from '../export/journal.ts';
import type { DatasetChanges } from '../export/types.ts';

/** How often a waiting writer looks whether its pages were taken; every `TRY_EVERY`th look it tries the lock. */
const POLL_MS = 20;
const TRY_EVERY = 10;
/** A publish of a large group rewrites many parts; a lock held longer than this is a run that hangs. */
const PUBLISH_PATIENCE_MS = 10 * 60_000;
/**
 * The spools one pass of a publish takes at most: they are sorted into partition files on disk
 * (`plan.ts`) and merged one partition at a time, so this bounds the pass's temporary disk
 * and time, not its memory.
 */
export const PASS_BYTES = 1024 * 1024 * 1024;
/**
 * The commits one pass takes at most. A pass holds a lock for each walk in it, and with leases
 * (Redis, or a bucket's conditional writes) renews each one every few seconds while it merges: a
 * pass of hundreds of walks on a slow bucket spent its time renewing, took minutes, and once lost
 * a lease. Past this, commits wait for the next pass, which forms while this one publishes.
 */
export const PASS_COMMITS = 64;

/** A writer's staged pages, waiting for a publish (`DatasetNames.commit`). */
export interface Commit {
  writer: string;
  /** New for each commit (`GroupCommit.publish` gives it): a replay of a publish finishes its member only while this commit waits. */
  id?: string;
  complete: boolean;
  runId?: string;
  state: ExportState;
  /** Only these first records of the spool are published; those after stay staged (a lowered limit, docs/guarantees.md "Credit caps"). */
  through?: SpoolPrefix;
  /**
   * Its writer left it to a publish in progress and ended its run without waiting (`GroupCommit.publish`
   * with `handOff`): the publish leaves no state of the run behind. A writer that waits keeps its
   * run's state until it has read its receipt, so a kill before then resumes the same run (`GroupMember.next`).
   */
  handOff?: boolean;
  /**
   * The partitions its records fall in, when its writer staged them all itself: a hint that lets a
   * writer handing off see, without a round trip, that a pass at work holds them (`GroupCommit.#lead`).
   */
  partitions?: string[];
}

/** What a publish tells a writer it took the pages of (`DatasetNames.receipt`). */
export interface Receipt {
  changes: DatasetChanges;
  repaired: number;
}

/** A pass's plan (`PassPlan` of `plan.ts`): records sorted by partition as commits join, then merged into parts. */
export interface PassPlanning {
  readonly commits: readonly Commit[];
  /** Sorts the records of `commits` into the pass's partition files. */
  add(commits: readonly Commit[]): Promise<void>;
  /** The partitions the records fall in, in order. */
  partitions(): string[];
  /**
   * The other partitions whose key indexes, or the keys of the passes `working` (at work now), name
   * one of the records' keys (records that moved): their older versions go.
   */
  movedFrom(working: readonly string[]): Promise<string[]>;
  /** Writes where the pass places its keys, for the passes formed while it publishes (`movedFrom`). */
  writeKeys(root: string): Promise<void>;
  /** Merges them into the parts they touch (staged), holding the partitions' locks: the pass's journal. */
  merge(): Promise<GroupJournal>;
}

/** Begins the plan of the pass `pass` (its objects under `publishing/<pass>/`, its scratch folder `DatasetPaths.scratch`), by the dataset as recorded now. */
export type PlanPass = (pass: string) => Promise<PassPlanning>;

/** A pass formed: its plan, sorted, and the locks it holds (its own, its partitions' and its walks'). */
interface FormedPass {
  id: string;
  plan: PassPlanning;
  held: Held[];
}

/** A pass whose plan failed: which commits it held decides whose error it is (`GroupCommit.#afterFailure`). */
class PassFailure extends Error {
  constructor(
    readonly commits: readonly Commit[],
    override readonly cause: unknown,
  ) {
    super('a publish pass failed', { cause });
  }
}

export class GroupCommit {
  readonly locks: DatasetLocks;

  constructor(
    readonly paths: DatasetPaths,
    locks: PublishLocks,
    readonly plan: PlanPass,
  ) {
    this.locks = new DatasetLocks(locks);
  }

  /**
   * Leaves `commit` and sees it published: the receipt of its publish, or with `handOff`, undefined
   * when it was left to a publish in progress.
   */
  async publish(commit: Commit, handOff: boolean): Promise<Receipt | undefined> {
    const id = randomUUID();
    await writeObject(this.paths.storage, this.paths.names.commit(), { ...commit, id, ...(handOff ? { handOff } : {}) });
    try {
      return handOff ? await this.#handOff() : await this.awaitOwn();
    } catch (error) {
      // Not published: the staging is whole, and a resume publishes it (unless a live pass took it).
      if (!(await claimed(this.paths, this.paths.writer, id))) await this.paths.storage.remove(this.paths.names.commit()).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Until this writer's commit is taken: it is gone once a pass took it (the receipt is written
   * first); now and then this writer tries the publish lock and leads the passes that wait.
   */
  async awaitOwn(): Promise<Receipt> {
    const deadline = Date.now() + PUBLISH_PATIENCE_MS;
    const refused = new Set<string>();
    for (let polls = 0; ; polls++) {
      if (!(await this.#waiting())) return this.#receipt();
      // The lock is tried less often than the commit is looked at: in queue mode each try is a Redis round trip.
      const own = polls % TRY_EVERY === 0 ? await this.#lead(refused, false) : undefined;
      if (own !== undefined) return own;
      if (Date.now() > deadline) throw new DatasetError(`${this.paths.meta} is locked by another run that has been publishing for ten minutes (${this.paths.lock})`, this.paths.dir);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Leads while the publish lock is free and commits wait; returns once another holds it (it takes what waits) or none wait. */
  async #handOff(): Promise<Receipt | undefined> {
    const receipt = await this.#lead(new Set(), true);
    if (receipt === undefined && !(await this.#waiting())) return this.#receipt();
    // Its receipt was not read: the next open of this writer drops it.
    return receipt;
  }

  /**
   * Forms and publishes passes while the publish lock is free and commits wait. Returns this
   * writer's receipt when its own commit was in one of them. A pass that cannot be published (a
   * record of another writer's refused, say) with this writer's own commit is formed again with it
   * alone (its error is this writer's); one without is left for its writers, who meet the error when
   * they publish it themselves (`refused`: their commits are not taken again by this writer).
   *
   * With `handOff`, a pass whose partitions another pass holds is not waited for: it is let go, and
   * this writer returns, leaving the commits to that pass's leader, who looks again once it is done.
   * When no pass is at work any more (it was done before this one let go), it tries again instead.
   */
  async #lead(refused: Set<string>, handOff: boolean): Promise<Receipt | undefined> {
    let own: Receipt | undefined;
    // A pass at work holds partitions this writer's records fall in: it takes them when it is done.
    if (handOff && (await this.#ownBusy())) return own;
    for (let took = 0; ; ) {
      // As long as the last pass took: the walks running meanwhile (in this process too) leave their
      // commits, and the next pass takes them all at once. Publishing then takes at most about half
      // the time, however large the dataset: its rewrites grow with the data, not with the walks.
      if (took > 0 && (await this.#othersWait(refused))) await new Promise((resolve) => setTimeout(resolve, took));
      const started = performance.now();
      try {
        const formed = await this.locks.tryRun(this.paths.lock, () => this.#form(refused, handOff));
        if (formed?.value === undefined) return own;
        if (formed.value === 'busy') {
          // A pass at work: its leader looks for commits once it is done (after its folder goes), and takes these.
          if ((await passFolders(this.paths)).length > 0) return own;
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
          continue;
        }
        // Published whether or not this writer's own receipt is in hand: the pass holds its locks until then.
        const receipt = await this.#publishPass(formed.value);
        own ??= receipt;
      } catch (error) {
        if (!(error instanceof PassFailure)) throw error;
        if (!this.#afterFailure(error, refused)) throw error.cause;
      }
      took = performance.now() - started;
    }
  }

  /** Whether to go on after a pass failed: its commits other than this writer's own are refused; a pass of its own alone failed for good. */
  #afterFailure(failure: PassFailure, refused: Set<string>): boolean {
    const others = failure.commits.filter((commit) => commit.writer !== this.paths.writer);
    for (const commit of others) refused.add(commit.writer);
    return others.length > 0;
  }

  /**
   * Holding the publish lock: finishes what kills left, claims the commits waiting (this writer's
   * first), sorts their records and takes their partitions' locks; commits left while it waited
   * for those join it. Undefined when no commit waits that a live pass has not taken; `'busy'`,
   * with `handOff`, when another pass holds a lock it needs (the pass is let go, unclaimed).
   */
  async #form(refused: ReadonlySet<string>, handOff: boolean): Promise<FormedPass | 'busy' | undefined> {
    await finishCompaction(this.paths);
    await finishLegacyGroup(this.paths, this.locks);
    // `publishing/` is listed once for the pass: holding the publish lock, no pass forms meanwhile,
    // so those it shows are every pass there is; passes that end meanwhile only make it a few too many.
    const listed = await passFolders(this.paths);
    const { live } = await recoverPasses(this.paths, this.locks, { wait: false, passes: listed });
    const { writers: taken, partitions: busy } = await claimsOfLivePasses(this.paths, live);
    // Handing off, a pass takes only commits whose partitions no pass at work holds (as far as their hints tell).
    const avoid = handOff ? busy : new Set<string>();
    let commits = await this.#nextPass(refused, taken, { bytes: 0, commits: 0 }, avoid);
    // Commits left for passes at work (their hints): those passes' leaders take them, unless done already (`#lead` looks).
    if (commits.length === 0) return avoid.size > 0 && (await this.#othersWait(refused)) ? 'busy' : undefined;
    const id = randomUUID();
    const held: Held[] = [];
    const pass: Commit[] = [];
    try {
      const plan = await this.plan(id);
      // The paths of the locks this pass holds: its own, its partitions' and its walks'.
      const locked = new Set<string>();
      // The first commits, then once those that arrived while it waited for partitions; a pass
      // handing off waits for none, so it has the one round. Each look reads every commit waiting.
      const rounds = handOff ? 1 : 2;
      for (let bytes = 0, round = 1; commits.length > 0; round++) {
        pass.push(...commits);
        for (const commit of commits) taken.add(commit.writer);
        bytes += commits.reduce((sum, commit) => sum + commit.state.spool.bytes, 0);
        await writeObject(this.paths.storage, this.paths.names.passClaim(id), { commits: claimOf(pass) });
        await plan.add(commits).catch((error: unknown) => Promise.reject(new PassFailure(pass, error)));
        // With the partitions holding older versions of its records that moved, or where a pass at work places one of its keys: the pass rewrites those too.
        const working = live;
        const moved = await plan.movedFrom(working).catch((error: unknown) => Promise.reject(new PassFailure(pass, error)));
        await plan.writeKeys(this.paths.names.passKeys(id));
        const partitions = [...plan.partitions(), ...moved];
        // What passes forming next read to tell whether they would wait for this one.
        await writeObject(this.paths.storage, this.paths.names.passClaim(id), { commits: claimOf(pass), partitions });
        if (handOff && partitions.some((partition) => avoid.has(partition))) {
          await dropPass(this.paths, id);
          return 'busy';
        }
        // The pass's own lock goes with its first partitions' and walks' (one round trip for all with
        // leases): only the publish lock's holder finishes dead passes, so none takes this one for dead before.
        const walks = pass.flatMap((commit) => commit.state.walks.map((walk) => this.paths.walkLock(walkName(walk.params))));
        const wanted = [this.paths.passLock(id), ...partitions.map((partition) => this.paths.partitionLock(partition)), ...walks].filter((lock) => !locked.has(lock));
        for (const lock of wanted) locked.add(lock);
        if (handOff) {
          const free = await this.locks.tryHoldAll(wanted);
          if (free === undefined) {
            await dropPass(this.paths, id);
            return 'busy';
          }
          held.push(...free);
        } else if (wanted.length > 0) {
          held.push(...(await this.locks.holdAll(wanted, () => passEnds(this.paths, id))));
        }
        commits = round < rounds ? await this.#nextPass(refused, taken, { bytes, commits: pass.length }, avoid) : [];
      }
      // A pass that died while this one waited held partitions that are this one's now, or free.
      await recoverPasses(this.paths, this.locks, { wait: false, except: id, held: locked, passes: live });
      return { id, plan, held };
    } catch (error) {
      await dropPass(this.paths, id);
      await releaseAll(held);
      throw error;
    }
  }

  /**
   * Publishes a formed pass, holding its locks (not the publish lock): merges, asks the locks'
   * fences (a Redis lease's: a leader that stalled past its lease, while another took over, then
   * publishes nothing over theirs), writes the journal and carries it out. Returns this writer's
   * receipt when its own commit was in it.
   */
  async #publishPass({ id, plan, held }: FormedPass): Promise<Receipt | undefined> {
    try {
      const journal = await plan.merge().catch((error: unknown) => Promise.reject(new PassFailure(plan.commits, error)));
      if (!(await allHeld(held))) {
        throw new LockedError(
          `${this.paths.lock}: this publish lost its lease to another worker while it planned (its process stalled past the lease); nothing of it was published, and its pages go with that worker's publish or on resume`,
          this.paths.lock,
          0,
        );
      }
      await writeObject(this.paths.storage, this.paths.names.passJournal(id), journal);
      await finishPass(this.paths, id, this.locks, journal);
      const member = journal.members.find((each) => each.writer === this.paths.writer);
      if (member === undefined) return undefined;
      // Read here: a writer leading reads its receipt from the journal, not the file.
      await this.paths.storage.remove(this.paths.names.receipt());
      return { changes: member.changes, repaired: member.repaired };
    } catch (error) {
      // Before its journal the pass changed nothing: its folder goes. After it, the next pass formed finishes it.
      if (!(await this.paths.storage.exists(this.paths.names.passJournal(id)))) await dropPass(this.paths, id);
      throw error;
    } finally {
      await releaseAll(held);
    }
  }

  /**
   * The commits a pass takes next: this writer's first when it waits, then others' in name order,
   * up to `PASS_BYTES` of spools and `PASS_COMMITS` commits with what the pass took already (its
   * first commit always).
   */
  async #nextPass(refused: ReadonlySet<string>, taken: ReadonlySet<string>, already: { bytes: number; commits: number }, busy: ReadonlySet<string>): Promise<Commit[]> {
    const pass: Commit[] = [];
    let bytes = already.bytes;
    const writers = await commitsWaiting(this.paths);
    const own = this.paths.writer;
    for (const writer of [...writers.filter((each) => each === own), ...writers.filter((each) => each !== own)]) {
      // A writer's next commit comes only once its last is gone: one claimed is the one waiting, unread.
      if (refused.has(writer) || taken.has(writer)) continue;
      if (already.commits + pass.length >= PASS_COMMITS) break;
      const commit = await readCommitFile(this.paths, writer, commitRemedy(this.paths, writer));
      if (commit === undefined) continue;
      if (commit.partitions?.some((partition) => busy.has(partition)) === true) continue;
      if ((pass.length > 0 || bytes > 0) && bytes + commit.state.spool.bytes > PASS_BYTES) break;
      pass.push(commit);
      bytes += commit.state.spool.bytes;
    }
    return pass;
  }

  /** Whether commits wait that a pass may take (not those a pass could not publish). */
  async #othersWait(refused: ReadonlySet<string>): Promise<boolean> {
    return (await commitsWaiting(this.paths)).some((writer) => !refused.has(writer));
  }

  /** Whether this writer's commit hints at a partition that a pass at work holds (read from files: no round trip). */
  async #ownBusy(): Promise<boolean> {
    if ((await passFolders(this.paths)).length === 0) return false;
    const own = await readCommitFile(this.paths, this.paths.writer, commitRemedy(this.paths, this.paths.writer));
    if (own?.partitions === undefined) return false;
    const { partitions } = await claimsOfLivePasses(this.paths);
    return own.partitions.some((partition) => partitions.has(partition));
  }

  async #waiting(): Promise<boolean> {
    return this.paths.storage.exists(this.paths.names.commit());
  }

  async #receipt(): Promise<Receipt> {
    const read = await readReceiptFile(this.paths, `delete it: the pages it reports on are in the dataset (dataset info counts them)`);
    if (read === undefined) {
      throw new DatasetError(`${this.paths.place}: the publish of ${this.paths.writer}'s pages left no receipt (${objectPlace(this.paths.storage, this.paths.names.receipt())}); resume the export`, this.paths.place);
    }
    await this.paths.storage.remove(read.name);
    return read.receipt;
  }

  /**
   * Publishes the commits waiting while the publish lock is free: a writer at work between two
   * steps of a long task (the widening rewrite, `widen.ts`) lets no other wait for all of it.
   */
  async publishWaiting(): Promise<void> {
    await this.#lead(new Set(), false);
  }

  /** Runs `fn` holding the publish lock with no pass live (`exclusively`): a migration or a kill's leftovers are settled so. */
  exclusive<T>(fn: (recovered: boolean) => Promise<T>): Promise<T> {
    return exclusively(this.paths, this.locks, fn);
  }
}

/**
 * Whether the commit of the writer of `paths` still waits for a publish. Only a publish or its
 * own writer removes it, so a commit handed off and now gone is published.
 */
export async function commitWaits(paths: DatasetPaths): Promise<boolean> {
  return paths.storage.exists(paths.names.commit());
}

/** What to do with the commit of `writer` when it is damaged. */
export function commitRemedy(paths: DatasetPaths, writer: string): string {
  return `delete ${objectPlace(paths.storage, paths.names.commit(writer))}; its writer publishes on resume`;
}

/** The writers whose commits wait, in name order (one listing of `commits/`; receipts an older version left there are not commits). */
export async function commitsWaiting(paths: DatasetPaths): Promise<string[]> {
  const folder = paths.names.commits;
  const names = await objectsIn(paths.storage, folder, (last) => last.endsWith('.json') && !last.endsWith('.done.json'));
  return names.map((name) => name.slice(folder.length, -'.json'.length));
}
