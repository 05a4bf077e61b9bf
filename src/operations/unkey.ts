/**
 * SPEC 2.2: the API sends lists as objects keyed "0", "1", … (`{}` when empty). Records are yielded
 * with real arrays instead, because every consumer (operators, sinks, user code) expects `.length`,
 * `.map` and JSON arrays. Values are never mutated: a changed object is copied, an unchanged one is
 * shared, which keeps the cost close to zero for records that hold no keyed collections.
 */

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
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return unkeyArray(value);
  return unkeyObject(value as Record<string, unknown>);
}

/** A collection found at a known list position: `{}` is an empty list there. */
export function unkeyCollection(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return unkeyArray(value);
  if (typeof value !== 'object' || value === null) return undefined;
  if (isEmptyObject(value)) return [];
  const items = unkey(value);
  return Array.isArray(items) ? items : undefined;
}

function unkeyArray(items: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const next = unkey(item);
    if (next !== item) {
      out ??= items.slice();
      out[i] = next;
    }
  }
  return out ?? items;
}

function unkeyObject(object: Record<string, unknown>): unknown {
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
      if (keys[0] === '0') return keyedItems(object, keys, values);
    }
    let next: unknown;
    if (Array.isArray(field)) next = unkeyArray(field);
    else {
      next = unkeyObject(field as Record<string, unknown>);
      if (next === field && COLLECTION_NAMES.has(keys[i]) && isEmptyObject(field)) next = [];
    }
    if (next !== field) {
      out ??= { ...object };
      out[keys[i]] = next;
    }
  }
  if (keys === undefined && values.length > 0 && firstKey(object) === '0') return keyedItems(object, Object.keys(object), values);
  return out ?? object;
}

/**
 * An object whose first key is "0" (integer-like keys always come first, in order): its values,
 * unkeyed, when its keys run exactly "0" … "n-1"; otherwise an object that only looks keyed.
 */
function keyedItems(object: Record<string, unknown>, keys: string[], values: unknown[]): unknown {
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== String(i)) return unkeyFields(object);
  }
  return values.map(unkey);
}

/** An object that only looked keyed (e.g. keys "0" and "2"): left an object, its fields unkeyed. */
function unkeyFields(object: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in object) {
    const field = object[key];
    const next = unkey(field);
    if (next !== field) {
      out ??= { ...object };
      out[key] = next;
    }
  }
  return out ?? object;
}

function firstKey(object: object): string | undefined {
  for (const key in object) return key;
  return undefined;
}

function isEmptyObject(value: object): boolean {
  return firstKey(value) === undefined;
}
