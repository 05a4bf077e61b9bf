/**
 * What an export remembers between runs, in its staging journal (`<out>.checkpoint.json` beside a
 * file, `checkpoint.json` in a dataset writer's staging folder): which walks there are, where each
 * one stands (the client's own checkpoint of its last staged page), how much of the spool is vouched
 * for (its length and SHA-256), the totals over every run, and the counters of the current run
 * (a crash does not end a run, so its caps hold across the crash). It holds no key and no address.
 *
 * The file is a journal, one JSON line per save: a whole state first, then one small patch per
 * staged page (the totals and the one walk that moved). So a save costs the same with 10 walks or
 * 10,000; once the patches outweigh the whole state, the journal is rewritten as one line again.
 * Each line carries a SHA-256 chained over the lines before it, so a hand-edited checkpoint is
 * refused rather than trusted; only a last line cut short by a crash is dropped (its page is then
 * bought again, as the spool is cut back to the length the line before vouched for).
 *
 * A save resolves once its line is written: the operating system holds it, so a killed process
 * loses nothing. Flushing to the disk (for a machine that loses power) runs behind, off the path of
 * the next request, for the journal as for the spool (`Spool`), one flush at a time for everything
 * written meanwhile. The disk may then keep a line whose spool bytes it lost: `loadState` rolls the
 * journal back to its last line whose bytes the spool holds, so those pages are bought again, while
 * the attempts counted stay counted (a cap holds across a power loss too). Where a lost line would
 * cost more than a page — an attempt counted under a cap, the end of a run — the caller waits for
 * `flush`; a whole state is written only once the spool it vouches for is flushed (`vouchesFor`),
 * as it leaves no earlier line to roll back to.
 */
import { createHash } from 'node:crypto';
import { readFile, type FileHandle, open } from 'node:fs/promises';
import type { Checkpoint } from '../checkpoint.ts';
import { HeldStateError, StateDamagedError } from '../errors.ts';
import { walkName } from '../operations/walk-name.ts';
import { naming } from './disk.ts';
import { FlushBehind, holdsMarks, OPEN, writeFileAtomic, writeWhole, type SpoolMark } from './durable.ts';

export interface WalkState {
  params: Record<string, string>;
  /** The walk has ended by its own continuation rule, or reached its high-water mark: nothing left to fetch. */
  done: boolean;
  /** The client checkpoint after the walk's last staged page, once it has one. */
  checkpoint?: Checkpoint;
  /** The service rejected this parameter set (400/404), with this message: it is tried again on resume. */
  rejected?: string;
  /** Datasets: the newest record time staged (Unix ms), and whether the walk stopped at its mark. */
  newest?: number;
  stoppedAtMark?: boolean;
  /** Datasets: the keys met near `newest`, with their believable times (`marks.ts` `noteNear`). */
  near?: [key: string, time: number | null][];
}

/** The counters of one run: what its caps are held to. */
export interface RunCounters {
  records: number;
  pages: number;
  /** Attempts that may have been charged. */
  credits: number;
  received: number;
  duplicates: number;
  /** Strings with invalid UTF-16 written as U+FFFD. */
  repaired: number;
  /** The run stopped cleanly (complete, cap, limit, signal, 402): a resume starts the next run. */
  ended: boolean;
}

interface Totals {
  /** What of the spool holds exactly the records of the staged pages. */
  spool: SpoolMark;
  /** Records staged, over every run (for a dataset: since its last publish too). */
  records: number;
  /** Pages read, over every run (a page read twice after a crash counts twice). */
  pages: number;
  /** Request attempts that may have been charged, over every run of this export. */
  credits: number;
  run: RunCounters;
  /** Every page is staged; only publishing is left. */
  finished?: boolean;
  /**
   * Records at the end of the spool that the output does not hold: a limit lowered on resume left
   * them staged (docs/guarantees.md "Credit caps"). The next run takes them as its first.
   */
  unpublished?: number;
}

export interface ExportState extends Totals {
  version: 3;
  op: string;
  walks: WalkState[];
}

/** A journal line: the whole state, or the totals and at most one walk. */
type Entry = { state: ExportState } | { totals: Totals; walk?: [number, WalkState] };

export function freshRun(): RunCounters {
  return { records: 0, pages: 0, credits: 0, received: 0, duplicates: 0, repaired: 0, ended: false };
}

export function freshState(op: string, inputs: readonly Record<string, string>[]): ExportState {
  return {
    version: 3,
    op,
    // The sets are shared, not copied: nothing changes a walk's params, and a wide export holds a million.
    walks: inputs.map((params) => ({ params, done: false })),
    spool: { bytes: 0, sha256: createHash('sha256').digest('hex') },
    records: 0,
    pages: 0,
    credits: 0,
    run: freshRun(),
  };
}

const GENESIS = '';

function digestOf(previous: string, entry: string): string {
  return createHash('sha256').update(previous).update('\n').update(entry).digest('hex');
}

/**
 * The state a checkpoint file holds, verified line by line; undefined when there is no file. Given
 * the `spool` it vouches for, a journal the spool is behind (a power loss) is rolled back to its
 * last line whose bytes the spool holds, keeping the attempts counted after it (see the top of this file).
 */
export async function loadState(path: string, spool?: string): Promise<ExportState | undefined> {
  let text: string;
  try {
    text = await readFile(path, { encoding: 'utf8', flag: OPEN.read });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw damaged(path, 'is a symbolic link, not a checkpoint this program wrote');
    throw error;
  }
  const lines = text.split('\n');
  // A file that ends in a newline has a last, empty element; one that does not ends in a torn line.
  const torn = lines.pop();
  if (torn !== '' && lines.length === 0) throw damaged(path, 'is not a checkpoint this program wrote');
  const entries: string[] = [];
  let digest = GENESIS;
  for (const [index, line] of lines.entries()) {
    const parsed = parseLine(line);
    if (parsed === undefined || parsed.digest !== digestOf(digest, parsed.entry)) {
      throw damaged(path, `was changed after it was written (line ${index + 1} does not verify)`);
    }
    digest = parsed.digest;
    entries.push(parsed.entry);
  }
  const marks: SpoolMark[] = [];
  const state = replay(entries, path, (after) => marks.push(after.spool));
  if (spool === undefined || state.spool.bytes === 0) return state;
  const held = await holdsMarks(spool, marks);
  const last = held.lastIndexOf(true);
  // The spool holds the last line (the rule), or none at all: that is for `Spool.reopen` to refuse.
  if (last === entries.length - 1 || last === -1) return state;
  const rolledBack = replay(entries.slice(0, last + 1), path);
  rolledBack.credits = state.credits;
  rolledBack.run.credits = state.run.credits;
  return rolledBack;
}

/** The state after `entries` (verified lines), applied in order (`each` sees it after each line); every call parses them afresh. */
function replay(entries: readonly string[], path: string, each: (state: ExportState) => void = () => undefined): ExportState {
  let state: ExportState | undefined;
  for (const entry of entries) {
    let parsed: Entry;
    try {
      parsed = JSON.parse(entry) as Entry;
    } catch {
      throw damaged(path, 'is not a checkpoint this program wrote');
    }
    state = apply(state, parsed, path);
    each(state);
  }
  if (state === undefined) throw damaged(path, 'is not a checkpoint this program wrote');
  return state;
}

/**
 * A line as `lineOf` writes it: the entry's JSON text and the digest over that very text. The text
 * is sliced, not parsed and written again to be hashed: a whole state of a million walks is parsed
 * once, by `replay`.
 */
function parseLine(line: string): { entry: string; digest: string } | undefined {
  const tail = line.length - DIGEST_TAIL.length - 66;
  if (!line.startsWith(ENTRY_HEAD) || tail <= ENTRY_HEAD.length || !line.endsWith('"}') || !line.startsWith(DIGEST_TAIL, tail)) return undefined;
  const digest = line.slice(-66, -2);
  return /^[0-9a-f]{64}$/.test(digest) ? { entry: line.slice(ENTRY_HEAD.length, tail), digest } : undefined;
}

const ENTRY_HEAD = '{"entry":';
const DIGEST_TAIL = ',"digest":"';

function apply(state: ExportState | undefined, entry: Entry, path: string): ExportState {
  if ('state' in entry) {
    const version = (entry.state as { version?: unknown }).version;
    if (version === 2) return upgraded(entry.state);
    if (version !== 3) throw damaged(path, `was written by a version of socialstream this one does not know (format ${JSON.stringify(version)})`);
    return entry.state;
  }
  if (state === undefined) throw damaged(path, 'does not start with a whole state');
  Object.assign(state, entry.totals);
  if (entry.walk) state.walks[entry.walk[0]] = entry.walk[1];
  return state;
}

/**
 * A checkpoint of socialstream 0.1.0 (format 2): its caps counted over every run, so the run it was
 * in continues with everything spent so far counted against it, which can only stop it sooner.
 */
function upgraded(old: Omit<ExportState, 'version' | 'run'>): ExportState {
  return { ...old, version: 3, run: { ...freshRun(), records: old.records, pages: old.pages, credits: old.credits } };
}

function damaged(path: string, reason: string): StateDamagedError {
  return new StateDamagedError(`${path} ${reason}`, path);
}

/**
 * On resume: the walks of the checkpoint, matched to the parameter sets asked for now. The
 * operation must be the same and every walk the checkpoint holds must still be asked for, except
 * those the service rejected: the user may fix or remove their lines, and new lines start afresh.
 */
export function matchWalks(state: ExportState, op: string, inputs: readonly Record<string, string>[], output: string): void {
  // One walk a name (an array each would be a million arrays); a checkpoint may hold a name twice.
  const held = new Map<string, WalkState>();
  const again: WalkState[] = [];
  for (const walk of state.walks) {
    const key = walkName(walk.params);
    if (held.has(key)) again.push(walk);
    else held.set(key, walk);
  }
  const walks = inputs.map((params): WalkState => {
    // By `walkName`, as `--inputs` tells repeats: a line whose keys were reordered is the same walk.
    const key = walkName(params);
    const found = held.get(key) ?? takeFirst(again, key);
    held.delete(key);
    const { rejected: _, ...walk } = found ?? { params, done: false };
    return walk;
  });
  const dropped = [...held.values(), ...again].filter((walk) => walk.rejected === undefined);
  if (state.op !== op || dropped.length > 0) {
    throw new HeldStateError(
      `${output} holds an unfinished export of other walks (${state.op} with ${state.walks.length} parameter set(s)); ` +
        `resume that export, or restart to discard it`,
      output,
    );
  }
  state.walks = walks;
}

/** Takes the first walk of `walks` named `key` out of it. */
function takeFirst(walks: WalkState[], key: string): WalkState | undefined {
  const index = walks.findIndex((walk) => walkName(walk.params) === key);
  return index === -1 ? undefined : walks.splice(index, 1)[0];
}

/** Saves an export's state as it moves: whole at first, then one patch per save (see the top of this file). */
export class StateJournal {
  #digest = GENESIS;
  /** Bytes in the file; none written yet, so the first save writes the state whole. */
  #bytes = Infinity;
  #wholeBytes = 0;
  /** Lines waiting for the next write; every save waiting on them is woken by it. */
  #queue: string[] = [];
  #writing: Promise<void> | undefined;
  /** Lines pushed so far, and how many of them are written. */
  #pushed = 0;
  #written = 0;
  /** Lines written are flushed behind, through whichever handle holds the file then. */
  readonly #flusher = new FlushBehind(async () => this.handle?.datasync().catch((error: unknown) => Promise.reject(naming(error, this.path))));
  /** Flushes the spool the journal vouches for: a whole state is written only after that. */
  #flushSpool: () => Promise<void> = () => Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly state: ExportState,
    private handle: FileHandle | undefined,
  ) {}

  /**
   * Keeps `state` at `path`. The first save writes it whole, replacing any journal there; until then
   * the file is left as it is, so a run that saves nothing changes nothing.
   */
  static start(path: string, state: ExportState): StateJournal {
    return new StateJournal(path, state, undefined);
  }

  /** Records the totals and, when given, where walk `index` stands; resolves once that line is written. */
  save(index?: number): Promise<void> {
    const { spool, records, pages, credits, run, finished } = this.state;
    const totals: Totals = { spool, records, pages, credits, run: { ...run }, ...(finished ? { finished } : {}) };
    const entry: Entry = index === undefined ? { totals } : { totals, walk: [index, this.state.walks[index]] };
    return this.#append(entry);
  }

  /** The spool whose bytes the lines vouch for: a whole state waits for it to be flushed. */
  vouchesFor(spool: { flush(): Promise<void> }): void {
    this.#flushSpool = () => spool.flush();
  }

  /** Resolves once every line saved so far is flushed to the disk; throws what a flush met (a full disk). */
  flush(): Promise<void> {
    return this.#flusher.flush();
  }

  /** Flushes what was saved and lets go of the file. */
  async close(): Promise<void> {
    await this.#writing?.catch(() => undefined);
    try {
      await this.#flusher.flush();
    } finally {
      await this.#flusher.idle();
      await this.handle?.close();
      this.handle = undefined;
    }
  }

  async #append(entry: Entry): Promise<void> {
    if (this.#flusher.failure !== undefined) throw this.#flusher.failure;
    // Serialised now: the state moves on while the line waits for the write before it.
    this.#queue.push(JSON.stringify(entry));
    const mine = ++this.#pushed;
    // Saves that come while a write is under way go out together in the next one. Whichever save
    // starts that write, each waits for the write that holds its own line: a save that returned
    // before (its line taken by another's write, still under way) would let the ledger send an
    // attempt whose count a kill could lose.
    while (this.#written < mine) {
      if (this.#writing) {
        await this.#writing;
        continue;
      }
      const through = this.#pushed;
      this.#writing = this.#write(this.#queue.splice(0))
        .then(() => {
          this.#written = through;
          this.#flusher.wrote(through);
        })
        .finally(() => (this.#writing = undefined));
      await this.#writing;
    }
  }

  async #write(entries: string[]): Promise<void> {
    // The whole state is at least as new as every patch waiting, so it can stand in for them.
    if (this.#bytes > Math.max(64 * 1024, 2 * this.#wholeBytes)) return this.#compact();
    let digest = this.#digest;
    let text = '';
    for (const entry of entries) {
      digest = digestOf(digest, entry);
      text += lineOf(entry, digest);
    }
    const handle = (this.handle ??= await open(this.path, OPEN.append));
    const bytes = Buffer.from(text);
    try {
      writeWhole(handle.fd, bytes);
    } catch (error) {
      // A full disk may have taken part of the lines: the journal must stay whole lines.
      await handle.truncate(this.#bytes).catch(() => undefined);
      throw naming(error, this.path);
    }
    this.#digest = digest;
    this.#bytes += bytes.length;
  }

  /** Rewrites the journal as one line holding the whole state, replacing the file atomically (and flushed). */
  async #compact(): Promise<void> {
    await this.#flushSpool();
    const { bytes, digest } = await writeState(this.path, this.state);
    // The new file is on disk: later flushes have nothing of the old one to do, but one may be under way.
    const replaced = this.handle;
    this.handle = undefined;
    await this.#flusher.idle();
    await replaced?.close();
    this.#digest = digest;
    this.#bytes = this.#wholeBytes = bytes;
  }
}

/**
 * Writes a journal holding `state` whole, as one line, replacing the file atomically. The line goes
 * out a slice of walks at a time, hashed as it goes: a state of a million walks is 50 MB of JSON,
 * which as one string (and its bytes) was three copies at once.
 */
export async function writeState(path: string, state: ExportState): Promise<{ bytes: number; digest: string }> {
  const hash = createHash('sha256').update(GENESIS).update('\n');
  let bytes = 0;
  let digest = '';
  // `lineOf`'s shape; the digest is over the entry's text alone.
  function* line(): Generator<string> {
    yield ENTRY_HEAD;
    for (const piece of entryPieces(state)) {
      hash.update(piece);
      bytes += Buffer.byteLength(piece);
      yield piece;
    }
    digest = hash.digest('hex');
    const tail = `${DIGEST_TAIL}${digest}"}\n`;
    bytes += ENTRY_HEAD.length + tail.length;
    yield tail;
  }
  await writeFileAtomic(path, line());
  return { bytes, digest };
}

/** The journal `writeState` writes for `state`, as text: what a dataset's staging log on a store holds of it. */
export function stateJournalText(state: ExportState): string {
  const hash = createHash('sha256').update(GENESIS).update('\n');
  let text = '';
  for (const piece of entryPieces(state)) {
    hash.update(piece);
    text += piece;
  }
  return lineOf(text, hash.digest('hex'));
}

/** `JSON.stringify({ state })`, in slices of `WALKS_A_SLICE` walks (the walks last). */
function* entryPieces(state: ExportState): Generator<string> {
  const { walks, ...rest } = state;
  const head = JSON.stringify({ state: rest } satisfies { state: Omit<ExportState, 'walks'> });
  yield `${head.slice(0, -2)},"walks":[`;
  for (let start = 0; start < walks.length; start += WALKS_A_SLICE) {
    const slice = JSON.stringify(walks.slice(start, start + WALKS_A_SLICE));
    yield (start === 0 ? '' : ',') + slice.slice(1, -1);
  }
  yield ']}}';
}

const WALKS_A_SLICE = 10_000;

function lineOf(entry: string, digest: string): string {
  return `${ENTRY_HEAD}${entry}${DIGEST_TAIL}${digest}"}\n`;
}
