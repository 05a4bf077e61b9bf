/** What the storage tests share: reading a store back, counting its requests, and the bodies they write. */
import type { RequestCounts, Storage } from '../../src/dataset/storage/types.ts';

const MiB = 1024 * 1024;
/** Lowered so that `bigBody()` goes up as a multipart upload in three parts of at most 5 MiB. */
export const MULTIPART_SIZES = { multipartThreshold: 6 * MiB, partSize: 5 * MiB };

/** A body of 11 MiB and 3 bytes, not the same byte twice in a row. */
export function bigBody(): Uint8Array {
  return Uint8Array.from({ length: 11 * MiB + 3 }, (_, index) => (index * 7919) % 251);
}

export const bytes = (value: string): Uint8Array => new TextEncoder().encode(value);

export function text(body: Uint8Array | undefined): string | undefined {
  return body === undefined ? undefined : new TextDecoder().decode(body);
}

/** Every name `storage` lists under `prefix`, in its order. */
export async function names(storage: Storage, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for await (const object of storage.list(prefix)) found.push(object.name);
  return found;
}

/** Writes `count` small objects `many/0000`, `many/0001`…, fifty at a time; resolves to their names. */
export async function writeMany(storage: Storage, count: number): Promise<string[]> {
  const written = Array.from({ length: count }, (_, index) => `many/${String(index).padStart(4, '0')}`);
  for (let start = 0; start < written.length; start += 50) await Promise.all(written.slice(start, start + 50).map((name) => storage.write(name, bytes(name))));
  return written;
}

/** The requests `fn` made of `storage`, by kind, leaving out the kinds it made none of. */
export async function requestsOf(storage: Storage, fn: () => Promise<unknown>): Promise<Partial<RequestCounts>> {
  const before = storage.requests;
  await fn();
  const after = storage.requests;
  const kinds = Object.keys(after) as (keyof RequestCounts)[];
  return Object.fromEntries(kinds.flatMap((kind) => (after[kind] === before[kind] ? [] : [[kind, after[kind] - before[kind]]])));
}
