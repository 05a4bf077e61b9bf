/**
 * Strings every reader accepts. A JavaScript string may hold a lone surrogate (`'\ud800'`: half of
 * a UTF-16 pair, from a truncated emoji or a broken upstream), which no UTF-8 file can hold. Left
 * alone, NDJSON got the escape `\ud800`, which DuckDB refuses for the whole file, while CSV and
 * Parquet got U+FFFD from Node's UTF-8 encoder without a word. Every sink now writes U+FFFD in its
 * place (what `String.prototype.toWellFormed` does) and counts the strings it repaired, so a summary
 * can say so.
 */
/// <reference lib="es2024.string" />
import { parseExact, stringifyExact } from '../src/exact-json.ts';

/** How many strings (values or keys) a writer repaired; one per string, however many surrogates it held. */
export class Repairs {
  count = 0;
}

/** `text`, or a copy with U+FFFD for each lone surrogate (counted). */
export function wellFormed(text: string, repairs: Repairs): string {
  // A check V8 answers at once for a one-byte string: the per-cell cost of this module.
  if (text.isWellFormed()) return text;
  repairs.count++;
  return text.toWellFormed();
}

/**
 * `json` (what `stringifyExact` wrote), with every string and key in it repaired. `JSON.stringify`
 * escapes a lone surrogate as `\udXXX` and never escapes a paired one, so text without `\ud` needs no
 * look: one scan, and only text that has it is parsed, repaired and written again. (A literal
 * backslash before `ud` is a false alarm that costs that parse and repairs nothing.)
 */
export function wellFormedJson(json: string, repairs: Repairs): string {
  if (!json.includes('\\ud')) return json;
  const before = repairs.count;
  const repaired = repairValue(parseExact(json), repairs);
  return repairs.count === before ? json : stringifyExact(repaired)!;
}

/** A JSON value (as `parseExact` gives it) with its strings and keys repaired; unchanged parts are reused. */
function repairValue(value: unknown, repairs: Repairs): unknown {
  if (typeof value === 'string') return wellFormed(value, repairs);
  if (Array.isArray(value)) return value.map((item) => repairValue(item, repairs));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // defineProperty: a key `__proto__` must stay a key, not set the copy's prototype.
    Object.defineProperty(out, wellFormed(key, repairs), { value: repairValue(item, repairs), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
