/**
 * The sandbox's JSON text. The real service sends some ids as integers past 2^53 (the short-video
 * `music.id`, beside its `id_str`), so the sandbox holds them as `bigint`s and writes their digits
 * raw: `JSON.stringify` refuses a `bigint`, and a `number` would send other digits. The sandbox keeps
 * its own writer: it imports nothing of the client's, so the two can disagree and a test can tell.
 */

/** Stands in for a bigint's digits inside a string until the text is written; no sandbox string holds a NUL. */
const MARK = '\u0000bigint:';
const MARKED = /"\\u0000bigint:(-?\d+)"/g;

/** `JSON.stringify(value)`, with every `bigint` written as its digits. */
export function toJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? `${MARK}${item}` : item)).replace(MARKED, '$1');
  }
}
