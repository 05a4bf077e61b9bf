/**
 * Records that change partition between versions (docs/datasets.md "One row per record"): a post
 * rescheduled, a time that appears, disappears or stops being believable, or a key that appears
 * where a stand-in key (`_key`) was used. A pass finds, through the parts' key indexes
 * (`key-index.ts`), the partitions other than a key's own that may hold a version of it,
 * takes their locks with its own, and reads only the bucket parts there that would hold those keys.
 * Of all the versions of a key (in the dataset and in the pass) the one fetched later stays
 * (`fetchedLater`); every other goes in the pass's own journalled step.
 */
import type { OperationSpec } from '../operations/spec.ts';
import { readStoredPart, type DatasetFormat } from './parts.ts';
import { bucketFor, bucketPath, bucketsIn, fetchedLater, keyHash, type Layout } from './buckets.ts';
import { indexHash, KEY_INDEX_EXTENSION, partitionsHolding, writeKeyIndex, type IndexCache } from './key-index.ts';
import { heldNames } from './columns.ts';
import { dropKey, keyOfRow } from './keys.ts';
import type { DatasetPaths, Partitioning } from './store.ts';

/** What finding a key's versions goes by: the dataset as recorded (a pass's `PlanContext`). */
interface Dataset {
  op: OperationSpec;
  paths: DatasetPaths;
  format: DatasetFormat;
  partitioning: Partitioning;
  layout: Layout;
}

/** What a pass does besides merging its records into their own partitions' parts. */
export interface Moves {
  /** Incoming versions not kept (`dropKey`): a later version of the key lives in another partition. */
  dropped: Set<string>;
  /** Per partition, the keys (as its rows hold them) of older versions to remove from its parts. */
  removed: Map<string, Set<string>>;
  /** Keys whose older version in another partition (or under its stand-in key) this pass replaces: updated, not added. */
  moved: Set<string>;
}

export const NO_MOVES: Moves = { dropped: new Set(), removed: new Map(), moved: new Set() };

/** A version of a key: incoming with the pass, or held by a part. */
interface Version {
  partition: string;
  /** The key its row is kept under (a stand-in for a version from before its record had a key). */
  stored: string;
  row: Record<string, unknown>;
  incoming: boolean;
}

/** The keys of a pass's records, where they go, and the stand-in keys they replace. */
export class PassKeys {
  /** Per key, the partitions its incoming versions fall in. */
  readonly #targets = new Map<string, Set<string>>();
  /** A stand-in key → the key its record has now. */
  readonly #aliases = new Map<string, string>();
  /** The indexes `holding` read, for its next look (`IndexCache`). */
  readonly #indexes: IndexCache = new Map();

  note(key: string, partition: string, standIn: string | undefined): void {
    let targets = this.#targets.get(key);
    if (targets === undefined) this.#targets.set(key, (targets = new Set()));
    targets.add(partition);
    if (standIn !== undefined && standIn !== key) this.#aliases.set(standIn, key);
  }

  /**
   * The partitions whose key indexes (under the prefix `root`: the dataset's, or a pass's `writeTo`) may hold
   * one of these keys where its record no longer goes (a stand-in key, anywhere), each with the
   * hashes found there. Reads only the indexes.
   */
  holding(context: Dataset, root = context.paths.names.keyIndexes): Promise<Map<string, Set<number>>> {
    const hashes = new Set<number>();
    const targets = new Map<number, Set<string>>();
    const aliases = new Set<number>();
    for (const [key, partitions] of this.#targets) {
      const hash = indexHash(key);
      hashes.add(hash);
      const each = targets.get(hash);
      if (each === undefined) targets.set(hash, new Set(partitions));
      else for (const partition of partitions) each.add(partition);
    }
    for (const standIn of this.#aliases.keys()) {
      const hash = indexHash(standIn);
      hashes.add(hash);
      aliases.add(hash);
    }
    return partitionsHolding(context.paths.storage, root, hashes, (partition, hash) => !aliases.has(hash) && (targets.get(hash)?.has(partition) ?? false), this.#indexes);
  }

  /** Stores, per partition, the index of the keys the pass places there (under `root`, `DatasetNames.passKeys`): what `holding` reads of a pass at work. */
  async writeTo(paths: DatasetPaths, root: string, scratch: string): Promise<void> {
    const byPartition = new Map<string, string[]>();
    for (const [key, partitions] of this.#targets) {
      for (const partition of partitions) {
        const keys = byPartition.get(partition);
        if (keys === undefined) byPartition.set(partition, [key]);
        else keys.push(key);
      }
    }
    for (const [partition, keys] of byPartition) await writeKeyIndex(paths.storage, `${root}${partition}/pass${KEY_INDEX_EXTENSION}`, keys, scratch);
  }

  /**
   * What the pass does to keep each of its keys once: reads the versions in the `held` partitions
   * the indexes name and the pass's own versions of a key that falls in several partitions, and
   * keeps the one fetched later. The caller holds the locks of `held`.
   */
  async moves(context: Dataset, held: ReadonlySet<string>, incoming: (partition: string) => AsyncIterable<{ row: Record<string, unknown>; key: string }>): Promise<Moves> {
    const versions = new Map<string, Version[]>();
    const add = (key: string, version: Version) => {
      const list = versions.get(key);
      if (list === undefined) versions.set(key, [version]);
      else list.push(version);
    };
    for (const [partition, hashes] of await this.holding(context)) {
      if (held.has(partition)) await this.#held(context, partition, hashes, add);
    }
    // A key in several partitions of the pass itself (two commits, the record moved between them) is contested too.
    for (const [key, partitions] of this.#targets) if (partitions.size > 1 && !versions.has(key)) versions.set(key, []);
    if (versions.size === 0) return NO_MOVES;
    const partitions = new Set([...versions.keys()].flatMap((key) => [...(this.#targets.get(key) ?? [])]));
    for (const partition of [...partitions].sort()) {
      for await (const { row, key } of incoming(partition)) if (versions.has(key)) add(key, { partition, stored: key, row, incoming: true });
    }
    return decide(versions);
  }

  /** Adds the versions of the pass's keys that `partition`'s parts hold, reading only the parts whose buckets `hashes` name. */
  async #held(context: Dataset, partition: string, hashes: ReadonlySet<number>, add: (key: string, version: Version) => void): Promise<void> {
    const { paths, format, layout, partitioning, op } = context;
    const folder = paths.names.partition(partition, partitioning.column);
    const parts = await bucketsIn(paths.storage, folder, format);
    const wanted = new Map<string, Set<string>>();
    const look = (stored: string) => {
      if (!hashes.has(indexHash(stored))) return;
      const bucket = bucketFor(parts, keyHash(stored), layout.buckets);
      if (!parts.some((part) => part.bucket === bucket.bucket && part.of === bucket.of)) return;
      const path = bucketPath(folder, bucket, format);
      const keys = wanted.get(path) ?? new Set<string>();
      keys.add(stored);
      wanted.set(path, keys);
    };
    for (const [key, targets] of this.#targets) if (!targets.has(partition)) look(key);
    for (const standIn of this.#aliases.keys()) look(standIn);
    for (const [name, keys] of wanted) {
      for await (const row of readStoredPart(paths.storage, name, format, heldNames(partitioning))) {
        const stored = keyOfRow(op, row);
        if (stored === undefined || !keys.has(stored)) continue;
        add(this.#aliases.get(stored) ?? stored, { partition, stored, row, incoming: false });
      }
    }
  }
}

/** Of each key's versions, the one fetched later stays; the others are dropped (incoming) or removed (held). */
function decide(versions: ReadonlyMap<string, Version[]>): Moves {
  const moves: Moves = { dropped: new Set(), removed: new Map(), moved: new Set() };
  for (const [key, list] of versions) {
    if (list.length < 2) continue;
    const winner = list.reduce((kept, each) => (fetchedLater(each.row, kept.row) ? each : kept));
    for (const version of list) {
      if (version === winner) continue;
      // Versions of the winner's own partition and key meet in its bucket merge, which keeps the later.
      const merged = winner.incoming && winner.partition === version.partition && version.stored === key;
      if (version.incoming) {
        if (!merged) moves.dropped.add(dropKey(version.partition, key));
        continue;
      }
      if (merged) continue;
      let removed = moves.removed.get(version.partition);
      if (removed === undefined) moves.removed.set(version.partition, (removed = new Set()));
      removed.add(version.stored);
      if (winner.incoming) moves.moved.add(key);
    }
  }
  return moves;
}
