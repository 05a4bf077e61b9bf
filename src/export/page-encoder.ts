/**
 * A page of records as the spool holds it: NDJSON, UTF-8, lone surrogates written as U+FFFD (as
 * every sink writes them: a reader refuses the escape), a `bigint` as its digits, the API key
 * scrubbed out. This is most of what staging a page costs the walk's thread, so it makes no
 * page-sized string and no buffer per page: each record's JSON is scrubbed on its own (a key
 * cannot span a newline) and encoded straight into one buffer that every page reuses. A page-sized string cost a copy to flatten it
 * before the scrub could scan it, and a new buffer per page cost ten times what encoding into one
 * does, and its garbage as much again.
 */
import { Repairs, wellFormedJson } from '../../sinks/strings.ts';
import { stringifyExact } from '../exact-json.ts';

/** A page encoded: its bytes are valid until the next page is encoded. */
export interface EncodedPage {
  bytes: Buffer;
  /** Strings with invalid UTF-16, written with U+FFFD. */
  repaired: number;
  /** The API key was taken out of the page's text: the bytes hold other values than the records given. */
  scrubbed: boolean;
}

/** A buffer grown past this by a page of huge records is not kept for the pages after it. */
const KEPT_BYTES = 8 << 20;

export class PageEncoder {
  #buffer = Buffer.alloc(0);

  /** `records` as NDJSON lines, each passed through `scrub`, which takes the API key out of a text. */
  encode(records: readonly unknown[], scrub: (text: string) => string): EncodedPage {
    if (this.#buffer.length > KEPT_BYTES) this.#buffer = Buffer.alloc(0);
    const repairs = new Repairs();
    let scrubbed = false;
    let length = 0;
    for (const record of records) {
      const json = stringifyExact(record);
      if (json === undefined) throw new TypeError(`a record must be a JSON value, got ${typeof record}`);
      const repaired = wellFormedJson(json, repairs);
      const line = scrub(repaired);
      if (line !== repaired) scrubbed = true;
      // UTF-8 takes at most three bytes for a UTF-16 code unit; and one for the newline.
      this.#reserve(length, line.length * 3 + 1);
      length += this.#buffer.write(line, length, 'utf8');
      this.#buffer[length++] = 0x0a;
    }
    return { bytes: this.#buffer.subarray(0, length), repaired: repairs.count, scrubbed };
  }

  /** Room for `more` bytes after the first `used`, which a larger buffer keeps. */
  #reserve(used: number, more: number): void {
    if (this.#buffer.length >= used + more) return;
    const larger = Buffer.allocUnsafe(Math.max(used + more, this.#buffer.length * 2));
    this.#buffer.copy(larger, 0, 0, used);
    this.#buffer = larger;
  }
}
