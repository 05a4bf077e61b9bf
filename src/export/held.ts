/**
 * Pages a walk bought ahead of its turn (page concurrency), staged as they arrive. A page the
 * service answered must never be bought again, but the walk reads pages in its own order, so a page
 * that arrived early waits in memory until the walk reaches it; a kill in that time would lose it.
 * Each one is therefore appended here as it arrives (written before the next request; flushed to
 * the disk behind, like the spool), and a resumed walk reads it from here instead of buying it
 * (`HeldPages`). Lines carry a SHA-256 of their content: an edited line is refused, a last line cut
 * short by a kill is dropped (that page is bought again).
 */
import { createHash } from 'node:crypto';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import type { RequestGate } from '../control.ts';
import { StateDamagedError } from '../errors.ts';
import { parseExact, stringifyExact } from '../exact-json.ts';
import type { HeldPages } from '../page-reader.ts';
import type { Query } from '../pagination/index.ts';
import { FlushBehind, OPEN, writeAll } from './durable.ts';

interface Line {
  walk: string;
  query: Query;
  body: unknown;
}

export class HeldPageFile implements RequestGate {
  /** Bodies staged by earlier runs and not yet read, by walk, then by query. */
  readonly #staged = new Map<string, Map<string, unknown>>();
  #handle: FileHandle | undefined;
  /**
   * Lines waiting for the next write. Pages that arrive while a write is under way go out together in
   * the next one, one flush for all: a flush per page falls behind 16 pages in flight (30 or more
   * answered pages waited in memory), and a kill lost them all.
   */
  #queue: string[] = [];
  #writing: Promise<void> = Promise.resolve();
  #failure: Error | undefined;
  #lines = 0;
  readonly #flusher = new FlushBehind(async () => this.#handle?.datasync());

  private constructor(readonly path: string) {}

  /** The pages staged at `path` (none when there is no file), and appends from here on. */
  static async open(path: string, remedy: string): Promise<HeldPageFile> {
    const file = new HeldPageFile(path);
    let bytes: Buffer;
    try {
      bytes = await readFile(path, { flag: OPEN.read });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return file;
      if (code === 'ELOOP') throw new StateDamagedError(`${path} is a symbolic link, not a file this program wrote; ${remedy}`, path);
      throw error;
    }
    // Only the last line can be cut short (by a kill, or a full disk); it ends without a newline. It
    // is cut off, or the lines appended after it would join it and fail to verify on the next open.
    const whole = bytes.lastIndexOf(0x0a) + 1;
    if (whole < bytes.length) await cutTo(path, whole);
    const lines = bytes.subarray(0, whole).toString('utf8').split('\n');
    lines.pop();
    for (const [index, raw] of lines.entries()) {
      const line = parseLine(raw);
      if (line === undefined) throw new StateDamagedError(`${path} line ${index + 1} does not verify (edited or damaged); ${remedy}`, path);
      let walk = file.#staged.get(line.walk);
      if (walk === undefined) file.#staged.set(line.walk, (walk = new Map<string, unknown>()));
      walk.set(queryKey(line.query), line.body);
    }
    return file;
  }

  /** The held pages of one walk (`walkName`), for its stream; `scrub` takes the API key out of what is staged. */
  forWalk(walk: string, scrub: (text: string) => string): HeldPages {
    const staged = this.#staged.get(walk);
    return {
      take: (query) => {
        if (staged === undefined) return undefined;
        const key = queryKey(query);
        const body = staged.get(key);
        staged.delete(key);
        return body;
      },
      hold: (query, body) => this.#append({ walk, query, body }, scrub),
    };
  }

  /**
   * A gate before each request of the export's walks: it waits until every page bought ahead so far
   * is written. The page reader frees a request's place as its answer arrives, so without it a walk
   * would send new requests while answered pages still waited in memory, and a kill would lose both.
   */
  async acquire(): Promise<boolean> {
    await this.#writing;
    return true;
  }

  /** Waits for every page handed to `hold` to be flushed to the disk; throws what failed (a full disk). */
  async flush(): Promise<void> {
    await this.#writing;
    if (this.#failure !== undefined) throw this.#failure;
    await this.#flusher.flush();
  }

  async close(): Promise<void> {
    await this.#writing;
    await this.#flusher.flush().catch(() => undefined);
    await this.#flusher.idle();
    await this.#handle?.close();
    this.#handle = undefined;
  }

  #append(line: Line, scrub: (text: string) => string): void {
    const content = scrub(stringifyExact(line)!);
    this.#queue.push(`${content.slice(0, -1)},"sha256":"${digestOf(content)}"}
`);
    // A write is already waiting to take the queue.
    if (this.#queue.length > 1) return;
    this.#writing = this.#writing.then(async () => {
      const lines = this.#queue.splice(0);
      if (this.#failure !== undefined) return;
      try {
        const handle = (this.#handle ??= await open(this.path, OPEN.appendOrCreate, 0o600));
        await writeAll(handle, lines.join(''));
        this.#lines += lines.length;
        this.#flusher.wrote(this.#lines);
      } catch (error) {
        this.#failure = error instanceof Error ? error : new Error(String(error));
      }
    });
  }
}

async function cutTo(path: string, bytes: number): Promise<void> {
  const handle = await open(path, OPEN.update);
  try {
    await handle.truncate(bytes);
  } finally {
    await handle.close();
  }
}

function parseLine(raw: string): Line | undefined {
  try {
    const { sha256, ...line } = parseExact(raw) as Line & { sha256?: unknown };
    if (typeof line.walk !== 'string' || typeof line.query !== 'object' || line.query === null) return undefined;
    return sha256 === digestOf(stringifyExact(line)!) ? line : undefined;
  } catch {
    return undefined;
  }
}

function digestOf(content: string): string {
  return createHash('sha256').update(content).digest('hex');
}

/** The same query in any key order is the same page. */
function queryKey(query: Query): string {
  return JSON.stringify(Object.entries(query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
