/**
 * A loop guard on content. Spent continuation values catch a cursor that comes back; a service that
 * hands out ever-new cursors over pages it already served would slip past that and be paid for page
 * after page until the account is empty. So a walk also remembers a fingerprint of every page it
 * read (its record count and the keys of its first, middle and last record, or those records whole
 * where the operation names no key: cheap, and enough to tell a page served again), and is stopped
 * once `REPEATED_PAGES_LIMIT` pages in a row repeat earlier ones.
 * Empty pages neither count nor break a run.
 */
import { createHash } from 'node:crypto';
import { stringifyExact } from '../exact-json.ts';

/** Pages in a row that repeat earlier pages of the same walk before it is stopped. */
export const REPEATED_PAGES_LIMIT = 5;

export class RepeatedPages {
  readonly #seen = new Set<string>();
  readonly #keyOf: (record: unknown) => string | undefined;
  #inARow = 0;

  /** `keyOf`: a record's identifier, when its operation names one (the table's `key`). */
  constructor(keyOf: (record: unknown) => string | undefined) {
    this.#keyOf = keyOf;
  }

  /** Notes a page's records; true when it makes `REPEATED_PAGES_LIMIT` repeated pages in a row. */
  repeated(records: readonly unknown[]): boolean {
    if (records.length === 0) return false;
    // A key is a few bytes; serialising a wide record costs about what parsing it did.
    let sample = String(records.length);
    for (const record of [records[0], records[records.length >> 1], records[records.length - 1]]) {
      sample += '\0' + (this.#keyOf(record) ?? stringifyExact(record) ?? '');
    }
    // Keys make a short sample, kept as it is; whole records are hashed to bound the memory it takes.
    const fingerprint = keptOrDigest(sample, 128);
    if (this.#seen.has(fingerprint)) return ++this.#inARow >= REPEATED_PAGES_LIMIT;
    this.#seen.add(fingerprint);
    this.#inARow = 0;
    return false;
  }
}

/**
 * What a loop guard keeps of a value it must recognise later: the value itself while it is at most
 * `limit` characters (hashing costs more than it saves there), else its SHA-256 digest, so a value
 * of megabytes costs a few bytes to remember. The prefix keeps a digest from equalling a short value.
 */
export function keptOrDigest(value: string, limit: number): string {
  return value.length <= limit ? value : `sha256:${createHash('sha256').update(value).digest('base64')}`;
}
