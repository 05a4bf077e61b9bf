/**
 * `dedupe(key, { maxKeys })`: drops every record whose key was already seen, in O(1) per record.
 * Each dropped record is reported to the source's client (`stats`, `events$`) as a `duplicate`.
 */
import { controlOf } from '../control.ts';
import { assertInteger, derive, describe } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

export interface DedupeOptions {
  /**
   * Remember at most this many keys, forgetting the least recently seen one first (a key seen again
   * counts as fresh). Bounds memory on endless streams; the price is that a duplicate arriving more
   * than `maxKeys` distinct keys after its last sighting passes again. Default: remember every key.
   */
  maxKeys?: number;
}

/**
 * `key` is a dotted path into the record (`'author.id'`) or a function of it. Records whose key is
 * `undefined` or `null` cannot be compared and always pass. Keys that are objects or arrays (from a
 * key function, e.g. `[r.a, r.b]`) compare by their JSON text; other keys compare as `Set` does, so
 * `1` and `'1'` differ.
 */
export function dedupe<T>(key: string | ((record: T) => unknown), options: DedupeOptions = {}): Operator<T, T> {
  const keyOf = keyReader<T>(key);
  const { maxKeys = Infinity } = options;
  if (maxKeys !== Infinity) assertInteger(maxKeys, 'dedupe: maxKeys', 1);
  return (source) => derive(source, 'dedupe', (s) => dedupeRecords(s, keyOf, maxKeys));
}

async function* dedupeRecords<T>(
  source: AnyIterable<T>,
  keyOf: (record: T) => unknown,
  maxKeys: number,
): AsyncGenerator<T> {
  const control = controlOf(source);
  // A Set iterates in insertion order, so its first entry is always the least recently seen key.
  const seen = new Set<unknown>();
  for await (const record of source) {
    const raw = keyOf(record);
    if (raw === undefined || raw === null) {
      yield record;
      continue;
    }
    const key = typeof raw === 'object' ? JSON.stringify(raw) : raw;
    if (seen.has(key)) {
      if (maxKeys !== Infinity) {
        seen.delete(key);
        seen.add(key);
      }
      control?.report({ type: 'duplicate', operator: 'dedupe', count: 1 });
      continue;
    }
    seen.add(key);
    if (seen.size > maxKeys) seen.delete(seen.values().next().value);
    yield record;
  }
}

/**
 * Reads a record's key: `key` itself when it is a function, else the value at its dotted path
 * (`undefined` when the path runs out). Throws a `TypeError` for an empty path or an empty step.
 */
export function keyReader<T>(key: string | ((record: T) => unknown)): (record: T) => unknown {
  if (typeof key === 'function') return key;
  if (typeof key !== 'string' || key === '' || key.split('.').includes('')) {
    throw new TypeError(`dedupe: key must be a dotted path such as 'author.id' or a function, got ${describe(key)}`);
  }
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
