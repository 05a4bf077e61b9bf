/**
 * Which partitions may hold a key (docs/datasets.md "One row per record"): beside every bucket part, the
 * dataset keeps the sorted 32-bit hashes (`indexHash`) of the keys it holds, in
 * `_dataset/<op>/keys/<partition>/<part name>.keys` (4 bytes a row, little-endian), objects of the dataset's `Storage`. A part and its index are
 * written together and placed by the same journal, so an index is never behind its part. A publish
 * reads the indexes (not the parts) to find where an older version of one of its keys lives when the
 * record moved partition; only the parts whose index names one of its hashes are then read.
 */
import { randomUUID } from 'node:crypto';
// Only on the scratch folder, where an index is written before it goes to the store.
import { mkdir, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { join } from 'node:path';
import type { Storage } from './storage/types.ts';

/**
 * A key's hash in an index: 32-bit FNV-1a of its UTF-16 code units. Not the bucket's SHA-256
 * (`keyHash`): a part rewritten hashes every key it holds, and this is some twenty times cheaper; a
 * hash two keys share costs only a part read for nothing.
 */
export function indexHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let at = 0; at < key.length; at++) hash = Math.imul(hash ^ key.charCodeAt(at), 0x01000193);
  return hash >>> 0;
}

/**
 * Stores the index of a part's keys as the object `name` (staged, like the part: a journal puts it
 * in place), by way of a file in the local folder `scratch`: an upload, which on a local dataset is
 * a rename, as the index was written before the storage seam.
 */
export async function writeKeyIndex(storage: Storage, name: string, keys: Iterable<string>, scratch: string): Promise<void> {
  const hashes = new Uint32Array(new Set(Array.from(keys, indexHash))).sort();
  let bytes = new Uint8Array(hashes.buffer);
  if (endianness() !== 'LE') {
    const big = Buffer.alloc(hashes.length * 4);
    for (const [at, hash] of hashes.entries()) big.writeUInt32LE(hash, at * 4);
    bytes = big;
  }
  await mkdir(scratch, { recursive: true });
  const file = join(scratch, `${randomUUID()}${KEY_INDEX_EXTENSION}`);
  await writeFile(file, bytes);
  await storage.upload(name, file);
}

/** Whether the sorted `index` holds `hash`. */
function holds(index: Uint32Array, hash: number): boolean {
  let low = 0;
  let high = index.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = index[middle];
    if (at === hash) return true;
    if (at < hash) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

/** The index `name` holds; an empty one when it is gone (a part removed since it was listed). */
async function readKeyIndex(storage: Storage, name: string): Promise<Uint32Array> {
  const read = await storage.read(name);
  if (read === undefined) return new Uint32Array();
  const bytes = Buffer.from(read.buffer, read.byteOffset, read.byteLength);
  const count = bytes.length >>> 2;
  // A copy: the read buffer's offset need not be aligned for a view.
  if (endianness() === 'LE') return new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + count * 4));
  const hashes = new Uint32Array(count);
  for (let at = 0; at < count; at++) hashes[at] = bytes.readUInt32LE(at * 4);
  return hashes;
}

/** An index as read, and the stamp of the object it was read from (`IndexCache`). */
interface CachedIndex {
  stamp: string;
  index: Uint32Array;
}

/**
 * Indexes read before, by name: a pass looks at the indexes twice (when it forms, and again holding
 * its locks), and reads again only those the listing shows changed (another size, ETag or time).
 */
export type IndexCache = Map<string, CachedIndex>;

/** The key indexes under `prefix` (`DatasetNames.keyIndexes`, or a pass's `passKeys`), each with its partition and stamp: one listing. */
async function indexesUnder(storage: Storage, prefix: string): Promise<{ partition: string; name: string; stamp: string }[]> {
  const found: { partition: string; name: string; stamp: string }[] = [];
  for await (const { name, size, etag, modifiedMs } of storage.list(prefix)) {
    const rest = name.slice(prefix.length).split('/');
    if (rest.length === 2 && rest[1].endsWith(KEY_INDEX_EXTENSION)) found.push({ partition: rest[0], name, stamp: `${size}:${etag ?? modifiedMs ?? ''}` });
  }
  return found;
}

/**
 * Per partition of the indexes under `prefix` (`DatasetNames.keyIndexes`), the hashes of `hashes` its
 * parts' indexes hold. `skip(partition, hash)` leaves out a hash where it is expected (a key's own
 * partition, whose part the publish merges into anyway). An index in `cache` whose stamp is the same
 * is not read again.
 */
export async function partitionsHolding(
  storage: Storage,
  prefix: string,
  hashes: ReadonlySet<number>,
  skip: (partition: string, hash: number) => boolean,
  cache: IndexCache = new Map(),
): Promise<Map<string, Set<number>>> {
  const found = new Map<string, Set<number>>();
  if (hashes.size === 0) return found;
  for (const { partition, name, stamp } of await indexesUnder(storage, prefix)) {
    let index = cache.get(name)?.stamp === stamp ? cache.get(name)!.index : undefined;
    if (index === undefined) {
      index = await readKeyIndex(storage, name).catch(() => new Uint32Array());
      cache.set(name, { stamp, index });
    }
    for (const hash of hashes) {
      if (skip(partition, hash) || !holds(index, hash)) continue;
      let held = found.get(partition);
      if (held === undefined) found.set(partition, (held = new Set()));
      held.add(hash);
    }
  }
  return found;
}

/** Whether the indexes of two partitions name the same hash: a key that may be kept twice (`dataset compact` keeps it once). */
export async function indexesShareAKey(storage: Storage, prefix: string): Promise<boolean> {
  const seen = new Map<number, string>();
  for (const { partition, name } of await indexesUnder(storage, prefix)) {
    for (const hash of await readKeyIndex(storage, name)) {
      const first = seen.get(hash);
      if (first === undefined) seen.set(hash, partition);
      else if (first !== partition) return true;
    }
  }
  return false;
}

export const KEY_INDEX_EXTENSION = '.keys';
