/**
 * Where a record lives in a partition, whoever wrote it (docs/datasets.md "Part files"): in the part file
 * of its key's bucket, `part-b<b>-of-<m>.<ext>`, the one part of the partition whose `hash(key) mod m`
 * is `b`. A dataset starts every partition with `buckets` parts (recorded in its schema file, 1 by
 * default: one file a partition); a part that grows past `splitBytes` splits in two, `b` of `m`
 * into `b` and `b + m` of `2m`, so the parts of a partition always cover every hash exactly once.
 * The number of parts is bounded by the dataset's own size, never by how many walks, shards,
 * workers or machines wrote it: at most `max(buckets, 2 × partition bytes ÷ splitBytes)` a partition
 * (a split part holds at least half of `splitBytes`, but a hash can be uneven: see the README).
 *
 * And which version of a record is kept: the one fetched last (`_fetched_at`, its page's stamp of the
 * fetch clock, `fetch-clock.ts`: the service's time, in the order every writer shares), never the
 * one published last; versions with the same stamp are ordered by their JSON text (keys sorted), so
 * every machine keeps the same one.
 */
import { createHash } from 'node:crypto';
// Only on the scratch folder, where parts are encoded before they go to the store.
import { rm, stat } from 'node:fs/promises';
import { compareFetchTimes } from './fetch-clock.ts';
import { PART_EXTENSION, writePart, type DatasetFormat, type PartSchema } from './parts.ts';
import type { Storage } from './storage/types.ts';

/** How a dataset lays its rows into part files, recorded at creation in its schema file. */
export interface Layout {
  /** Parts a partition starts with. */
  buckets: number;
  /** A part written larger than this splits in two. */
  splitBytes: number;
}

/**
 * One part a partition until it passes 32 MiB: a publish reads a part it merges into whole into
 * memory (docs/datasets.md), so the bound keeps that memory bounded too; DuckDB reads files of this
 * size at full speed.
 */
export const DEFAULT_LAYOUT: Layout = { buckets: 1, splitBytes: 32 * 1024 * 1024 };

/** The most buckets a layout may start with. */
export const MAX_BUCKETS = 1 << 16;

/** The column every row keeps its fetch time in. */
export const FETCHED_AT = '_fetched_at';

/** A key's place among buckets: the first 32 bits of its SHA-256, the same on every machine and version. */
export function keyHash(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0);
}

export interface Bucket {
  bucket: number;
  of: number;
}

export function bucketPartName({ bucket, of }: Bucket, format: DatasetFormat): string {
  return `part-b${bucket}-of-${of}${PART_EXTENSION[format]}`;
}

/** The bucket a part file name says, or undefined for any other name (a part of an older layout). */
export function bucketOfName(name: string, format: DatasetFormat): Bucket | undefined {
  const extension = PART_EXTENSION[format];
  if (!name.endsWith(extension)) return undefined;
  const match = /^part-b(\d+)-of-(\d+)$/.exec(name.slice(0, -extension.length));
  if (match === null) return undefined;
  const bucket = { bucket: Number(match[1]), of: Number(match[2]) };
  return bucket.bucket < bucket.of ? bucket : undefined;
}

/** A bucket part in its partition, as the store lists it. */
export interface StoredBucket extends Bucket {
  /** When it was last written (`StoredObject.modifiedMs`; 0 when the store does not say). */
  modifiedMs: number;
}

/** The bucket parts of a partition (`prefix`: `DatasetNames.partition`), none when it has none: one listing. */
export async function bucketsIn(storage: Storage, prefix: string, format: DatasetFormat): Promise<StoredBucket[]> {
  const found: StoredBucket[] = [];
  for await (const { name, modifiedMs } of storage.list(prefix)) {
    const bucket = name.includes('/', prefix.length) ? undefined : bucketOfName(name.slice(prefix.length), format);
    if (bucket !== undefined) found.push({ ...bucket, modifiedMs: modifiedMs ?? 0 });
  }
  return found;
}

/**
 * The part of `parts` that holds `hash`; when none does (a partition new, or the empty half of a
 * split never written), the coarsest bucket for it that overlaps no part there.
 */
export function bucketFor(parts: readonly Bucket[], hash: number, buckets: number): Bucket {
  for (const part of parts) if (hash % part.of === part.bucket) return part;
  let of = buckets;
  while (parts.some((part) => part.of >= of && part.bucket % of === hash % of)) of *= 2;
  return { bucket: hash % of, of };
}

/** Whether `a` is the version to keep over `b` (see the top of this file). */
export function fetchedLater(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const order = compareFetchTimes(a[FETCHED_AT], b[FETCHED_AT]);
  if (order !== 0) return order > 0;
  return canonical(a) > canonical(b);
}

/** JSON with every object's keys sorted and bigints as digits: the same text for the same record, read back or not. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, inner: unknown) => {
    if (typeof inner === 'bigint') return inner.toString();
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  });
}

export interface WrittenBucket extends Bucket {
  /** Where it was written (a name readers' globs do not match). */
  staged: string;
  repaired: number;
}

/**
 * Writes the rows of one bucket part, staged at `stagedPath(bucket)` (a local file, in scratch); a part written larger than
 * `splitBytes` is written again as its two halves, and so on while a half is still too large.
 */
export async function writeBucket(
  rows: readonly Record<string, unknown>[],
  bucket: Bucket,
  hashOf: (row: Record<string, unknown>) => number,
  stagedPath: (bucket: Bucket) => string,
  schema: PartSchema,
  splitBytes: number,
): Promise<WrittenBucket[]> {
  const staged = stagedPath(bucket);
  const { repaired } = await writePart(rows, staged, schema);
  if (rows.length < 2 || (await stat(staged)).size <= splitBytes) return [{ ...bucket, staged, repaired }];
  await rm(staged, { force: true });
  const of = bucket.of * 2;
  const halves: [Bucket, Record<string, unknown>[]][] = [
    [{ bucket: bucket.bucket, of }, []],
    [{ bucket: bucket.bucket + bucket.of, of }, []],
  ];
  for (const row of rows) halves[hashOf(row) % of === bucket.bucket ? 0 : 1][1].push(row);
  const written: WrittenBucket[] = [];
  // A hash that does not split (every row in one half) would split forever: past 2^20 buckets, the part stays large.
  for (const [half, part] of halves) {
    if (part.length === 0) continue;
    if (part.length === rows.length && of >= 1 << 20) written.push(...(await writeBucket(part, half, hashOf, stagedPath, schema, Infinity)));
    else written.push(...(await writeBucket(part, half, hashOf, stagedPath, schema, splitBytes)));
  }
  return written;
}

/** The name of a bucket part in a partition (`prefix`: `DatasetNames.partition`). */
export function bucketPath(prefix: string, bucket: Bucket, format: DatasetFormat): string {
  return `${prefix}${bucketPartName(bucket, format)}`;
}
