/**
 * The files that make an export crash-safe, and how they are opened: a file export and a dataset's
 * staging both keep their pages here. The spool holds NDJSON lines, appended a page at a time
 * and flushed to the disk behind (`FlushBehind`); the checkpoint (see `journal.ts`) names the
 * spool length and hash it vouches for; whatever lies past that length was written by a run that
 * died before it could vouch for it, so a resumed run cuts it off and fetches those pages again.
 *
 * These files sit beside an output in a folder other people may write to, so none of them is ever
 * opened through a symbolic link (`O_NOFOLLOW`), and every new file is created, never reused
 * (`O_EXCL`): a link planted at a side file's name makes the export fail, never overwrite its target.
 */
import { createHash, type Hash } from 'node:crypto';
import { constants, createReadStream, fstatSync, statSync, writeSync } from 'node:fs';
import { open, readFile, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { StateDamagedError } from '../errors.ts';
import { naming } from './disk.ts';
import { temporaryName } from '../../sinks/temporary-name.ts';
import { PageEncoder, type EncodedPage } from './page-encoder.ts';

export { isTemporaryNameOf, temporaryName } from '../../sinks/temporary-name.ts';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_RDWR, O_WRONLY, O_APPEND } = constants;

/** Flags for opening a side file: never through a link; `create` makes a new file or fails. */
export const OPEN = {
  read: O_RDONLY | O_NOFOLLOW,
  update: O_RDWR | O_NOFOLLOW,
  append: O_WRONLY | O_APPEND | O_NOFOLLOW,
  /** Append, making the file when there is none (a journal of its own, never someone's link). */
  appendOrCreate: O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW,
  create: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
} as const;

/**
 * Writes `text` (or its pieces, in order) so that a reader sees either the old file or the new one,
 * never half of one.
 */
export async function writeFileAtomic(path: string, text: string | Iterable<string>): Promise<void> {
  const temporary = temporaryName(path);
  const handle = await open(temporary, OPEN.create, 0o600);
  try {
    if (typeof text === 'string') await handle.writeFile(text);
    else for (const piece of text) await writeAll(handle, piece);
    await handle.sync();
    await handle.close();
    await rename(temporary, path);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Writes `value` as JSON, atomically (see `writeFileAtomic`). */
export function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  return writeFileAtomic(path, JSON.stringify(value, null, 1));
}

/**
 * The JSON in `path` (never read through a link), or undefined when there is no such file. A file
 * that is not JSON was cut short or edited: `STATE_DAMAGED`, naming it and `remedy`.
 */
export async function readJsonFile(path: string, remedy: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, { encoding: 'utf8', flag: OPEN.read });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new StateDamagedError(`${path} is a symbolic link, not a file this program wrote; ${remedy}`, path);
    throw error;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new StateDamagedError(`${path} is not valid JSON (cut short or edited); ${remedy}`, path);
  }
}

export async function removeIfPresent(path: string): Promise<void> {
  await rm(path, { force: true });
}

export async function fileSize(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The SHA-256 of the first `bytes` bytes of `path` as a running hash, to go on hashing what follows. */
export async function hashPrefix(path: string, bytes: number): Promise<Hash> {
  const hash = createHash('sha256');
  if (bytes === 0) return hash;
  const handle = await open(path, OPEN.read);
  try {
    for await (const chunk of createReadStream('', { fd: handle, autoClose: false, start: 0, end: bytes - 1 })) hash.update(chunk as Buffer);
  } finally {
    await handle.close();
  }
  return hash;
}

/**
 * How long a background flush waits after the one before it. A flush a page cost the walk a tenth
 * of a millisecond of its own thread each (the call, its promise), where one every 50 ms leaves a
 * power loss the same few pages to buy again.
 */
const FLUSH_EVERY_MS = 50;

/**
 * Flushes a file to the disk behind its writes, off the path of whoever wrote: one flush at a time,
 * each covering everything written before it started, the next started `FLUSH_EVERY_MS` after it
 * ends. Progress is a count that only grows (bytes, lines); `flush` waits (at once) until what was
 * written when it was called is flushed. A failed flush (a full disk, an I/O error) is kept, for the
 * writer to throw on its next write.
 */
export class FlushBehind {
  #written = 0;
  #flushed = 0;
  #flushing: Promise<void> | undefined;
  #waiting: NodeJS.Timeout | undefined;
  #lastEnded = -Infinity;
  failure: Error | undefined;

  /** `sync` flushes the file as it is now (`datasync` on its current handle). */
  constructor(
    private readonly sync: () => Promise<void>,
    written = 0,
  ) {
    this.#written = this.#flushed = written;
  }

  /** Everything up to `through` is written: flushes it in the background. */
  wrote(through: number): void {
    this.#written = through;
    this.#later();
  }

  /** Resolves once everything written so far is flushed; throws what a flush met. */
  async flush(): Promise<void> {
    const through = this.#written;
    while (this.#flushed < through && this.failure === undefined) {
      this.#start();
      await this.#flushing;
    }
    if (this.failure !== undefined) throw this.failure;
  }

  /** Starts a flush once `FLUSH_EVERY_MS` have passed since the last one ended. */
  #later(): void {
    if (this.#waiting !== undefined || this.#flushing !== undefined) return;
    const wait = this.#lastEnded + FLUSH_EVERY_MS - performance.now();
    if (wait <= 0) return this.#start();
    this.#waiting = setTimeout(() => {
      this.#waiting = undefined;
      this.#start();
    }, wait);
    // A flush still to come must not keep a finished program alive: `flush` is what waits for one.
    this.#waiting.unref();
  }

  /** Resolves once no flush is under way (before the file's handle is closed or replaced). */
  async idle(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
  }

  #start(): void {
    if (this.#flushing !== undefined || this.#flushed >= this.#written || this.failure !== undefined) return;
    clearTimeout(this.#waiting);
    this.#waiting = undefined;
    const through = this.#written;
    this.#flushing = this.sync()
      .then(
        () => {
          this.#flushed = Math.max(this.#flushed, through);
        },
        (error: unknown) => {
          this.failure = error instanceof Error ? error : new Error(String(error));
        },
      )
      .finally(() => {
        this.#flushing = undefined;
        this.#lastEnded = performance.now();
        this.#later();
      });
  }
}

/**
 * Writes all of `buffer` to `fd` synchronously (at `position`, or at the end of a file opened to
 * append), into the operating system's cache: microseconds, where a write through the thread pool
 * costs a turn of the event loop and a tenth of a millisecond of this thread.
 */
export function writeWhole(fd: number, buffer: Buffer, position?: number): void {
  let written = 0;
  while (written < buffer.length) {
    written += writeSync(fd, buffer, written, buffer.length - written, position === undefined ? null : position + written);
  }
}

/**
 * Writes all of `text` through `handle`, at its end when it was opened to append. A write may take
 * only part of what it is given (a disk that fills up takes what fits, then refuses the next);
 * without the loop the rest would be lost and a later write would join a line cut short.
 */
export async function writeAll(handle: FileHandle, text: string): Promise<void> {
  const buffer = Buffer.from(text, 'utf8');
  let written = 0;
  while (written < buffer.length) written += (await handle.write(buffer, written, buffer.length - written)).bytesWritten;
}

/** What `Spool.appendPage` did to a page on its way to the file. */
export type AppendedPage = Omit<EncodedPage, 'bytes'>;

/** What the checkpoint records about the spool at each save, and checks on resume. */
export interface SpoolMark {
  bytes: number;
  /** SHA-256 (hex) of those bytes. */
  sha256: string;
}

/**
 * An append-only NDJSON file whose length only grows by whole pages. A page is written before
 * `appendPage` returns (the operating system holds it: a killed process loses nothing) and flushed
 * to the disk behind, one flush for every page written meanwhile; `flush` waits for that. A machine
 * that loses power may lose the pages not yet flushed: the journal that vouched for them is then
 * ahead of the spool, and `loadState` rolls it back to the last page the spool holds.
 */
export class Spool {
  readonly #flusher: FlushBehind;
  readonly #encoder = new PageEncoder();

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly hash: Hash,
    /** Bytes of whole pages written. */
    public bytes: number,
  ) {
    this.#flusher = new FlushBehind(() => handle.datasync().catch((error: unknown) => Promise.reject(naming(error, path))), bytes);
  }

  /**
   * A new, empty spool at `path`. Whatever is there was left by a run with no checkpoint (or is
   * someone else's link): it vouches for nothing, so it is unlinked, never opened.
   */
  static async create(path: string): Promise<Spool> {
    await unlink(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    return new Spool(path, await open(path, OPEN.create, 0o666), createHash('sha256'), 0);
  }

  /**
   * Reopens the spool of an interrupted export, checks that its first `mark.bytes` bytes are the ones
   * the checkpoint vouched for, and cuts off anything after them.
   */
  static async reopen(path: string, mark: SpoolMark): Promise<Spool> {
    if (mark.bytes === 0) return Spool.create(path);
    let handle: FileHandle;
    try {
      handle = await open(path, OPEN.update);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw damaged(path, 'is missing');
      if (code === 'ELOOP') throw damaged(path, 'is a symbolic link, not a spool this program wrote');
      throw error;
    }
    try {
      const { size } = await handle.stat();
      if (size < mark.bytes) throw damaged(path, `is shorter (${size} bytes) than its checkpoint says (${mark.bytes})`);
      const hash = await hashPrefix(path, mark.bytes);
      if (hash.copy().digest('hex') !== mark.sha256) throw damaged(path, 'does not hold the records its checkpoint vouches for');
      await handle.truncate(mark.bytes);
      return new Spool(path, handle, hash, mark.bytes);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  mark(): SpoolMark {
    return { bytes: this.bytes, sha256: this.hash.copy().digest('hex') };
  }

  /**
   * Whether the spool's name still leads to the file this run writes. Writes to a file whose folder
   * was removed still succeed (into a file nobody can find), so only this tells that it is gone.
   */
  isInPlace(): boolean {
    const named = statSync(this.path, { throwIfNoEntry: false });
    if (named === undefined) return false;
    const open = fstatSync(this.handle.fd);
    return named.ino === open.ino && named.dev === open.dev;
  }

  /**
   * Appends one page of records, written (not yet flushed) when it resolves; a failed write is cut
   * off again. `scrub` takes the API key out of the page's text, in case a service echoed it into
   * a record: staged state never holds it (see `PageEncoder`).
   */
  async appendPage(records: readonly unknown[], scrub: (text: string) => string = (text) => text): Promise<AppendedPage> {
    if (this.#flusher.failure !== undefined) throw this.#flusher.failure;
    if (records.length === 0) return { repaired: 0, scrubbed: false };
    const { bytes, repaired, scrubbed } = this.#encoder.encode(records, scrub);
    try {
      // One synchronous write into the operating system's cache: a page takes tens of microseconds
      // there, where a write through the thread pool costs a round trip of the event loop.
      writeWhole(this.handle.fd, bytes, this.bytes);
    } catch (error) {
      // A full disk may have taken half the page: the spool must stay whole pages.
      await this.handle.truncate(this.bytes).catch(() => undefined);
      throw naming(error, this.path);
    }
    this.hash.update(bytes);
    this.bytes += bytes.length;
    this.#flusher.wrote(this.bytes);
    return { repaired, scrubbed };
  }

  /** Resolves once every page appended so far is flushed to the disk; throws what a flush met. */
  flush(): Promise<void> {
    return this.#flusher.flush();
  }

  /** Flushes what was appended and closes the file. */
  async close(): Promise<void> {
    try {
      await this.#flusher.flush();
    } finally {
      await this.#flusher.idle();
      await this.handle.close();
    }
  }
}

/**
 * For each of `marks`, whether the file at `path` begins with the bytes it vouches for (its length
 * and SHA-256), read once from the start. False for every mark when there is no file.
 */
export async function holdsMarks(path: string, marks: readonly SpoolMark[]): Promise<boolean[]> {
  const size = await fileSize(path);
  const held = marks.map(() => false);
  if (size === undefined) return held;
  const wanted = [...new Set(marks.map((mark) => mark.bytes).filter((bytes) => bytes <= size))].sort((a, b) => a - b);
  const digests = new Map<number, string>();
  const hash = createHash('sha256');
  let position = 0;
  const reach = (bytes: number): void => {
    if (bytes === position) digests.set(bytes, hash.copy().digest('hex'));
  };
  reach(0);
  const last = wanted.at(-1) ?? 0;
  if (last > 0) {
    const handle = await open(path, OPEN.read);
    try {
      for await (const chunk of createReadStream('', { fd: handle, autoClose: false, start: 0, end: last - 1 }) as AsyncIterable<Buffer>) {
        let offset = 0;
        for (const bytes of wanted) {
          if (bytes <= position || bytes > position + chunk.length - offset) continue;
          hash.update(chunk.subarray(offset, offset + bytes - position));
          offset += bytes - position;
          position = bytes;
          reach(bytes);
        }
        hash.update(chunk.subarray(offset));
        position += chunk.length - offset;
      }
    } finally {
      await handle.close();
    }
  }
  for (const [index, mark] of marks.entries()) held[index] = digests.get(mark.bytes) === mark.sha256;
  return held;
}

/**
 * The byte offset right after the first `lines` lines of `path` (a spool: one record a line, as JSON
 * escapes every newline inside a record); STATE_DAMAGED when it holds fewer.
 */
export async function lineEnd(path: string, lines: number): Promise<number> {
  if (lines === 0) return 0;
  let seen = 0;
  let offset = 0;
  const handle = await open(path, OPEN.read);
  try {
    for await (const chunk of createReadStream('', { fd: handle, autoClose: false }) as AsyncIterable<Buffer>) {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) if (++seen === lines) return offset + at + 1;
      offset += chunk.length;
    }
  } finally {
    await handle.close();
  }
  throw damaged(path, `holds ${seen} records, fewer than the ${lines} its checkpoint vouches for`);
}

/**
 * Copies bytes `from` to `to` of the spool at `path` into a new spool at `target` (replacing one a
 * killed run left there), flushed; returns what the checkpoint vouches for it by.
 */
export async function copySpoolPart(path: string, from: number, to: number, target: string): Promise<SpoolMark> {
  await removeIfPresent(target);
  const hash = createHash('sha256');
  const output = await open(target, OPEN.create, 0o666);
  try {
    if (to > from) {
      const input = await open(path, OPEN.read);
      try {
        for await (const chunk of createReadStream('', { fd: input, autoClose: false, start: from, end: to - 1 }) as AsyncIterable<Buffer>) {
          hash.update(chunk);
          await output.write(chunk);
        }
      } finally {
        await input.close();
      }
    }
    await output.sync();
  } finally {
    await output.close();
  }
  return { bytes: Math.max(0, to - from), sha256: hash.digest('hex') };
}

/** How many records (lines) the first `bytes` bytes of `path` hold (a spool: whole lines only). */
export async function linesIn(path: string, bytes: number): Promise<number> {
  if (bytes === 0) return 0;
  let lines = 0;
  const handle = await open(path, OPEN.read);
  try {
    for await (const chunk of createReadStream('', { fd: handle, autoClose: false, start: 0, end: bytes - 1 }) as AsyncIterable<Buffer>) {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    }
  } finally {
    await handle.close();
  }
  return lines;
}

/**
 * Checks that the spool at `path`, when there is one, begins with the bytes `mark` vouches for: a run
 * that only has its publishing left must not publish a spool cut short or changed since.
 */
export async function checkSpool(path: string, mark: SpoolMark): Promise<void> {
  if ((await fileSize(path)) === undefined) return;
  const [held] = await holdsMarks(path, [mark]);
  if (!held) throw damaged(path, `does not hold the ${mark.bytes} bytes of records its checkpoint vouches for`);
}

function damaged(path: string, reason: string): StateDamagedError {
  return new StateDamagedError(`${path} ${reason}`, path);
}

/** Whether process `pid` of this host still runs: what a lock's owner is checked by. */
export function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
