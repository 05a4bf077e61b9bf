/**
 * A writer's staging held on a dataset's store (docs/storage.md, "The staging log"). The engine
 * stages into local files as it always has (journal, spool, held pages: append-mostly files in a
 * working folder); this module mirrors them to the store as an ordered log of delta objects
 * (`<prefix><seq>.ndjson`), so that another machine, or this one with its working folder gone, can
 * rebuild them and go on where the staging stood. Each `sync` PUTs at most one object, holding for
 * each file what it gained since the last one: the bytes appended from an offset, or (a file
 * rewritten: a compacted journal, a spool cut back or replaced) its whole new content; it never reads
 * the store. It knows nothing of what the files mean, so the journal's, spool's and held pages'
 * rules stay where they are.
 *
 * The working folder keeps a small note of what the store holds (`.log.json`: the last object and
 * each file's mirrored size), so reopening where the staging was written costs one LIST and no GET;
 * bytes written past what the store holds were not vouched for there and are dropped (those pages
 * were in flight: they are bought again). A working folder that lacks the staging, or holds less than
 * the store's log, is rebuilt from the log (one LIST, a GET per object). Past `COMPACT_AFTER` objects
 * the log is replaced by one object of whole files, then the older objects go, so a rebuild stays
 * cheap; once there is such an object, only when the objects after it hold as many bytes as it does,
 * so a long walk's growing spool is not stored whole again every few pages (the bytes stored stay
 * within a few times the staging's).
 */
import { constants } from 'node:fs';
import { mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mapAtOnce } from '../at-once.ts';
import { StateDamagedError } from '../errors.ts';
import { objectPlace } from './objects.ts';
import type { Storage } from './storage/types.ts';

/** Objects after the last whole one before the log is replaced by one object of whole files. */
export const COMPACT_AFTER = 64;

/** What the store holds of one local file. */
interface Mirrored {
  size: number;
  /** The file's identity when it was mirrored: another one at its name was rewritten whole. */
  ino: number;
  dev: number;
}

/** The note in the working folder of what the store holds. */
interface LogNote {
  /** The last object of the log, or -1 for none. */
  seq: number;
  /** Objects since (and with) the last whole one. */
  since: number;
  /** Bytes of the last whole object (0 for none), and of the objects after it. */
  wholeBytes: number;
  addedBytes: number;
  files: Record<string, Mirrored>;
}

/** One line of a log object after its head: a file's new bytes from `from` (cut there first), or its removal. */
type Change = { file: string; from: number; data: string } | { file: string; gone: true };

const NOTE = '.log.json';
const { O_RDONLY, O_NOFOLLOW } = constants;

/** One writer's staging files in a working folder, mirrored to its log on the store (see the top of this file). */
export class StagingLog {
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly storage: Storage,
    /** The log's objects are `<prefix><seq>.ndjson`. */
    readonly prefix: string,
    /** The local working folder holding the files. */
    readonly folder: string,
    /** The files mirrored, by name in `folder`. */
    readonly files: readonly string[],
    private note: LogNote,
  ) {}

  /**
   * The log of the staging at `folder`, its files made to hold what the store holds before anything
   * reads them: kept as they are when the folder's note matches the store's last object (bytes past
   * what it vouched for cut off), else rebuilt from the log.
   */
  static async open(storage: Storage, prefix: string, folder: string, files: readonly string[]): Promise<StagingLog> {
    const objects = await logObjects(storage, prefix);
    const last = objects.at(-1)?.seq ?? -1;
    const note = await readNote(folder);
    const log = new StagingLog(storage, prefix, folder, files, note ?? { seq: -1, since: 0, wholeBytes: 0, addedBytes: 0, files: {} });
    if (note === undefined || note.seq > last || !(await log.#trimToNote())) await log.#rebuild(objects);
    else if (note.seq < last) await log.#catchUp(objects);
    return log;
  }

  /**
   * Takes what others added to the log since this one's last object (a publish pass replaces a
   * writer's staging through its log: `replaceStaging`): one LIST, and a GET for each new object.
   */
  catchUp(): Promise<void> {
    return this.#serially(async () => this.#catchUp(await logObjects(this.storage, this.prefix)));
  }

  /** Applies the objects after the note's on top of the files (rebuilt from a whole one among them). */
  async #catchUp(objects: readonly LogObject[]): Promise<void> {
    const newer = objects.filter((each) => each.seq > this.note.seq);
    if (newer.length === 0) return;
    const read = await readAll(newer, (name) => this.#readObject(name));
    if (read.some((each) => each.whole)) return this.#rebuild(objects);
    for (const { changes } of read) for (const change of changes) await this.#apply(change);
    const added = read.reduce((sum, each) => sum + each.bytes, 0);
    await this.#noteFiles(objects.at(-1)!.seq, { since: this.note.since + read.length, wholeBytes: this.note.wholeBytes, addedBytes: this.note.addedBytes + added });
  }

  /**
   * Stores what the files gained since the last object, as one object (none when nothing changed).
   * Calls run one at a time; each resolves once everything written before it is on the store.
   */
  sync(): Promise<void> {
    return this.#serially(() => this.#sync());
  }

  /** Removes every object of the log: the staging was dropped (its local files go with their folder). */
  clear(): Promise<void> {
    return this.#serially(async () => {
      await removeStagingLog(this.storage, this.prefix);
      this.note = { seq: -1, since: 0, wholeBytes: 0, addedBytes: 0, files: {} };
    });
  }

  /** Runs `task` after every call before it: the note and the log's order are this object's alone. */
  #serially(task: () => Promise<void>): Promise<void> {
    const run = this.#chain.then(task);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #sync(): Promise<void> {
    const changes: Change[] = [];
    const files: Record<string, Mirrored> = {};
    for (const file of this.files) {
      const mirrored = this.note.files[file];
      const now = await stat(join(this.folder, file)).catch(missing);
      if (now === undefined) {
        if (mirrored !== undefined) changes.push({ file, gone: true });
        continue;
      }
      const same = mirrored !== undefined && mirrored.ino === now.ino && mirrored.dev === now.dev;
      const from = same ? Math.min(mirrored.size, now.size) : 0;
      // A new file with nothing in it tells the store nothing it lacks.
      if (same ? now.size === mirrored.size : mirrored === undefined && now.size === 0) {
        if (mirrored !== undefined) files[file] = mirrored;
        continue;
      }
      const data = await readRange(join(this.folder, file), from, now.size);
      files[file] = { size: from + data.length, ino: now.ino, dev: now.dev };
      changes.push({ file, from, data: data.toString('base64') });
    }
    if (changes.length === 0) return;
    await this.#put(changes, false, files);
    if (this.note.since > COMPACT_AFTER && this.note.addedBytes >= this.note.wholeBytes) await this.#compact();
  }

  /** Replaces the log by one object of the files whole, as the store holds them, then drops the older objects. */
  async #compact(): Promise<void> {
    const older = await logObjects(this.storage, this.prefix);
    const changes: Change[] = [];
    for (const [file, mirrored] of Object.entries(this.note.files)) {
      const now = await stat(join(this.folder, file)).catch(missing);
      // Rewritten since it was stored: the next sync stores it, and compacts then.
      if (now === undefined || now.ino !== mirrored.ino || now.dev !== mirrored.dev) return;
      changes.push({ file, from: 0, data: (await readRange(join(this.folder, file), 0, mirrored.size)).toString('base64') });
    }
    await this.#put(changes, true, this.note.files);
    await this.storage.removeAll(older.map((each) => each.name));
  }

  async #put(changes: readonly Change[], whole: boolean, files: Record<string, Mirrored>): Promise<void> {
    const seq = this.note.seq + 1;
    const text = [JSON.stringify({ seq, whole }), ...changes.map((change) => JSON.stringify(change))].join('\n') + '\n';
    const body = new TextEncoder().encode(text);
    await this.storage.write(objectName(this.prefix, seq), body);
    const sizes = whole ? { wholeBytes: body.length, addedBytes: 0 } : { wholeBytes: this.note.wholeBytes, addedBytes: this.note.addedBytes + body.length };
    this.note = { seq, since: whole ? 1 : this.note.since + 1, ...sizes, files };
    await writeNote(this.folder, this.note);
  }

  /** Cuts each file back to what the store holds; false when one is shorter or another file (then the log is read). */
  async #trimToNote(): Promise<boolean> {
    for (const file of this.files) {
      const mirrored = this.note.files[file];
      const path = join(this.folder, file);
      const now = await stat(path).catch(missing);
      if (mirrored === undefined) {
        await rm(path, { force: true });
        continue;
      }
      if (now === undefined || now.ino !== mirrored.ino || now.dev !== mirrored.dev || now.size < mirrored.size) return false;
      if (now.size > mirrored.size) await cut(path, mirrored.size);
    }
    return true;
  }

  /** Makes the files anew from the log's objects, from its last whole one. */
  async #rebuild(objects: readonly LogObject[]): Promise<void> {
    await mkdir(this.folder, { recursive: true });
    for (const file of this.files) await rm(join(this.folder, file), { force: true });
    const read = await readAll(objects, (name) => this.#readObject(name));
    const start = Math.max(0, read.map((each) => each.whole).lastIndexOf(true));
    for (const { changes } of read.slice(start)) for (const change of changes) await this.#apply(change);
    const wholeBytes = read[start]?.whole === true ? read[start].bytes : 0;
    const addedBytes = read.slice(start).reduce((sum, each) => sum + each.bytes, 0) - wholeBytes;
    await this.#noteFiles(objects.at(-1)?.seq ?? -1, { since: read.length - start, wholeBytes, addedBytes });
  }

  /** Notes the files as they are now as what the store holds through object `seq`. */
  async #noteFiles(seq: number, counts: Pick<LogNote, 'since' | 'wholeBytes' | 'addedBytes'>): Promise<void> {
    const files: Record<string, Mirrored> = {};
    for (const file of this.files) {
      const now = await stat(join(this.folder, file)).catch(missing);
      if (now !== undefined) files[file] = { size: now.size, ino: now.ino, dev: now.dev };
    }
    this.note = { seq, ...counts, files };
    await writeNote(this.folder, this.note);
  }

  async #readObject(name: string): Promise<LogEntry> {
    const bytes = await this.storage.read(name);
    // Listed, then gone: a compaction of another holder's replaced it (none holds the writer's lock meanwhile).
    if (bytes === undefined) throw this.#damaged(name, 'went while it was read');
    try {
      const [head, ...lines] = new TextDecoder().decode(bytes).split('\n').filter((line) => line !== '');
      const { whole } = JSON.parse(head) as { whole?: unknown };
      return { whole: whole === true, changes: lines.map((line) => JSON.parse(line) as Change), bytes: bytes.length };
    } catch {
      throw this.#damaged(name, 'is not an object of a staging log');
    }
  }

  async #apply(change: Change): Promise<void> {
    // A rebuild of some of the files (another writer's spool, for a pass) passes over the others.
    if (!this.files.includes(change.file)) return;
    const path = join(this.folder, change.file);
    if ('gone' in change) return rm(path, { force: true });
    const size = (await stat(path).catch(missing))?.size ?? 0;
    if (change.from > size) throw this.#damaged(this.prefix, `adds to ${change.file} at byte ${change.from}, past its ${size} bytes`);
    const handle = await open(path, size === 0 && change.from === 0 ? 'w' : 'r+', 0o600);
    try {
      await handle.truncate(change.from);
      const data = Buffer.from(change.data, 'base64');
      if (data.length > 0) await handle.write(data, 0, data.length, change.from);
    } finally {
      await handle.close();
    }
  }

  #damaged(name: string, reason: string): StateDamagedError {
    const place = objectPlace(this.storage, name);
    return new StateDamagedError(`${place} ${reason}; restart the export (--restart) to discard the writer's staging`, place);
  }
}

/**
 * Replaces files of the staging whose log is at `prefix` as one object after its last (a publish
 * pass finishing a member: its journal then spool after the publish), each whole or gone (`null`).
 * One LIST and one PUT; replayed, it stores the same files again. The writer takes it with `catchUp`.
 */
export async function replaceStaging(storage: Storage, prefix: string, files: Readonly<Record<string, Uint8Array | null>>): Promise<void> {
  const last = (await logObjects(storage, prefix)).at(-1)?.seq ?? -1;
  const changes: Change[] = Object.entries(files).map(([file, bytes]) => (bytes === null ? { file, gone: true } : { file, from: 0, data: Buffer.from(bytes).toString('base64') }));
  const text = [JSON.stringify({ seq: last + 1, whole: false }), ...changes.map((change) => JSON.stringify(change))].join('\n') + '\n';
  await storage.write(objectName(prefix, last + 1), new TextEncoder().encode(text));
}

/**
 * Rebuilds `files` of the staging whose log is at `prefix` into `folder` (another writer's spool, for
 * a publish pass that takes its commit): one LIST, a GET per object from the last whole one.
 */
export async function rebuildStaging(storage: Storage, prefix: string, folder: string, files: readonly string[]): Promise<void> {
  await rm(join(folder, NOTE), { force: true });
  await StagingLog.open(storage, prefix, folder, files);
}

/** Removes the staging log at `prefix` (a writer's staging that goes): one LIST, then the removals. */
export async function removeStagingLog(storage: Storage, prefix: string): Promise<void> {
  await storage.removeAll((await logObjects(storage, prefix)).map((each) => each.name));
}

/** An object of the log as read: whether it holds the files whole, its changes, its size. */
interface LogEntry {
  whole: boolean;
  changes: Change[];
  bytes: number;
}

/** Reads `objects`, eight at a time, in their order. */
function readAll(objects: readonly LogObject[], read: (name: string) => Promise<LogEntry>): Promise<LogEntry[]> {
  return mapAtOnce(objects, 8, (object) => read(object.name));
}

interface LogObject {
  name: string;
  seq: number;
}

/** The log's objects in order: one listing. */
async function logObjects(storage: Storage, prefix: string): Promise<LogObject[]> {
  const objects: LogObject[] = [];
  for await (const { name } of storage.list(prefix)) {
    const match = /^(\d+)\.ndjson$/.exec(name.slice(prefix.length));
    if (match !== null) objects.push({ name, seq: Number(match[1]) });
  }
  return objects.sort((a, b) => a.seq - b.seq);
}

/** Zero-padded, so the store lists the log in order. */
function objectName(prefix: string, seq: number): string {
  return `${prefix}${String(seq).padStart(12, '0')}.ndjson`;
}

async function readNote(folder: string): Promise<LogNote | undefined> {
  try {
    const note = JSON.parse(await readFile(join(folder, NOTE), 'utf8')) as LogNote;
    const counts = [note.seq, note.since, note.wholeBytes, note.addedBytes];
    return counts.every((count) => typeof count === 'number') && typeof note.files === 'object' ? note : undefined;
  } catch {
    // No note, or one cut short: the log is read instead.
    return undefined;
  }
}

/** Not fsynced: a note lost or stale only costs reading the log again. */
async function writeNote(folder: string, note: LogNote): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, NOTE), JSON.stringify(note));
}

async function readRange(path: string, from: number, to: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, to - from));
  if (buffer.length === 0) return buffer;
  const handle = await open(path, O_RDONLY | O_NOFOLLOW);
  try {
    let read = 0;
    while (read < buffer.length) {
      const { bytesRead } = await handle.read(buffer, read, buffer.length - read, from + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  } finally {
    await handle.close();
  }
}

async function cut(path: string, size: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.truncate(size);
  } finally {
    await handle.close();
  }
}

function missing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}
