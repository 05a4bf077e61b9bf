/**
 * Keys a dataset holds more than once, which a rewrite (`dataset compact`, a migration on open)
 * keeps once (docs/datasets.md "One row per record"): a record kept in two partitions (written before a
 * publish removed the version a move left behind), or under its stand-in key (`_key`) beside its own
 * key. Within one partition the bucket merge keeps one version of a key already; across partitions
 * and stand-ins this finds which versions lose to a later fetch (`fetchedLater`), reading the parts
 * twice (their keys' hashes, then the rows of the keys met more than once) rather than holding the
 * dataset in memory.
 */
import { keyOf, stableKeyOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { readStoredPart, type DatasetFormat, type HeldNames } from './parts.ts';
import { FETCHED_AT, fetchedLater, keyHash } from './buckets.ts';
import { dropKey, keyOfRow } from './keys.ts';
import type { ScannedPart } from './scan.ts';
import type { DatasetPaths } from './store.ts';
import { allWalkMarks } from './marks.ts';
import { olderStamp } from './fetch-clock.ts';

/** A part and the partition its rows go to in the rewrite. */
export interface GroupedPart {
  part: ScannedPart;
  partition: string;
}

/** A row as the rewrite keeps it: one without `_fetched_at` counts as fetched when its part was last written (old-style: below every stamp of the fetch clock). */
export function withFetchedAt(row: Record<string, unknown>, part: ScannedPart): Record<string, unknown> {
  return typeof row[FETCHED_AT] === 'string' ? row : { ...row, [FETCHED_AT]: olderStamp(part.mtimeMs) };
}

interface Version {
  partition: string;
  stored: string;
  row: Record<string, unknown>;
}

/**
 * The versions (`dropKey(partition, key as stored)`) a rewrite leaves out: every version of a key
 * but the one fetched later, across partitions and stand-in keys. None when each key is in one
 * partition once (the usual case: one read of the parts, then nothing held).
 */
export async function outrankedVersions(op: OperationSpec, paths: DatasetPaths, format: DatasetFormat, held: HeldNames, parts: readonly GroupedPart[]): Promise<Set<string>> {
  const first = new Map<number, string>();
  const twice = new Set<number>();
  const standIns = new Set<string>();
  for (const { part, partition } of parts) {
    for await (const row of readStoredPart(paths.storage, part.name, format, held)) {
      const key = keyOfRow(op, row);
      if (key === undefined) continue;
      if (op.key !== null && keyOf(op, row) === undefined) standIns.add(key);
      const hash = keyHash(key);
      const seen = first.get(hash);
      if (seen === undefined) first.set(hash, partition);
      else if (seen !== partition) twice.add(hash);
    }
  }
  first.clear();
  if (twice.size === 0 && standIns.size === 0) return new Set();
  const params = standIns.size === 0 ? [] : await walkParams(op, paths);
  const versions = new Map<string, Version[]>();
  const aliases = new Map<string, string>();
  const kept: { standIn: string; version: Version }[] = [];
  const add = (key: string, version: Version) => versions.set(key, [...(versions.get(key) ?? []), version]);
  for (const { part, partition } of parts) {
    for await (const read of readStoredPart(paths.storage, part.name, format, held)) {
      const stored = keyOfRow(op, read);
      if (stored === undefined) continue;
      const row = withFetchedAt(read, part);
      if (standIns.has(stored)) {
        kept.push({ standIn: stored, version: { partition, stored, row } });
        continue;
      }
      const linked = params.flatMap((each) => stableKeyOf(op, row, each) ?? []).filter((standIn) => standIns.has(standIn));
      for (const standIn of linked) aliases.set(standIn, stored);
      if (twice.has(keyHash(stored)) || linked.length > 0) add(stored, { partition, stored, row });
    }
  }
  for (const { standIn, version } of kept) {
    const key = aliases.get(standIn) ?? (twice.has(keyHash(standIn)) ? standIn : undefined);
    if (key !== undefined) add(key, version);
  }
  const outranked = new Set<string>();
  for (const list of versions.values()) {
    const winner = list.reduce((later, each) => (fetchedLater(each.row, later.row) ? each : later));
    // A version of the winner's own partition and key meets it in the bucket merge, which keeps the later.
    for (const version of list) if (version.partition !== winner.partition || version.stored !== winner.stored) outranked.add(dropKey(version.partition, version.stored));
  }
  return outranked;
}

/**
 * The params a stand-in key of `op` may have been made with: those of the walks the dataset keeps
 * marks for (a stand-in names the walk's params the table's `stableKey` lists), or none to name.
 */
async function walkParams(op: OperationSpec, paths: DatasetPaths): Promise<Record<string, string>[]> {
  if (op.stableKey === undefined) return [];
  if ((op.stableKey.params ?? []).length === 0) return [{}];
  const params = new Map<string, Record<string, string>>();
  for (const mark of await allWalkMarks(paths)) params.set(JSON.stringify(op.stableKey.params!.map((param) => mark.params[param])), mark.params);
  return [...params.values()];
}
