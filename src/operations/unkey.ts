/**
 * API reference 2.2: the API sends lists as objects keyed "0", "1", … (`{}` when empty). Records are yielded
 * with real arrays instead, because every consumer (operators, sinks, user code) expects `.length`,
 * `.map` and JSON arrays. Values are never mutated: a changed object is copied, an unchanged one is
 * shared, which keeps the cost close to zero for records that hold no keyed collections.
 *
 * This is the one recursive walk over every record a response holds, so it also bounds how deep a
 * record may nest: past `MAX_NESTING` levels it throws a `ResponseFormatError` instead of overflowing
 * the stack, and every later walk (`JSON.stringify` in a spool, the sinks' flattening) stays safe.
 */
import { ResponseFormatError } from '../errors.ts';

/** Deepest nesting of arrays and objects in a record; real records stay far below it. */
export const MAX_NESTING = 1000;

/**
 * Field names the API reference lists as collections. Only these turn an empty `{}` into `[]`: elsewhere `{}` is
 * an empty object (e.g. `text_extra`, `eventList`), and an empty keyed collection looks the same.
 */
const COLLECTION_NAMES: ReadonlySet<string> = new Set([
  'aweme_list', 'url_list', 'videos', 'comments', 'products', 'store_sub_score', 'reels', 'posts',
  'topComments', 'listings', 'locations', 'delivery_types', 'shorts', 'channels', 'playlists',
  'shelves', 'lives', 'transcript', 'transcripts', 'searchResults', 'cards', 'images', 'ads', 'rules',
  'palette', 'members_facepile_results', 'media_ids', 'items', 'display_resources', 'results',
  'fragments', 'candidates', 'instructions', 'entries', 'itemList',
]);

/** `value` with every keyed collection inside it (at any depth) turned into an array. */
export function unkey(value: unknown): unknown {
  return unkeyAt(value, 0);
}

/** `unkey` of a value `depth` levels inside a record. */
function unkeyAt(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return unkeyArray(value, depth);
  return unkeyObject(value as Record<string, unknown>, depth);
}

/** A collection found at a known list position: `{}` is an empty list there. */
export function unkeyCollection(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return unkeyArray(value, 0);
  if (typeof value !== 'object' || value === null) return undefined;
  if (isEmptyObject(value)) return [];
  const items = unkey(value);
  return Array.isArray(items) ? items : undefined;
}

function unkeyArray(items: unknown[], depth: number): unknown[] {
  if (depth >= MAX_NESTING) throw tooDeep();
  let out: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const next = unkeyAt(item, depth + 1);
    if (next !== item) {
      out ??= items.slice();
      out[i] = next;
    }
  }
  return out ?? items;
}

function unkeyObject(object: Record<string, unknown>, depth: number): unknown {
  if (depth >= MAX_NESTING) throw tooDeep();
  // Integer-like keys come first in every object, so a keyed collection is one that has "0".
  if (Object.hasOwn(object, '0')) {
    const items = keyedItems(object, depth);
    if (items !== undefined) return items;
  }
  // `for…in` over a parsed object reads each field through V8's enumeration cache: measured a third
  // faster on wide, nested records than `Object.values` plus `Object.keys`, which allocate per object.
  let out: Record<string, unknown> | undefined;
  for (const key in object) {
    const field = object[key];
    if (typeof field !== 'object' || field === null) continue;
    let next: unknown;
    if (Array.isArray(field)) next = unkeyArray(field, depth + 1);
    else {
      next = unkeyObject(field as Record<string, unknown>, depth + 1);
      if (next === field && COLLECTION_NAMES.has(key) && isEmptyObject(field)) next = [];
    }
    if (next !== field) {
      out ??= { ...object };
      setField(out, key, next);
    }
  }
  return out ?? object;
}

/**
 * The values of an object keyed exactly "0" … "n-1", unkeyed; undefined for an object that only
 * looks keyed (e.g. keys "0" and "2"), which stays an object.
 */
function keyedItems(object: Record<string, unknown>, depth: number): unknown[] | undefined {
  const keys = Object.keys(object);
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== String(i)) return undefined;
  }
  const values = Object.values(object);
  for (let i = 0; i < values.length; i++) values[i] = unkeyAt(values[i], depth + 1);
  return values;
}

/** `target[key] = value`, also for a field named `__proto__`, which plain assignment would take as the prototype. */
export function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function tooDeep(): ResponseFormatError {
  return new ResponseFormatError(`a record of the response nests arrays or objects deeper than ${MAX_NESTING} levels`, { status: 200 });
}

function isEmptyObject(value: object): boolean {
  for (const _ in value) return false;
  return true;
}
