/**
 * The one seam between a dataset and where its bytes live. The dataset code asks a `Storage` for
 * whole objects by name and never learns whether they are files in a folder (`local.ts`) or objects
 * in a bucket (`s3.ts`); `openStorage` (`open.ts`) picks the implementation from the location.
 *
 * It is deliberately small, because an object store offers little more: no append, no rename, no
 * folders. What a dataset does with a file today maps onto it like this:
 *
 * - write a file under a temporary name, then rename it over the target → `write(name, body)`: the
 *   object is replaced whole, and a reader sees the old bytes or the new ones, never a mix;
 * - read a file, or learn it is missing → `read(name)` (undefined when missing); `stat` it →
 *   `exists(name)`;
 * - `readdir` of a folder tree → `list(prefix)`: every name that begins with `prefix`, at any
 *   depth, in byte order of the name;
 * - `unlink` → `remove(name)` (removing what is missing is no error);
 * - a lock file or lock folder → `lock(name, { leaseMs })`: a lease that runs out unless renewed, so
 *   a holder killed with it frees it by itself;
 * - a file hard-linked into place, which fails when the name exists → `create(name, body)`; a file's
 *   inode and times, to tell whether it was replaced → `version(name)`.
 *
 * Names are `/`-joined relative paths under the location (`names.ts` says which are allowed).
 */

/** One stored object, as `list` gives it. */
export interface StoredObject {
  /** Its name under the location (`orders/month=2024-01/part-b0.parquet`). */
  readonly name: string;
  /** Its size in bytes. */
  readonly size: number;
  /** The store's version tag of its content (S3's ETag); undefined on a local folder. */
  readonly etag?: string;
  /**
   * When it was last written, in Unix ms (a file's mtime; S3's `LastModified`): what a publish stamps
   * the rows of a part an older version wrote without a fetch time with (`olderStamp`).
   */
  readonly modifiedMs?: number;
}

/** A local file holding a stored object's bytes (`Storage.download`), for readers that want a file. */
export interface LocalCopy {
  /** The file: on a local store the object's own file, else a download in `Storage.scratch`. */
  readonly path: string;
  /** Drops the file if it is a download (the object's own file is left be). */
  discard(): Promise<void>;
}

/** The end of a stored object (`Storage.readTail`): what a footer check reads instead of the whole object. */
export interface ObjectTail {
  /** The object's last bytes: as many as asked for, or all of it when it is shorter. */
  readonly bytes: Uint8Array;
  /** The object's whole size in bytes. */
  readonly size: number;
}

/** How a lock is taken (`Storage.lock`). */
export interface LockOptions {
  /**
   * How long the lease lasts unless renewed, in milliseconds. Renew well within it (every third
   * of it, say): a lease that ran out may be taken over by another writer at any moment.
   */
  readonly leaseMs: number;
  /** Who holds it, shown to whoever finds it held; the host and pid by default. Never a secret. */
  readonly holder?: string;
}

/** A lock held as a lease (`Storage.lock`). */
export interface Lease {
  /** The lock's name. */
  readonly name: string;
  /**
   * Extends the lease by its `leaseMs` from now. Resolves false when the lock is no longer this
   * holder's (its lease ran out and another took it over): the holder must stop what it guarded.
   */
  renew(): Promise<boolean>;
  /** Lets the lock go, if it is still this holder's (a lock taken over meanwhile is left to its new holder). */
  release(): Promise<void>;
}

/**
 * The kinds of request a store counts. On S3 each is one billed request; on a local folder the
 * same operations are counted by the same kinds, so a test or the bench can state "N PUTs and M
 * GETs a page" once for both. `MULTIPART` counts every request of a multipart upload (create, each
 * part, complete, abort); a whole `PUT` is one.
 */
export type RequestKind = 'GET' | 'PUT' | 'LIST' | 'DELETE' | 'HEAD' | 'MULTIPART';

/** Requests made by kind since the store was opened (`Storage.requests`). */
export type RequestCounts = Readonly<Record<RequestKind, number>>;

/** A dataset's store: whole objects by name, and leases. */
export interface Storage {
  /** The location as a user writes it (`s3://bucket/prefix` or the folder): for messages, never a credential. */
  readonly location: string;
  /**
   * The folder whose files are the objects, on a local store; undefined on a bucket. The one thing
   * the dataset code asks about where its bytes live, for what only files in place allow: a writer
   * stages in the dataset's own folder and keeps a pid file there, and a message names an object
   * by its path.
   */
  readonly folder: string | undefined;
  /**
   * Every stored object whose name begins with `prefix` (`''`: all), at any depth, in byte order of
   * the name, a page of the store's listing at a time. The store's own names (`names.ts`) are left out.
   */
  list(prefix: string): AsyncIterable<StoredObject>;
  /** The object's bytes, or undefined when there is none by that name. */
  read(name: string): Promise<Uint8Array | undefined>;
  /** Whether there is an object by that name: one `HEAD`, for what is polled (a waiting commit) or large. */
  exists(name: string): Promise<boolean>;
  /**
   * Stores `body` as the object `name`, replacing any: a reader sees the old object or the new one,
   * never a part of either. When this resolves the object is durable (fsynced; acknowledged by S3).
   */
  write(name: string, body: Uint8Array): Promise<void>;
  /** Removes the object `name`; a name with no object is no error. */
  remove(name: string): Promise<void>;
  /**
   * Takes the lock `name` if nobody holds it or its lease ran out: the lease, or undefined when
   * another holds it. Of any number of takers at once, at most one gets it, also when they race
   * for the same lease that ran out. The lock's state is the store's own: `list` does not show it.
   */
  lock(name: string, options: LockOptions): Promise<Lease | undefined>;
  /** Requests made so far, by kind. */
  readonly requests: RequestCounts;
  /** Lets the store's connections go. */
  close(): Promise<void>;
  /**
   * Stores `body` as the object `name` only if there is none (a settings object that binds a
   * dataset once): its version tag (`version`), or undefined when an object by that name exists.
   * Of any number of creators at once, exactly one gets a version, on a store that honours
   * conditional writes (`checkConditionalWrites`); one that ignores them lets every creator
   * replace the object, so a caller there must create under a lock of its own.
   */
  create(name: string, body: Uint8Array): Promise<string | undefined>;
  /**
   * The object's version tag, which changes whenever the object is replaced (S3's ETag; on a local
   * folder, the file's inode, modification time and size), or undefined when there is none by that
   * name. One `HEAD`: how a reader learns whether an object it read before was replaced since.
   */
  version(name: string): Promise<string | undefined>;
  /**
   * Resolves when `create` and `lock` hold against other writers, because the store honours
   * conditional writes (a local folder always does; an S3 store is probed once, or not again when
   * it was opened with `locks`); else refuses with `ConditionalWritesError`, naming the Redis locks
   * that do not need them.
   */
  checkConditionalWrites(): Promise<void>;
  /**
   * A local folder for files on their way into the store (`upload`) or out of it (`download`): on a
   * local store a folder of the store's own (`.scratch`, never listed) on its file system, so that an
   * upload is a rename; on S3 one under the system's temporary folder. Callers make their own
   * subfolder in it, and remove it.
   */
  readonly scratch: string;
  /**
   * Stores the local file `file` as the object `name`, whole, and takes the file (it is gone when
   * this resolves). Local: a rename when on the same file system (the file is not fsynced here: the
   * caller's journal says whether it is needed); S3: one PUT streamed from the file, or a multipart
   * upload from `multipartThreshold` bytes, a few parts in memory at a time.
   */
  upload(name: string, file: string): Promise<void>;
  /**
   * Gives the object `from` the name `to`, replacing any object there: a reader sees the old `to`
   * or the new one. Resolves false when there is no object `from` (a replay of a journal: it was
   * moved before). Local: a rename; S3: a server-side copy, then the removal of `from`.
   */
  move(from: string, to: string): Promise<boolean>;
  /** A local file holding the object `name` (see `LocalCopy`), or undefined when there is none. */
  download(name: string): Promise<LocalCopy | undefined>;
  /**
   * Removes every object of `names` (a name with no object is no error). A local store then removes
   * the folders this left empty, as a folder is no object: readers globbing it find no empty partition.
   */
  removeAll(names: readonly string[]): Promise<void>;
  /**
   * The last `bytes` bytes of the object `name` (all of it when shorter) and its whole size, or
   * undefined when there is none, so that a part's Parquet footer or last line is checked without
   * reading the part. `listedSize`, the size a listing showed, lets S3 ask for an explicit range:
   * one `GET` on every store (a second on S3 when the object changed since, or when a store ignores
   * the suffix range asked for without it).
   */
  readTail(name: string, bytes: number, listedSize?: number): Promise<ObjectTail | undefined>;
}
