/**
 * The record-key rule, the one every duplicate check uses (`dedupe`, an export's staging and its
 * resume, `--out -`): a key is a dotted path into the record (`'author.id'`) or a function of it.
 * A record whose key is `undefined` or `null` cannot be compared and is never a duplicate. Keys that
 * are objects or arrays (e.g. `[r.a, r.b]`) compare by their JSON text; other keys as a `Set` does,
 * so `1` and `'1'` differ.
 */
import { stringifyExact } from '../exact-json.ts';
import { describe } from './derive.ts';

export type KeyOf<T> = (record: T) => unknown;

/** Whether `key` is a dotted path: non-empty steps joined by `.`. */
export function isKeyPath(key: unknown): key is string {
  return typeof key === 'string' && key !== '' && !key.split('.').includes('');
}

/**
 * Reads a record's key: `key` itself when it is a function, else the value at its dotted path
 * (`undefined` when the path runs out). Throws a `TypeError` for an empty path or an empty step.
 */
export function keyReader<T>(key: string | KeyOf<T>): KeyOf<T> {
  if (typeof key === 'function') return key;
  if (!isKeyPath(key)) throw new TypeError(`dedupe: key must be a dotted path such as 'author.id' or a function, got ${describe(key)}`);
  const path = key.split('.');
  return (record) => {
    let value: unknown = record;
    for (const step of path) {
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Record<string, unknown>)[step];
    }
    return value;
  };
}

/**
 * The keys met so far. `maxKeys` bounds them, forgetting the least recently met first (a key met
 * again counts as fresh); by default every key is kept.
 */
export class SeenKeys<T = unknown> {
  // A Set iterates in insertion order, so its first entry is always the least recently met key.
  readonly #seen = new Set<unknown>();

  constructor(
    private readonly keyOf: KeyOf<T>,
    private readonly maxKeys = Infinity,
  ) {}

  /** True when `record`'s key was met before (a record without a key never was); either way it is met now. */
  repeats(record: T): boolean {
    const raw = this.keyOf(record);
    if (raw === undefined || raw === null) return false;
    // Exact: an object key may hold an integer past 2^53 (a `bigint`), which `JSON.stringify` refuses.
    const key = typeof raw === 'object' ? stringifyExact(raw)! : raw;
    if (this.#seen.has(key)) {
      if (this.maxKeys !== Infinity) {
        this.#seen.delete(key);
        this.#seen.add(key);
      }
      return true;
    }
    this.#seen.add(key);
    if (this.#seen.size > this.maxKeys) this.#seen.delete(this.#seen.values().next().value);
    return false;
  }
}
