/**
 * `dedupe(key, { maxKeys })`: drops every record whose key was already seen, in O(1) per record.
 * Each dropped record is reported to the source's client (`stats`, `events$`) as a `duplicate`.
 */
import { controlOf } from '../control.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';
import { assertInteger, derive } from './derive.ts';
import { keyReader, SeenKeys, type KeyOf } from './record-key.ts';
import type { AnyIterable, Operator } from './types.ts';

/** Options of `dedupe`. */
export interface DedupeOptions {
  /**
   * Remember at most this many keys, forgetting the least recently seen one first (a key seen again
   * counts as fresh). Bounds memory on endless streams; the price is that a duplicate arriving more
   * than `maxKeys` distinct keys after its last sighting passes again. Default: remember every key.
   */
  maxKeys?: number;
}

const DEDUPE_OPTIONS = { maxKeys: true } as const satisfies KnownOptions<DedupeOptions>;

/**
 * `key` is a dotted path into the record (`'author.id'`) or a function of it, read and compared by
 * the record-key rule (`record-key.ts`): records without a key always pass.
 */

export function dedupe<T>(key: string | ((record: T) => unknown), options: DedupeOptions = {}): Operator<T, T> {
  const keyOf = keyReader<T>(key);
  refuseUnknownOptions(options, DEDUPE_OPTIONS, 'dedupe');
  const { maxKeys = Infinity } = options;
  if (maxKeys !== Infinity) assertInteger(maxKeys, 'dedupe: maxKeys', 1);
  return (source) => derive(source, 'dedupe', (s) => dedupeRecords(s, keyOf, maxKeys));
}

async function* dedupeRecords<T>(source: AnyIterable<T>, keyOf: KeyOf<T>, maxKeys: number): AsyncGenerator<T> {
  const control = controlOf(source);
  const seen = new SeenKeys(keyOf, maxKeys);
  for await (const record of source) {
    if (seen.repeats(record)) {
      control?.report({ type: 'duplicate', operator: 'dedupe', count: 1 });
      continue;
    }
    yield record;
  }
}
