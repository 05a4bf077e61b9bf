/**
 * A record's values as columns see them, for every layout and the dataset schema: the kind of a
 * value's column, checked (`kindOf`; the kinds, their lattice and the instants that are timestamps
 * are `src/column-kinds.ts`, which the notebook's preview shares), the cell a value makes in a column
 * of a kind (`fits`, `typedCell`, `jsonText`), a value as JSON sees it (`jsonValue`), and the kind a
 * column settles on (`settleKind`).
 */
import { COLUMN_KINDS, isInt64, joinKinds, valueKind, type ColumnKind } from '../src/column-kinds.ts';
import { stringifyExact } from '../src/exact-json.ts';
import { Repairs, wellFormed, wellFormedJson } from './strings.ts';

/** A cell: a number, boolean or text; a timestamp column's cells are epoch milliseconds; a bigint column's may be bigints. */
export type Cell = string | number | bigint | boolean | null;

export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `{"0": …, "1": …}`: the API's list encoding (API reference 2.2). One value, not columns named 0, 1, 2…. */
export function isKeyedCollection(keys: string[]): boolean {
  return keys.length > 0 && keys.every((key, i) => key === String(i));
}

/**
 * A value as `JSON.stringify` (so NDJSON) sees it at `key` of its object or array: one with a
 * `toJSON` method (a `Date`, a `URL`, a user's own class) is replaced by what that returns. Every walk
 * of a record reads a field or element through this, so CSV and Parquet type and write the same
 * value NDJSON writes (a `Date` is its ISO instant, never the quoted JSON text of it). Only objects
 * are looked at: a string or number, most of any record, costs one `typeof`.
 */
export function jsonValue(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === 'function' ? (toJSON as (key: string) => unknown).call(value, key) : value;
}

/**
 * Throws for a value JSON cannot carry (function, symbol), naming its field. A bigint is a value
 * (an integer the parser could not hold in a number): it is written with its exact digits.
 */
export function checkJsonValue(value: unknown, path: string): void {
  const type = typeof value;
  if (type === 'function' || type === 'symbol') {
    throw new TypeError(`Field ${path} holds a ${type}, which JSON cannot carry`);
  }
}

/** The kind of a value's column (`valueKind`), refusing a value JSON cannot carry, named by its field. */
export function kindOf(value: unknown, path: string): ColumnKind {
  checkJsonValue(value, path);
  return valueKind(value);
}

/** Whether a column of `kind` can hold `value` unchanged (timestamps are checked where they are parsed). */
export function fits(kind: Exclude<ColumnKind, 'timestamp'>, value: unknown): boolean {
  switch (kind) {
    case 'json':
      // Only arrays and objects are JSON text: a string is never stored quoted.
      return value !== null && typeof value === 'object';
    case 'string':
      // A string column holds numbers as their digits (`joinKinds`).
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint';
    case 'double':
      return typeof value === 'number';
    case 'integer':
      return Number.isSafeInteger(value);
    case 'bigint':
      return typeof value === 'bigint' ? isInt64(value) : Number.isSafeInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
  }
}

/** The cell for a value that fits a column of `kind` other than timestamp. */
export function typedCell(kind: Exclude<ColumnKind, 'timestamp'>, value: unknown, repairs: Repairs): Cell {
  if (kind === 'json') return jsonText(value as object, repairs);
  if (kind !== 'string') return value as Cell;
  return typeof value === 'string' ? wellFormed(value, repairs) : String(value);
}

/**
 * The JSON text of an array or object as a JSON cell holds it: `JSON.stringify`'s (`stringifyExact`,
 * so a bigint keeps its digits), with every lone surrogate repaired. Some of it is built here, the
 * same text sooner: `[]` and `{}` (`isEmptyObject`), and a list of plain strings (`plainStringsJson`).
 */
export function jsonText(value: object, repairs: Repairs): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const text = plainStringsJson(value);
    if (text !== undefined) return text;
  } else if (isEmptyObject(value)) {
    return '{}';
  }
  return wellFormedJson(stringifyExact(value)!, repairs);
}

/**
 * `["a","b"]` for a list of strings that JSON writes as they are (no quote, backslash, control
 * character or surrogate), else undefined. The flat layout writes every list as JSON text (a forum
 * post's tags, a video's eight lists of URLs): `JSON.stringify` took about 105 ns for a list of two
 * words and this about 48 ns, and its text is a rope of the list's own strings, which the column's
 * text queue copies once when it joins them (`parquet-cells.ts`) where `JSON.stringify` had copied
 * them before. A list is read as `JSON.stringify` reads it, element by element (a hole is not a
 * string), and a string's own `toJSON` is never called (JSON calls it only for objects and bigints).
 */
function plainStringsJson(list: readonly unknown[]): string | undefined {
  let text = '["';
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (typeof item !== 'string' || !isPlainJsonString(item)) return undefined;
    text += i === 0 ? item : `","${item}`;
  }
  return `${text}"]`;
}

/** Whether JSON writes `text` between its quotes as it is. */
function isPlainJsonString(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 /* " */ || code === 0x5c /* \ */ || (code >= 0xd800 && code <= 0xdfff)) return false;
  }
  return true;
}

/**
 * Whether `value` is a plain object without keys, whose JSON is `{}`. Records carry many (a forum
 * post six: `all_awardings`, `media_embed`, …, each a JSON column since it is always empty), and
 * stringifying them took about 60 ms of the writer's thread on 100,000 sandbox posts. An empty array
 * (`[]`, as a post's `awardings` mostly is in the flat layout's JSON columns) is not stringified either.
 */
function isEmptyObject(value: unknown): boolean {
  return isPlainObject(value) && !hasKeys(value);
}

/**
 * The kind of a column from how many values of each kind it received: the commonest kind, widened
 * by every other kind the lattice joins it with (`joinKinds`); values of a kind it cannot join go
 * to `_extra`. `undefined` when there is no value at all: absence decides nothing.
 */
export function settleKind(counts: ReadonlyMap<ColumnKind, number>): ColumnKind | undefined {
  // Commonest first; ties broken by the order of COLUMN_KINDS, so the result never depends on arrival.
  const ordered = [...counts].sort(([a, m], [b, n]) => n - m || COLUMN_KINDS.indexOf(a) - COLUMN_KINDS.indexOf(b));
  let kind: ColumnKind | undefined;
  for (const [each] of ordered) kind = kind === undefined ? each : (joinKinds(kind, each) ?? kind);
  return kind;
}

/** Whether an object has a key (`for…in` stops at the first: no array of keys). */
export function hasKeys(object: PlainObject): boolean {
  for (const _ in object) return true;
  return false;
}

/** Deepest nesting a record may have: far beyond real data, well within what recursion and `JSON.stringify` handle. */
export const MAX_NESTING = 1000;

export function tooDeep(): TypeError {
  return new TypeError(`A record nests arrays or objects deeper than ${MAX_NESTING} levels`);
}

export function checkRecord(record: unknown): PlainObject {
  if (!isPlainObject(record)) {
    const what = record === null ? 'null' : Array.isArray(record) ? 'an array' : typeof record;
    throw new TypeError(`A record must be a plain object, got ${what}`);
  }
  return record;
}
