/**
 * A store in a local folder (or one a fleet mounts). An object is a file at its name under the
 * folder. A write goes to a temporary name beside the target (a name `list` never shows), is
 * fsynced and renamed over it, so a reader sees the old file or the new one.
 *
 * A lock is a chain of generations, `.<name>.lease-<n>` beside where `<name>` would be, the highest
 * being the lease's state. Changing a lease from generation n (to take it over, renew or release
 * it) creates generation n + 1 exclusively (written whole, then hard-linked into place, which fails
 * when the name exists), so of two takers of the same lease that ran out, exactly one creates it.
 * Older generations are then removed; a taker that read one long ago might create a removed
 * generation again, so every taker checks afterwards that no higher generation exists, and gives up
 * when one does (a generation is removed only once a higher one exists, and the highest never is).
 */
import { constants, type BigIntStats } from 'node:fs';
import { copyFile, link, lstat, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { StorageError } from '../../errors.ts';
import { temporaryName } from '../../../sinks/temporary-name.ts';
import { checkLockOptions, defaultHolder, leaseBytes, leaseRanOut } from './lease.ts';
import { checkName, checkPrefix, isOwnName } from './names.ts';
import { RequestTally } from './tally.ts';
import { checkTailBytes } from './tail.ts';
import type { Lease, LocalCopy, LockOptions, ObjectTail, RequestCounts, Storage, StoredObject } from './types.ts';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = constants;

/** A released lease: run out since the epoch. */
const RELEASED = new TextEncoder().encode(JSON.stringify({ holder: '', expiresAt: 0 }));

/** Opens the folder `root` as a store, making it (and its parents) when missing. */
export async function openLocalStorage(root: string): Promise<LocalStorage> {
  try {
    await mkdir(root, { recursive: true });
    if (!(await stat(root)).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'failed';
    throw new StorageError(`${root} cannot hold a dataset: ${code === 'ENOTDIR' || code === 'EEXIST' ? 'it is not a folder' : `making it failed (${code})`}`, root, { cause: error });
  }
  return new LocalStorage(root);
}

/** A store in the local folder `root` (`openLocalStorage`). */
export class LocalStorage implements Storage {
  readonly #tally = new RequestTally();

  constructor(readonly location: string) {}

  get folder(): string {
    return this.location;
  }

  get requests(): RequestCounts {
    return this.#tally.counts;
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    checkPrefix(prefix, this.location);
    this.#tally.count('LIST');
    // Only the folder the prefix's complete segments name can hold its names.
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const found: StoredObject[] = [];
    await this.#walk(folder, prefix, found);
    found.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    yield* found;
  }

  async #walk(folder: string, prefix: string, found: StoredObject[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(join(this.location, folder), { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    // A folder's entries at once: a pass lists folders of dozens of parts, and each stat waits on the disk.
    await Promise.all(
      entries.map(async (entry) => {
        const name = `${folder}${entry.name}`;
        if (isOwnName(name)) return;
        if (entry.isDirectory()) {
          if (name.startsWith(prefix)) await this.#walk(`${name}/`, prefix, found);
        } else if (entry.isFile() && name.startsWith(prefix)) {
          const info = await stat(join(this.location, name)).catch(() => undefined);
          if (info !== undefined) found.push({ name, size: info.size, modifiedMs: info.mtimeMs });
        }
      }),
    );
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    checkName(name, this.location);
    this.#tally.count('GET');
    return readIfPresent(this.#path(name));
  }

  async exists(name: string): Promise<boolean> {
    checkName(name, this.location);
    this.#tally.count('HEAD');
    // A symbolic link is no object of ours, as `read` refuses one.
    const info = await lstat(this.#path(name)).catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw error;
    });
    return info?.isFile() === true;
  }

  async write(name: string, body: Uint8Array): Promise<void> {
    checkName(name, this.location);
    this.#tally.count('PUT');
    const path = this.#path(name);
    await mkdir(dirname(path), { recursive: true });
    const temporary = await writeDraft(path, body);
    try {
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async remove(name: string): Promise<void> {
    checkName(name, this.location);
    this.#tally.count('DELETE');
    await unlink(this.#path(name)).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
  }

  async lock(name: string, options: LockOptions): Promise<Lease | undefined> {
    checkName(name, this.location);
    checkLockOptions(options);
    const chain = new LeaseChain(this.#path(name), this.#tally);
    const current = await chain.current();
    if (current !== undefined && !leaseRanOut(current.state)) return undefined;
    const holder = options.holder ?? defaultHolder();
    let generation = (current?.generation ?? 0) + 1;
    if (!(await chain.advance(generation, leaseBytes(holder, options.leaseMs)))) return undefined;
    return {
      name,
      renew: async () => {
        if (!(await chain.advance(generation + 1, leaseBytes(holder, options.leaseMs)))) return false;
        generation += 1;
        return true;
      },
      release: async () => {
        if (await chain.advance(generation + 1, RELEASED)) generation += 1;
      },
    };
  }

  async close(): Promise<void> {}

  async create(name: string, body: Uint8Array): Promise<string | undefined> {
    checkName(name, this.location);
    this.#tally.count('PUT');
    const path = this.#path(name);
    await mkdir(dirname(path), { recursive: true });
    const draft = await writeDraft(path, body);
    try {
      // The draft's version is the object's once linked: the same inode, and a link leaves its modification time be.
      const version = versionOf(await lstat(draft, { bigint: true }));
      await link(draft, path);
      return version;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw error;
    } finally {
      await rm(draft, { force: true });
    }
  }

  async version(name: string): Promise<string | undefined> {
    checkName(name, this.location);
    this.#tally.count('HEAD');
    const info = await lstat(this.#path(name), { bigint: true }).catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw error;
    });
    return info?.isFile() === true ? versionOf(info) : undefined;
  }

  /** A local folder honours them: `create` and the leases' generations are hard links, which fail when the name exists. */
  async checkConditionalWrites(): Promise<void> {}

  #path(name: string): string {
    return join(this.location, ...name.split('/'));
  }

  get scratch(): string {
    return join(this.location, SCRATCH);
  }

  async upload(name: string, file: string): Promise<void> {
    checkName(name, this.location);
    this.#tally.count('PUT');
    const path = this.#path(name);
    try {
      await renameInto(file, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // A scratch folder on another file system (a mount inside the dataset's folder): a copy, fsynced, renamed into place.
      const draft = temporaryName(path);
      try {
        await copyFile(file, draft);
        const handle = await open(draft, O_WRONLY | O_NOFOLLOW);
        await handle.sync().finally(() => handle.close());
        await rename(draft, path);
      } catch (copying) {
        await rm(draft, { force: true });
        throw copying;
      }
      await rm(file, { force: true });
    }
  }

  async move(from: string, to: string): Promise<boolean> {
    checkName(from, this.location);
    checkName(to, this.location);
    this.#tally.count('PUT');
    this.#tally.count('DELETE');
    try {
      await renameInto(this.#path(from), this.#path(to));
      // The folder it left, when that was its last object: a folder is no object (as in `removeAll`).
      if (from.includes('/')) await rmdir(dirname(this.#path(from))).catch(() => undefined);
      return true;
    } catch (error) {
      if (isMissing(error) && !(await lstat(this.#path(from)).then(() => true, () => false))) return false;
      throw error;
    }
  }

  async download(name: string): Promise<LocalCopy | undefined> {
    checkName(name, this.location);
    this.#tally.count('GET');
    const path = this.#path(name);
    // The object's own file, not a copy: a local dataset reads its parts where they are, as before the storage seam.
    const info = await lstat(path).catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw error;
    });
    if (info === undefined) return undefined;
    if (!info.isFile()) throw Object.assign(new Error(`${path} is not a file`), { code: info.isSymbolicLink() ? 'ELOOP' : 'EISDIR' });
    return { path, discard: async () => {} };
  }

  async removeAll(names: readonly string[]): Promise<void> {
    for (const name of names) checkName(name, this.location);
    if (names.length === 0) return;
    const folders = new Set<string>();
    // The deepest folder holding every name: folders are removed up to it, never above.
    let common = folderOf(names[0]);
    for (const name of names) {
      this.#tally.count('DELETE');
      while (common !== '' && !name.startsWith(`${common}/`)) common = folderOf(common);
      for (let folder = folderOf(name); folder !== ''; folder = folderOf(folder)) folders.add(folder);
    }
    await Promise.all(
      names.map((name) =>
        unlink(this.#path(name)).catch((error: unknown) => {
          if (!isMissing(error)) throw error;
        }),
      ),
    );
    const within = [...folders].filter((folder) => folder === common || folder.startsWith(`${common}/`));
    // Deepest first, each when it is empty (rmdir refuses one that is not, and it is then let be).
    for (const folder of within.sort((a, b) => b.split('/').length - a.split('/').length)) await rmdir(this.#path(folder)).catch(() => undefined);
  }

  /** The file's own end: the size a listing showed is not needed, the file says it. */
  async readTail(name: string, bytes: number): Promise<ObjectTail | undefined> {
    checkName(name, this.location);
    checkTailBytes(bytes);
    this.#tally.count('GET');
    let handle;
    try {
      handle = await open(this.#path(name), O_RDONLY | O_NOFOLLOW);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      const tail = new Uint8Array(Math.min(bytes, size));
      for (let read = 0; read < tail.byteLength; ) {
        const { bytesRead } = await handle.read(tail, read, tail.byteLength - read, size - tail.byteLength + read);
        // Cut short meanwhile: what is there is the tail.
        if (bytesRead === 0) return { bytes: tail.subarray(0, read), size: size - tail.byteLength + read };
        read += bytesRead;
      }
      return { bytes: tail, size };
    } finally {
      await handle.close();
    }
  }
}

/** The folder of a name (`a/b` of `a/b/c`), `''` at the root. */
function folderOf(name: string): string {
  return name.slice(0, Math.max(0, name.lastIndexOf('/')));
}

/** The store's own folder for files on their way in or out (`Storage.scratch`); a `.`-name, so never listed. */
const SCRATCH = '.scratch';

/**
 * Renames `from` to `to`, making `to`'s folder first. A folder another writer found empty and removed
 * (`removeAll`) between the two is made again, once.
 */
async function renameInto(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    await mkdir(dirname(to), { recursive: true });
    try {
      await rename(from, to);
      return;
    } catch (error) {
      const sourceThere = await lstat(from).then(() => true, () => false);
      if (attempt > 0 || !isMissing(error) || !sourceThere) throw error;
    }
  }
}

/** The generations of one lock's lease (see the top of this file). */
class LeaseChain {
  readonly #folder: string;
  readonly #pattern: RegExp;
  readonly #base: string;

  constructor(
    path: string,
    private readonly tally: RequestTally,
  ) {
    this.#folder = dirname(path);
    this.#base = `.${path.slice(this.#folder.length + 1)}.lease-`;
    this.#pattern = new RegExp(`^${this.#base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)$`);
  }

  /** The highest generation and its state; undefined when the lock was never taken. */
  async current(): Promise<{ generation: number; state: Uint8Array } | undefined> {
    // A generation listed may be removed before it is read (a newer one exists by then): list again.
    for (;;) {
      const generation = await this.#highest();
      if (generation === undefined) return undefined;
      this.tally.count('GET');
      const state = await readIfPresent(this.#path(generation));
      if (state !== undefined) return { generation, state };
    }
  }

  /**
   * Creates `generation` holding `state`, which only one taker can; true when this one did and no
   * higher generation exists (else it was a removed one created again, and is dropped).
   */
  async advance(generation: number, state: Uint8Array): Promise<boolean> {
    this.tally.count('PUT');
    await mkdir(this.#folder, { recursive: true });
    const path = this.#path(generation);
    const draft = await writeDraft(path, state);
    try {
      await link(draft, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    } finally {
      await rm(draft, { force: true });
    }
    const generations = await this.#generations();
    if (generations.some((each) => each > generation)) {
      await rm(path, { force: true });
      return false;
    }
    await Promise.all(generations.filter((each) => each < generation).map((each) => rm(this.#path(each), { force: true })));
    return true;
  }

  async #highest(): Promise<number | undefined> {
    const generations = await this.#generations();
    return generations.length === 0 ? undefined : Math.max(...generations);
  }

  async #generations(): Promise<number[]> {
    this.tally.count('LIST');
    const names = await readdir(this.#folder).catch((error: unknown) => {
      if (isMissing(error)) return [] as string[];
      throw error;
    });
    return names.flatMap((name) => {
      const match = this.#pattern.exec(name);
      return match === null ? [] : [Number(match[1])];
    });
  }

  #path(generation: number): string {
    return join(this.#folder, `${this.#base}${generation}`);
  }
}

/**
 * A file's version tag: an object is only ever replaced by another file renamed over it (a new
 * inode) or created anew, so its inode, modification time (in nanoseconds) and size tell a new one.
 */
function versionOf(info: BigIntStats): string {
  return `${info.ino}-${info.mtimeNs}-${info.size}`;
}

/** Writes `body` to a fresh temporary name beside `path`, fsynced; resolves to that name. */
async function writeDraft(path: string, body: Uint8Array): Promise<string> {
  const draft = temporaryName(path);
  const handle = await open(draft, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
  try {
    await handle.writeFile(body);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(draft, { force: true });
    throw error;
  }
  await handle.close();
  return draft;
}

async function readIfPresent(path: string): Promise<Uint8Array | undefined> {
  try {
    return new Uint8Array(await readFile(path, { flag: O_RDONLY | O_NOFOLLOW }));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** ENOENT, or ENOTDIR where a parent of the name is a file: either way nothing is stored by that name. */
function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
