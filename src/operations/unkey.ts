/**
 * SPEC 2.2: the API sends lists as objects keyed "0", "1", … (`{}` when empty). Records are yielded
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
 * Field names SPEC lists as collections. Only these turn an empty `{}` into `[]`: elsewhere `{}` is
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
  // `Object.values` / `Object.keys` are builtins that avoid a keyed property lookup per field, which
  // is most of the cost on wide records whose fields are nearly all primitives.
  const values = Object.values(object);
  let keys: string[] | undefined;
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < values.length; i++) {
    const field = values[i];
    if (typeof field !== 'object' || field === null) continue;
    if (keys === undefined) {
      keys = Object.keys(object);
      if (keys[0] === '0') return keyedItems(object, keys, values, depth);
    }
    let next: unknown;
    if (Array.isArray(field)) next = unkeyArray(field, depth + 1);
    else {
      next = unkeyObject(field as Record<string, unknown>, depth + 1);
      if (next === field && COLLECTION_NAMES.has(keys[i]) && isEmptyObject(field)) next = [];
    }
    if (next !== field) {
      out ??= { ...object };
      out[keys[i]] = next;
    }
  }
  if (keys === undefined && values.length > 0 && firstKey(object) === '0') return keyedItems(object, Object.keys(object), values, depth);
  return out ?? object;
}

/**
 * An object whose first key is "0" (integer-like keys always come first, in order): its values,
 * unkeyed, when its keys run exactly "0" … "n-1"; otherwise an object that only looks keyed.
 */
function keyedItems(object: Record<string, unknown>, keys: string[], values: unknown[], depth: number): unknown {
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== String(i)) return unkeyFields(object, depth);
  }
  return values.map((value) => unkeyAt(value, depth + 1));
}

/** An object that only looked keyed (e.g. keys "0" and "2"): left an object, its fields unkeyed. */
function unkeyFields(object: Record<string, unknown>, depth: number): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in object) {
    const field = object[key];
    const next = unkeyAt(field, depth + 1);
    if (next !== field) {
      out ??= { ...object };
      out[key] = next;
    }
  }
  return out ?? object;
}

function tooDeep(): ResponseFormatError {
  return new ResponseFormatError(`a record of the response nests arrays or objects deeper than ${MAX_NESTING} levels`, { status: 200 });
}

function firstKey(object: object): string | undefined {
  for (const key in object) return key;
  return undefined;
}

function isEmptyObject(value: object): boolean {
  return firstKey(value) === undefined;
}
