/**
 * A field's shape from the values it was given: what each value showed (`observe`, into a `Seen`
 * tree), and the shape they settle on (`settle`) by the type lattice (`src/column-kinds.ts` `joinKinds`). A
 * nested Parquet file plans its fields so from its sample (`parquet-nested.ts`), widens them by what
 * went to `_extra` (`parquet-widening.ts`), and a nested dataset records its schema so over its runs
 * (`src/dataset/schema-nested.ts`). `null`, `[]` and `{}` (and objects and arrays of only those)
 * type nothing: a field seen only so has no shape yet.
 */
import { joinName, MAP_THRESHOLD } from './rows.ts';
import { isKeyedCollection, isPlainObject, jsonValue, kindOf, settleKind, type PlainObject } from './values.ts';
import type { ColumnKind } from '../src/column-kinds.ts';

/** A field's shape, as the file's schema holds it and `socialstream.columns` describes it. */
export type Shape =
  | { readonly kind: ColumnKind }
  | { readonly struct: ReadonlyArray<{ readonly name: string; readonly shape: Shape }> }
  | { readonly list: Shape }
  | { readonly map: Shape };


/** A top-level field of the layout and its shape. */
export interface NestedField {
  readonly name: string;
  readonly shape: Shape;
}

/** What the sample showed of one field (a dataset's schema observes its records so too: `src/dataset/schema-nested.ts`). */
export interface Seen {
  scalars: Map<ColumnKind, number>;
  /** Objects that typed something (`{}`, and objects of only null, `[]` and `{}`, decide nothing). */
  objects: number;
  /** An object that is a keyed collection, or one nested too deep: the field is JSON text. */
  opaque: boolean;
  fields: Map<string, Seen>;
  /** Arrays that typed something (`[]`, and arrays of only null, `[]` and `{}`, decide nothing). */
  arrays: number;
  elements: Seen | undefined;
}

/** Nothing seen yet. */
export function seen(): Seen {
  return { scalars: new Map(), objects: 0, opaque: false, fields: new Map(), arrays: 0, elements: undefined };
}

/**
 * Adds `value` (at `path`, `depth` objects and arrays deep) to what `into` saw; whether it typed
 * anything. An object or array holding only nulls, `[]` and `{}` is not counted as one (its keys are
 * noted, untyped): like them, it decides nothing, so a field seen only so is typed by its first real
 * value, not made a STRUCT or LIST of nothing that every later value conflicts with.
 */
export function observe(value: unknown, into: Seen, path: string, depth: number, maxDepth: number): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) {
    if (value.length === 0) return false;
    if (depth > maxDepth) {
      into.arrays++;
      into.opaque = true;
      return true;
    }
    const elements = (into.elements ??= seen());
    let typed = false;
    for (let i = 0; i < value.length; i++) typed = observe(jsonValue(value[i], String(i)), elements, path, depth + 1, maxDepth) || typed;
    if (typed) into.arrays++;
    return typed;
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return false;
    if (depth > maxDepth || isKeyedCollection(keys)) {
      into.objects++;
      into.opaque = true;
      return true;
    }
    const typed = observeFields(value, keys, into.fields, path, depth + 1, maxDepth);
    if (typed) into.objects++;
    return typed;
  }
  const kind = kindOf(value, path);
  into.scalars.set(kind, (into.scalars.get(kind) ?? 0) + 1);
  return true;
}

/** Adds each of `keys` of `object` to `fields`; whether any typed anything. */
export function observeFields(object: PlainObject, keys: readonly string[], fields: Map<string, Seen>, path: string | undefined, depth: number, maxDepth: number): boolean {
  let typed = false;
  for (const key of keys) {
    let field = fields.get(key);
    if (field === undefined) fields.set(key, (field = seen()));
    typed = observe(jsonValue(object[key], key), field, joinName(path, key), depth, maxDepth) || typed;
  }
  return typed;
}

/**
 * Whether a value holds nothing that could type a field: null, `[]`, `{}`, or arrays and objects
 * of those. In a field no value has typed yet it reads NULL (there is no column to hold it).
 */
export function holdsNothing(value: unknown, depth = 0): boolean {
  if (value === null || value === undefined) return true;
  if (depth > MAX_EMPTY_DEPTH || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.every((item, i) => holdsNothing(jsonValue(item, String(i)), depth + 1));
  if (!isPlainObject(value)) return false;
  for (const key in value) if (!holdsNothing(jsonValue(value[key], key), depth + 1)) return false;
  return true;
}

const MAX_EMPTY_DEPTH = 64;

/** Adds what `from` saw to `into`: the values of every key of a map, seen as one field. */
function mergeSeen(into: Seen, from: Seen): void {
  for (const [kind, count] of from.scalars) into.scalars.set(kind, (into.scalars.get(kind) ?? 0) + count);
  into.objects += from.objects;
  into.opaque ||= from.opaque;
  for (const [key, child] of from.fields) {
    let field = into.fields.get(key);
    if (field === undefined) into.fields.set(key, (field = seen()));
    mergeSeen(field, child);
  }
  into.arrays += from.arrays;
  if (from.elements !== undefined) mergeSeen((into.elements ??= seen()), from.elements);
}

/** What an object field's values showed, every key's taken as one: the values of a map. */
export function mapValuesSeen(field: Seen): Seen {
  const values = seen();
  for (const child of field.fields.values()) mergeSeen(values, child);
  return values;
}

/** One value of JSON text in a string column. */
export const JSON_SHAPE: Shape = { kind: 'json' };

/** Which of a field's kinds of value decides its shape: the commonest of scalars, objects and arrays (the others go to `_extra`). */
export function settledCategory(field: Seen): 'scalars' | 'objects' | 'arrays' | undefined {
  let scalars = 0;
  for (const count of field.scalars.values()) scalars += count;
  const ranked = (
    [
      ['scalars', scalars],
      ['objects', field.objects],
      ['arrays', field.arrays],
    ] as const
  ).filter(([, count]) => count > 0);
  if (ranked.length === 0) return undefined;
  return [...ranked].sort((a, b) => b[1] - a[1])[0][0];
}

/**
 * A field's shape from every value it was given, by the type lattice (`src/column-kinds.ts` `joinKinds`), or
 * `undefined` when no value typed it (only null, `[]`, `{}`): such a field is no column yet.
 */
export function settle(field: Seen): Shape | undefined {
  const category = settledCategory(field);
  if (category === undefined) return undefined;
  if (category === 'scalars') return { kind: settleKind(field.scalars)! };
  if (category === 'objects') {
    if (field.opaque) return JSON_SHAPE;
    if (field.fields.size > MAP_THRESHOLD) {
      const value = settle(mapValuesSeen(field));
      return value === undefined ? undefined : { map: value };
    }
    const struct = [...field.fields].flatMap(([name, child]) => {
      const shape = settle(child);
      return shape === undefined ? [] : [{ name, shape }];
    });
    return struct.length === 0 ? undefined : { struct };
  }
  if (field.opaque) return JSON_SHAPE;
  const element = field.elements === undefined ? undefined : settle(field.elements);
  return element === undefined ? undefined : { list: element };
}
