/**
 * The publish passes on disk (docs/datasets.md "Crash safety, and writers that publish together"): each
 * pass's folder under `_dataset/<op>/publishing/` holds its claim (the commits it took and the
 * partitions it holds) and, once it publishes, its journal. What a pass forming reads of the others
 * (`claimsOfLivePasses`), how it waits for one to end (`passEnds`), and how the passes a kill left
 * are finished or dropped (`recoverPasses`, `exclusively`) live here; forming and publishing a pass
 * is `commit.ts`.
 */
import { walkName } from '../operations/walk-name.ts';
import { releaseAll, type DatasetLocks } from './locks.ts';
import { finishPass, passJournalRemedy, type GroupJournal } from './rewrite.ts';
import { readClaimFile, readGroupJournal } from './state.ts';
import { dropPass, passFolders, type DatasetPaths } from './store.ts';

/** The longest a pass waiting for partitions looks at pass folders before it asks for the locks again. */
const PASS_END_WAIT_MS = 1_000;
/**
 * How often it looks meanwhile whether the passes' claims are still there (no round trip to Redis;
 * a `HEAD` a claim on S3): at first soon, as a short pass ends soon, then less often, up to the last.
 */
const PASS_END_FIRST_LOOK_MS = 10;
const PASS_END_LAST_LOOK_MS = 500;

/**
 * Runs `fn` holding the publish lock once every pass is over: live ones are waited for, dead ones
 * finished from their journals or dropped. No pass forms meanwhile, so `fn` may rewrite every
 * partition (a compaction, a migration). `fn` is told whether a pass a kill left was finished.
 */
export function exclusively<T>(paths: DatasetPaths, locks: DatasetLocks, fn: (recovered: boolean) => Promise<T>): Promise<T> {
  return locks.run(paths.lock, async () => fn((await recoverPasses(paths, locks, { wait: true })).finished));
}

/** What `recoverPasses` found: whether it finished a pass from its journal, and the passes that live on. */
export interface RecoveredPasses {
  finished: boolean;
  /** The passes whose lock another held (at work), as far as the listing showed: none after a `wait`. */
  live: string[];
}

/**
 * Finishes the passes that died (their lock is free): from the journal when they wrote one, taking
 * the locks of its partitions and walks (but those in `held`, the caller's), else by dropping their folder,
 * which frees their commits. With `wait`, live passes are waited for, then looked at the same way.
 * The caller holds the publish lock, so no pass forms meanwhile: `passes`, the passes a listing of
 * `publishing/` the caller made under it showed, are all there are (or fewer, as passes end); without
 * it, `publishing/` is listed here.
 */
export async function recoverPasses(
  paths: DatasetPaths,
  locks: DatasetLocks,
  options: { wait: boolean; except?: string; held?: ReadonlySet<string>; passes?: readonly string[] },
): Promise<RecoveredPasses> {
  let finished = false;
  const live: string[] = [];
  for (const pass of options.passes ?? (await passFolders(paths))) {
    if (pass === options.except) continue;
    const hold = options.wait ? await locks.hold(paths.passLock(pass)) : await locks.tryHold(paths.passLock(pass));
    if (hold === undefined) {
      live.push(pass);
      continue;
    }
    try {
      const journal = await readGroupJournal(paths, paths.names.passJournal(pass), passJournalRemedy(paths, pass));
      if (journal === undefined) {
        await dropPass(paths, pass);
        continue;
      }
      const wanted = journalLocks(paths, journal).filter((lock) => options.held?.has(lock) !== true);
      const held = await locks.holdAll(wanted);
      try {
        finished = (await finishPass(paths, pass, locks, journal)) || finished;
      } finally {
        await releaseAll(held);
      }
    } finally {
      await hold.release();
    }
  }
  return { finished, live };
}

/**
 * Resolves when a pass other than `except` ends (its objects, its claim among them, go just before
 * its locks), or after `PASS_END_WAIT_MS` in any case (a holder that died leaves its objects): what
 * a pass waiting for partitions waits on between tries, looking at the store rather than asking Redis.
 */
export async function passEnds(paths: DatasetPaths, except: string): Promise<void> {
  // One listing shows the claims there are: a claim goes with its pass's other objects, and looking
  // for one again is a `HEAD`, not a walk of every pass's staged parts.
  const own = paths.names.passClaim(except);
  const claims: string[] = [];
  for await (const { name } of paths.storage.list(paths.names.publishing)) if (name.endsWith('/claim.json') && name !== own) claims.push(name);
  const deadline = Date.now() + PASS_END_WAIT_MS;
  for (let look = PASS_END_FIRST_LOOK_MS; Date.now() < deadline; look = Math.min(look * 2, PASS_END_LAST_LOOK_MS)) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(look, Math.max(0, deadline - Date.now()))));
    for (const claim of claims) if (!(await paths.storage.exists(claim))) return;
  }
}

/** The locks a pass's journal is carried out under: its partitions' and its walks'. */
function journalLocks(paths: DatasetPaths, journal: GroupJournal): string[] {
  return [...(journal.partitions ?? []).map((partition) => paths.partitionLock(partition)), ...journal.walks.map((walk) => paths.walkLock(walkName(walk.params)))];
}

/**
 * The writers whose commits passes claimed, the commits by `claimName`, and the partitions the
 * passes hold, from their claims; under the publish lock, with dead passes finished, these are the
 * passes at work. `passes` are those a listing showed (`RecoveredPasses.live`); without it,
 * `publishing/` is listed here.
 */
export async function claimsOfLivePasses(paths: DatasetPaths, passes?: readonly string[]): Promise<{ writers: Set<string>; commits: Set<string>; partitions: Set<string> }> {
  const writers = new Set<string>();
  const commits = new Set<string>();
  const partitions = new Set<string>();
  for (const pass of passes ?? (await passFolders(paths))) {
    const claim = await readClaimFile(paths, pass, passJournalRemedy(paths, pass));
    for (const commit of claim?.commits ?? []) {
      writers.add(commit.writer);
      commits.add(claimName(commit.writer, commit.id));
    }
    for (const partition of claim?.partitions ?? []) partitions.add(partition);
  }
  return { writers, commits, partitions };
}

/** Whether a pass claimed `writer`'s commit `id`. */
export async function claimed(paths: DatasetPaths, writer: string, id: string): Promise<boolean> {
  const { commits } = await claimsOfLivePasses(paths).catch(() => ({ commits: new Set<string>() }));
  return commits.has(claimName(writer, id));
}

/** A pass's claim of `commits`, as `claim.json` holds it. */
export function claimOf(commits: readonly { writer: string; id?: string }[]): { writer: string; id?: string }[] {
  return commits.map((commit) => ({ writer: commit.writer, ...(commit.id === undefined ? {} : { id: commit.id }) }));
}

function claimName(writer: string, id: string | undefined): string {
  return `${writer}#${id ?? ''}`;
}
