/**
 * A loop guard on content. Spent continuation values catch a cursor that comes back; a service that
 * hands out ever-new cursors over pages it already served would slip past that and be paid for page
 * after page until the account is empty. So a walk also remembers a fingerprint of every page it
 * read (its record count and its first, middle and last record: cheap, and enough to tell a page
 * served again), and is stopped once `REPEATED_PAGES_LIMIT` pages in a row repeat earlier ones.
 * Empty pages neither count nor break a run.
 */
import { createHash } from 'node:crypto';

/** Pages in a row that repeat earlier pages of the same walk before it is stopped. */
export const REPEATED_PAGES_LIMIT = 5;

export class RepeatedPages {
  readonly #seen = new Set<string>();
  #inARow = 0;

  /** Notes a page's records; true when it makes `REPEATED_PAGES_LIMIT` repeated pages in a row. */
  repeated(records: readonly unknown[]): boolean {
    if (records.length === 0) return false;
    const sample = [records.length, records[0], records[records.length >> 1], records[records.length - 1]];
    const fingerprint = createHash('sha256').update(JSON.stringify(sample)).digest('base64').slice(0, 16);
    if (this.#seen.has(fingerprint)) return ++this.#inARow >= REPEATED_PAGES_LIMIT;
    this.#seen.add(fingerprint);
    this.#inARow = 0;
    return false;
  }
}
