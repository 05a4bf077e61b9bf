/**
 * The one record → row mapping that CSV and Parquet share.
 *
 * - Nested plain objects flatten into dotted columns (`author.name`) down to `maxDepth` segments.
 *   Arrays, empty objects, keyed collections (`{"0": …, "1": …}`), objects keyed by data (more
 *   than `MAP_THRESHOLD` distinct keys over the sample) and objects below `maxDepth` are one value
 *   each, kept as JSON text.
 * - A key that holds `.` or `\` is escaped (`\.`, `\\`) inside a column name, so `{"a.b": 1}` is
 *   column `a\.b` and `{a: {b: 1}}` is column `a.b`: every name maps back to exactly one path.
 *   (`__proto__` becomes `\__proto__`, which splits back the same way.)
 * - Columns come from a sample of the first records (or the `columns` option). A value with no
 *   column — a field first seen after the sample — goes into the overflow column (`_extra`), a JSON
 *   object keyed by column name, so no value is ever lost; a Parquet file then widens its columns
 *   by what overflowed as it closes (`parquet-widening.ts`).
 * - Typed layouts (Parquet) give each column a kind from the sample, on the type lattice
 *   (`joinKinds`, docs/types.md); a value the kind cannot hold also goes to `_extra` (the column is
 *   NULL in that row), never as quoted JSON text in the column. Untyped layouts (CSV) take any value.
 * - A `bigint` (an integer past 2^53, docs/guide/big-integers.md) keeps its digits: a `bigint` column
 *   (INT64) holds it exactly, as CSV and JSON text write its digits; one beyond int64 is text.
 * - A value with a `toJSON` method (a `Date`, a `URL`) is what `toJSON` returns, as `JSON.stringify`
 *   sees it (`jsonValue`): a valid `Date` is its ISO instant, so a timestamp; an invalid one null.
 * - NULL and an absent field read the same: both are an empty cell.
 * - Text is well-formed: a lone surrogate in a string, a key or JSON text becomes U+FFFD, counted
 *   (`strings.ts`), so CSV and Parquet write what NDJSON writes and say so.
 */
import { KeyIndex } from './key-index.ts';
import { stringifyExact } from '../src/exact-json.ts';
import { Repairs, wellFormed, wellFormedJson } from './strings.ts';
import type { KnownOptions } from '../src/known-options.ts';

/**
 * `integer` holds safe integers; `bigint` holds every integer within int64 exactly, `number`s and
 * `bigint`s alike (both INT64 in Parquet).
 */
export const COLUMN_KINDS = ['integer', 'bigint', 'double', 'boolean', 'string', 'timestamp', 'json'] as const;
/**
 * The kind of a column a dataset schema records: `integer`, `bigint`, `double`, `boolean`,
 * `string`, `timestamp` or `json`.
 */
export type ColumnKind = (typeof COLUMN_KINDS)[number];

export interface Column {
  /** Escaped, dotted path: `author.name`, `a\.b`. */
  readonly name: string;
  /** What the column holds (a MAP column: its values); `undefined` in untyped layouts. */
  readonly kind: ColumnKind | undefined;
  /**
   * A typed layout's column that nothing in the sample typed (only null there): written as
   * `string`, but a value it receives goes to `_extra`, where the file's fix-up sees it and types
   * the column by it (`parquet-widening.ts`).
   */
  readonly untyped?: boolean;
  /** A MAP column: the object at its path is keyed by data, each entry a key and a value of `kind` (`PartRowOptions.maps`). */
  readonly map?: true;
}

/** A cell: a number, boolean or text; a timestamp column's cells are epoch milliseconds; a bigint column's may be bigints. */
export type Cell = string | number | bigint | boolean | null;

/** A MAP column's cell: its entries' keys and their values' cells, in the record's order. */
export interface MapCell {
  readonly keys: string[];
  readonly values: Cell[];
}

/** A cell of a row: a MAP column's is a `MapCell` (only a flat dataset's Parquet parts plan one). */
export type RowCell = Cell | MapCell;

/** Options every sink that writes rows takes (CSV, Parquet): how columns are found and named. */
export interface RowOptions {
  /** Column names (escaped, dotted), in order. Default: every leaf path seen in the sample, in order of first appearance. */
  columns?: readonly string[];
  /** How many leading records decide the columns (and, for Parquet, their types). Default 1000. */
  sampleSize?: number;
  /** Deepest dotted path a nested object is flattened into. Default 3. */
  maxDepth?: number;
  /**
   * Kinds fixed in advance, by column name (Parquet); other columns take the sample's. A dataset pins
   * its recorded schema this way, so every part file types a column alike.
   */
  kinds?: Readonly<Record<string, ColumnKind>>;
}

/**
 * What a dataset's part writers take besides `RowOptions` (`src/dataset/parts.ts`), never a file's sink: `held`, that
 * a record's field named like the overflow column holds values bound for it by path (a record's own fields named like a
 * column the dataset adds, `src/dataset/columns.ts`), written into it as they are rather than as a field; and
 * `maps`, the pinned columns that are MAPs (a flat dataset's objects keyed by data), of the kind `kinds` gives their values.
 */
export interface PartRowOptions extends RowOptions {
  held?: boolean;
  maps?: readonly string[];
}

export const DEFAULT_SAMPLE_SIZE = 1000;
/**
 * An object with more distinct keys than this is keyed by data (dates, ids), not by field names:
 * nested Parquet makes it a MAP, the flat layout one value of JSON text, never a column per key.
 * DuckDB's `read_json` draws the line at 200 too (its `map_inference_threshold`).
 */
export const MAP_THRESHOLD = 200;
export const DEFAULT_MAX_DEPTH = 3;
export const OVERFLOW_NAME = '_extra';

export type PlainObject = Record<string, unknown>;

/** The int64 range: a bigint within it is a `bigint` cell (Parquet INT64); one beyond it is JSON text. */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function isInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

function escapeKey(key: string): string {
  // `__proto__` as a plain property name would set a prototype in the writers' lookup objects.
  if (key === '__proto__') return '\\' + key;
  return key.includes('.') || key.includes('\\') ? key.replace(/[\\.]/g, (c) => '\\' + c) : key;
}

/** The keys a column name was built from: `splitColumnName('a\\.b.c')` is `['a.b', 'c']`. */
export function splitColumnName(name: string): string[] {
  const keys: string[] = [];
  let key = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === '\\' && i + 1 < name.length) key += name[++i];
    else if (c === '.') {
      keys.push(key);
      key = '';
    } else key += c;
  }
  keys.push(key);
  return keys;
}

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
 * The escaped, dotted name of field `key` of the object named `prefix`; `undefined` names the record
 * itself. Not `''`: that is the name of a record's field whose key is empty, whose own field `a` is
 * `.a` (a record's `a` is `a`).
 */
export function joinName(prefix: string | undefined, key: string): string {
  return prefix === undefined ? escapeKey(key) : `${prefix}.${escapeKey(key)}`;
}

const HYPHEN = 0x2d;
const COLON = 0x3a;

/** Only `YYYY-MM-DDTHH:mm:ss.sssZ`: the one form that comes back unchanged from a TIMESTAMP. */
export function timestampOf(text: string): number | undefined {
  // Each separator is looked at in its place, and each digit as it is read: no regular expression.
  if (text.length !== 24) return undefined;
  if (text.charCodeAt(4) !== HYPHEN || text.charCodeAt(7) !== HYPHEN || text.charCodeAt(10) !== 0x54 /* T */) return undefined;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return undefined;
  if (text.charCodeAt(19) !== 0x2e /* . */ || text.charCodeAt(23) !== 0x5a /* Z */) return undefined;
  // Read the fields straight from the character codes: this runs once per cell of every timestamp
  // column, and building a Date to format it back was the Parquet sink's costliest step. `digits`
  // is -1 where a field holds anything but digits.
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const millisecond = digits(text, 20, 3);
  // Only a real instant formats back unchanged: no 2025-02-30, no 24:00 or :60. Before 1970 stays
  // text, as the README promises: a rule from parquetjs-lite's own TIMESTAMP_MILLIS conversion, which
  // refuses negative values (parquet-columns.ts would encode them; lifting the rule is a choice).
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millisecond < 0) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
}

/** The number `count` decimal digits at `start` spell, or -1 if any of them is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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

export function kindOf(value: unknown, path: string): ColumnKind {
  checkJsonValue(value, path);
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isSafeInteger(value) ? 'integer' : 'double';
    case 'bigint':
      // Past int64 no integer holds it: it is the text of its digits (docs/guide/big-integers.md).
      return isInt64(value) ? 'bigint' : 'string';
    case 'string':
      return timestampOf(value) === undefined ? 'string' : 'timestamp';
    default:
      return 'json';
  }
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
  if (kind === 'json') {
    if (Array.isArray(value) && value.length === 0) return '[]';
    return isEmptyObject(value) ? '{}' : wellFormedJson(stringifyExact(value)!, repairs);
  }
  if (kind !== 'string') return value as Cell;
  return typeof value === 'string' ? wellFormed(value, repairs) : String(value);
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

function untypedCell(value: unknown, repairs: Repairs): Cell {
  if (typeof value === 'string') return wellFormed(value, repairs);
  return value !== null && typeof value === 'object' ? wellFormedJson(stringifyExact(value)!, repairs) : (value as Cell);
}

/**
 * The type lattice every layout and the dataset schema share (docs/types.md): the narrowest
 * kind that holds values of both `a` and `b`, or `undefined` when no widening holds both (then the
 * values of the other kind go to `_extra`). Integers join bigints in an exact `bigint` (INT64);
 * integers and doubles make `double` (a bigint then does not fit and goes to `_extra` with its
 * digits); numbers and text make `string` (the digits); ISO instants and other text make `string`.
 * Booleans and JSON text join nothing but themselves.
 */
export function joinKinds(a: ColumnKind, b: ColumnKind): ColumnKind | undefined {
  if (a === b) return a;
  const pair = new Set([a, b]);
  const numeric = (kind: ColumnKind) => kind === 'integer' || kind === 'bigint' || kind === 'double';
  if (numeric(a) && numeric(b)) return pair.has('double') ? 'double' : 'bigint';
  const textual = (kind: ColumnKind) => kind === 'string' || kind === 'timestamp';
  if ((textual(a) || numeric(a)) && (textual(b) || numeric(b))) return 'string';
  return undefined;
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

/**
 * A fixed set of columns and how a record fills them. Built once from the sample; `toRow` then maps
 * each record to one cell per column plus the overflow cell, in `names` order.
 */
export class RowLayout {
  readonly columns: readonly Column[];
  /** The overflow column: `_extra`, or with more leading `_` if the records have a field of that name. */
  readonly overflowName: string;
  /** The column names as a tree of raw keys, so a record is matched key by key without building names. */
  private readonly root: KeyIndex<PathNode>;
  /** Fills the row `toRow` gives, record after record. */
  private filler: RowFiller | undefined;

  private constructor(
    columns: Column[],
    /** Whether a record's field named like the overflow column holds values bound for it (`PartRowOptions.held`). */
    private readonly held = false,
  ) {
    this.columns = columns;
    this.root = pathTree(columns.map((column) => column.name));
    const names = new Set(columns.map((column) => column.name));
    let overflow = OVERFLOW_NAME;
    while (names.has(overflow)) overflow = '_' + overflow;
    this.overflowName = overflow;
  }

  /** Column names as written in the file: the columns, then the overflow column. */
  get names(): string[] {
    return [...this.columns.map((column) => column.name), this.overflowName];
  }

  static plan(sample: readonly unknown[], options: PartRowOptions, typed: boolean): RowLayout {
    const { columns, maxDepth = DEFAULT_MAX_DEPTH, kinds, held } = options;
    const names = columns ? [...columns] : discoverColumns(sample, maxDepth);
    if (!typed) return new RowLayout(names.map((name) => ({ name, kind: undefined, untyped: false })), held);
    const pinned = (name: string): boolean => kinds !== undefined && Object.hasOwn(kinds, name);
    // A dataset pins every column: then the sample need not be counted.
    const counts = names.every(pinned) ? [] : RowLayout.tally(sample, names.map((name) => ({ name, kind: undefined })));
    const maps = new Set(options.maps);
    return new RowLayout(
      names.map((name, i) => {
        const map = maps.has(name) ? { map: true as const } : {};
        if (pinned(name)) return { name, kind: kinds![name], untyped: false, ...map };
        const kind = settleKind(counts[i]);
        return { name, kind: kind ?? 'string', untyped: kind === undefined, ...map };
      }),
      held,
    );
  }

  /**
   * The columns a sample's records fill, the kind each would get and how many values of each kind
   * it received; `undefined` for a column that only ever holds null (absence decides nothing).
   * `maps` (a flat dataset's, `SchemaTracker`): the paths whose objects are MAP columns, counted by
   * their values' kinds; no other object is then taken as keyed by data, since the dataset counts
   * an object's keys over every run itself.
   */
  static observe(sample: readonly unknown[], maxDepth = DEFAULT_MAX_DEPTH, maps?: ReadonlySet<string>): Array<Column & { counts: ReadonlyMap<ColumnKind, number> }> {
    const names = discoverColumns(sample, maxDepth, maps);
    const columns = names.map((name): Column => ({ name, kind: undefined, ...(maps?.has(name) === true ? { map: true as const } : {}) }));
    const counts = RowLayout.tally(sample, columns);
    return columns.map((column, i) => ({ ...column, kind: settleKind(counts[i]), counts: counts[i] }));
  }

  /** How many values of each kind every column receives from the sample (a MAP column: its entries' values). */
  private static tally(sample: readonly unknown[], columns: readonly Column[]): Map<ColumnKind, number>[] {
    const untyped = new RowLayout(columns.map(({ name }) => ({ name, kind: undefined })));
    const counts = columns.map(() => new Map<ColumnKind, number>());
    const count = (i: number, value: unknown, path: string) => {
      const kind = kindOf(value, path);
      counts[i].set(kind, (counts[i].get(kind) ?? 0) + 1);
    };
    const tally: Visitor = {
      column: (i, value, path) => {
        if (columns[i].map === undefined) count(i, value, path);
        // A MAP's entries type its values; a value at its path that is no object types nothing (it goes to `_extra`).
        else if (isPlainObject(value)) {
          for (const key in value) {
            const entry = jsonValue(value[key], key);
            if (entry !== null && entry !== undefined) count(i, entry, joinName(path, key));
          }
        }
      },
      overflow: () => undefined,
    };
    for (const record of sample) untyped.walk(checkRecord(record), untyped.root, undefined, tally);
    return counts;
  }

  /**
   * One cell per column, then the overflow cell (a JSON object, or null when nothing overflowed).
   * Strings repaired on the way are counted in `repairs`; what overflowed is handed to `spilled`.
   * The row is the layout's own, filled again by the next call (a sink writes it at once): a new
   * row for each record was garbage the writer's thread collected again and again.
   */
  toRow(record: unknown, repairs: Repairs = new Repairs(), spilled?: (values: PlainObject) => void): RowCell[] {
    const filler = (this.filler ??= new RowFiller(this.columns));
    filler.begin(repairs, spilled);
    try {
      this.walk(checkRecord(record), this.root, undefined, filler);
      return filler.finish();
    } catch (error) {
      // `JSON.stringify` of a value nested thousands of levels deep overflows the stack.
      if (error instanceof RangeError) throw tooDeep();
      throw error;
    }
  }

  /**
   * Visits every non-null value of a record: `column` for a value that has a column, `overflow` for
   * one that has none. An object is descended into only where columns lie beneath it.
   */
  private walk(object: PlainObject, children: KeyIndex<PathNode>, prefix: string | undefined, visitor: Visitor): void {
    // `for…in` rather than `Object.keys`: no array per object, and each field read through V8's
    // enumeration cache. A plain object has no enumerable inherited keys (`isPlainObject`).
    let at = 0;
    for (const key in object) {
      const value = jsonValue(object[key], key);
      if (value === undefined) continue;
      if (this.held && prefix === undefined && key === this.overflowName && isPlainObject(value)) {
        for (const path in value) visitor.overflow(path, jsonValue(value[path], path));
        continue;
      }
      const node = children.find(key, at++);
      if (node === undefined) {
        // NULL and an absent field read the same: a null needs no column.
        if (value === null) continue;
        // Not a column and no column beneath it: the name is only built for what overflows.
        const name = joinName(prefix, key);
        if (value !== null) checkJsonValue(value, name);
        visitor.overflow(name, value);
      } else if (node.children !== undefined && isPlainObject(value) && hasKeys(value)) {
        this.walk(value, node.children, node.name, visitor);
      } else if (node.index !== undefined) {
        if (value !== null) visitor.column(node.index, value, node.name);
      } else if (value !== null) {
        // A null above mapped columns reads as those columns being NULL; any other value is kept.
        checkJsonValue(value, node.name);
        visitor.overflow(node.name, value);
      }
    }
  }
}

/** One key of a column name: the column it ends (if any) and the keys that continue it. */
interface PathNode {
  /** The escaped, dotted name up to and including this key. */
  name: string;
  index?: number;
  children?: KeyIndex<PathNode>;
}

function pathTree(names: readonly string[]): KeyIndex<PathNode> {
  const root = new KeyIndex<PathNode>();
  names.forEach((name, index) => {
    let children = root;
    let prefix: string | undefined;
    const keys = splitColumnName(name);
    keys.forEach((key, depth) => {
      prefix = joinName(prefix, key);
      let node = children.get(key);
      if (node === undefined) children.set(key, (node = { name: prefix }));
      if (depth === keys.length - 1) node.index = index;
      else children = node.children ??= new KeyIndex<PathNode>();
    });
  });
  return root;
}

interface Visitor {
  column(index: number, value: unknown, name: string): void;
  overflow(name: string, value: unknown): void;
}

/** Fills one row: each value into its column's cell, or into the overflow object when it does not fit. */
class RowFiller implements Visitor {
  private readonly row: RowCell[];
  private spilled: PlainObject | undefined;
  /** Those of the record being filled (`begin`). */
  private repairs!: Repairs;
  private noteSpilled: ((values: PlainObject) => void) | undefined;

  constructor(private readonly columns: readonly Column[]) {
    this.row = new Array<RowCell>(columns.length + 1).fill(null);
  }

  /** Empties the row for the next record. */
  begin(repairs: Repairs, noteSpilled: ((values: PlainObject) => void) | undefined): void {
    this.row.fill(null);
    this.spilled = undefined;
    this.repairs = repairs;
    this.noteSpilled = noteSpilled;
  }

  column(index: number, value: unknown, name: string): void {
    const column = this.columns[index];
    const { kind, map } = column;
    if (kind === undefined) {
      checkJsonValue(value, name);
      this.row[index] = untypedCell(value, this.repairs);
    } else if (map !== undefined && isPlainObject(value)) {
      this.row[index] = this.mapCell(kind, value, name);
    } else if (column.untyped === true) {
      checkJsonValue(value, name);
      this.overflow(name, value);
    } else {
      const cell = map === undefined ? this.leafCell(kind, value, name) : undefined;
      if (cell === undefined) this.overflow(name, value);
      else this.row[index] = cell;
    }
  }

  /** The cell of a value in a column of `kind`, or undefined when it cannot hold it (the value then goes to `_extra`). */
  private leafCell(kind: ColumnKind, value: unknown, name: string): Cell | undefined {
    checkJsonValue(value, name);
    if (kind === 'timestamp') return typeof value === 'string' ? timestampOf(value) : undefined;
    return fits(kind, value) ? typedCell(kind, value, this.repairs) : undefined;
  }

  /** A MAP column's entries: each key with its value's cell; a value its kind cannot hold goes to `_extra` at its own path. */
  private mapCell(kind: ColumnKind, object: PlainObject, name: string): MapCell {
    const keys: string[] = [];
    const values: Cell[] = [];
    for (const key in object) {
      const value = jsonValue(object[key], key);
      if (value === undefined) continue;
      const cell = value === null ? null : this.leafCell(kind, value, joinName(name, key));
      if (cell === undefined) {
        this.overflow(joinName(name, key), value);
        continue;
      }
      keys.push(wellFormed(key, this.repairs));
      values.push(cell);
    }
    return { keys, values };
  }

  overflow(name: string, value: unknown): void {
    (this.spilled ??= {})[name] = value;
  }

  finish(): RowCell[] {
    if (this.spilled !== undefined) {
      this.row[this.columns.length] = wellFormedJson(stringifyExact(this.spilled)!, this.repairs);
      this.noteSpilled?.(this.spilled);
    }
    return this.row;
  }
}

function hasKeys(object: PlainObject): boolean {
  for (const _ in object) return true;
  return false;
}

/** Throws the TypeError `toRow` would, for a record that is only buffered for now. */
export function checkJsonRecord(record: unknown): void {
  const visitFields = (object: object, path: string | undefined, depth: number): void => {
    if (depth > MAX_NESTING) throw tooDeep();
    for (const [key, item] of Object.entries(object)) visit(jsonValue(item, key), joinName(path, key), depth + 1);
  };
  const visit = (value: unknown, path: string, depth: number): void => {
    if (value === null || value === undefined) return;
    if (typeof value === 'object') visitFields(value, path, depth);
    else checkJsonValue(value, path);
  };
  visitFields(checkRecord(record), undefined, 1);
}

/** Deepest nesting a record may have: far beyond real data, well within what recursion and `JSON.stringify` handle. */
const MAX_NESTING = 1000;

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

/**
 * Every leaf path of the sample, in order of first appearance; a path seen only as null still gets a column. An object
 * keyed by data is one column: those of `maps` when given, else those the sample shows (`keyedByData`).
 */
function discoverColumns(sample: readonly unknown[], maxDepth: number, maps?: ReadonlySet<string>): string[] {
  const keyed = maps ?? keyedByData(sample, maxDepth);
  const seen = new Map<string, boolean>();
  const visit = (object: PlainObject, prefix: string | undefined, depth: number): void => {
    for (const key of Object.keys(object)) {
      const value = jsonValue(object[key], key);
      if (value === undefined) continue;
      const name = joinName(prefix, key);
      if (isPlainObject(value) && depth < maxDepth) {
        const keys = Object.keys(value);
        // An object keyed by data is one value (JSON text), not a column per key (docs/types.md).
        if (keys.length > 0 && !keyed.has(name) && !isKeyedCollection(keys)) {
          visit(value, name, depth + 1);
          continue;
        }
      }
      seen.set(name, (seen.get(name) ?? false) || value !== null);
    }
  };
  for (const record of sample) visit(checkRecord(record), undefined, 1);
  const parents = parentsOf([...seen.keys()]);
  return [...seen.keys()].filter((name) => seen.get(name) || !parents.has(name));
}

/**
 * The paths of the sample's objects keyed by data: more than `MAP_THRESHOLD` distinct keys over
 * all its records (dates spread over many records, a few each), as the nested layout counts them.
 */
function keyedByData(sample: readonly unknown[], maxDepth: number): Set<string> {
  const keys = new Map<string, Set<string>>();
  const keyed = new Set<string>();
  const visit = (object: PlainObject, prefix: string | undefined, depth: number): void => {
    for (const key of Object.keys(object)) {
      const value = jsonValue(object[key], key);
      if (!isPlainObject(value) || depth >= maxDepth) continue;
      const name = joinName(prefix, key);
      if (keyed.has(name)) continue;
      let distinct = keys.get(name);
      if (distinct === undefined) keys.set(name, (distinct = new Set()));
      for (const each of Object.keys(value)) distinct.add(each);
      // Past the threshold its keys are no longer counted (nor what lies beneath them).
      if (distinct.size > MAP_THRESHOLD) keyed.add(name);
      else visit(value, name, depth + 1);
    }
  };
  for (const record of sample) visit(checkRecord(record), undefined, 1);
  return keyed;
}

function parentsOf(names: readonly string[]): Set<string> {
  const parents = new Set<string>();
  for (const name of names) {
    const keys = splitColumnName(name);
    let prefix: string | undefined;
    for (const key of keys.slice(0, -1)) {
      prefix = joinName(prefix, key);
      parents.add(prefix);
    }
  }
  return parents;
}

/** The names of `RowOptions`, for the sinks' lists of the options they know. */
export const ROW_OPTIONS = { columns: true, sampleSize: true, maxDepth: true, kinds: true } as const satisfies KnownOptions<RowOptions>;

/** Checks the options the row mapping reads, naming the bad one. */
export function checkRowOptions(options: RowOptions): void {
  const { columns, sampleSize, maxDepth, kinds } = options;
  if (kinds !== undefined) {
    const known = new Set<string>(COLUMN_KINDS);
    if (typeof kinds !== 'object' || kinds === null || Object.values(kinds).some((kind) => !known.has(kind))) {
      throw new TypeError(`kinds must map column names to one of ${COLUMN_KINDS.join(', ')}`);
    }
  }
  if (sampleSize !== undefined && !(Number.isSafeInteger(sampleSize) && sampleSize >= 1)) {
    throw new TypeError(`sampleSize must be a positive integer, got ${String(sampleSize)}`);
  }
  if (maxDepth !== undefined && !(Number.isSafeInteger(maxDepth) && maxDepth >= 1)) {
    throw new TypeError(`maxDepth must be a positive integer, got ${String(maxDepth)}`);
  }
  if (columns !== undefined) {
    if (!Array.isArray(columns) || columns.length === 0) {
      throw new TypeError('columns must be a non-empty array of column names');
    }
    const unique = new Set<string>();
    for (const name of columns) {
      if (typeof name !== 'string' || name === '') {
        throw new TypeError(`columns holds ${JSON.stringify(name)}, not a column name`);
      }
      if (unique.has(name)) throw new TypeError(`columns names ${name} twice`);
      unique.add(name);
    }
  }
}
