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
 * - A typed layout maps the records that fit its columns as they are by code made for them
 *   (`rows-compiled.ts`), once records enough came; any other record, by the walk, which decides
 *   everything above.
 */
import { FastPath } from './fast-path.ts';
import { KeyIndex } from './key-index.ts';
import { compileRowFiller, type CompiledRowFiller, type PathNode, type RowHost } from './rows-compiled.ts';
import { Repairs, wellFormed } from './strings.ts';
import { checkJsonValue, checkRecord, fits, hasKeys, isKeyedCollection, isPlainObject, jsonText, jsonValue, kindOf, MAX_NESTING, settleKind, tooDeep, typedCell, type Cell, type PlainObject } from './values.ts';
import { COLUMN_KINDS, timestampOf, type ColumnKind } from '../src/column-kinds.ts';
import type { KnownOptions } from '../src/known-options.ts';


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


/**
 * The escaped, dotted name of field `key` of the object named `prefix`; `undefined` names the record
 * itself. Not `''`: that is the name of a record's field whose key is empty, whose own field `a` is
 * `.a` (a record's `a` is `a`).
 */
export function joinName(prefix: string | undefined, key: string): string {
  return prefix === undefined ? escapeKey(key) : `${prefix}.${escapeKey(key)}`;
}

function untypedCell(value: unknown, repairs: Repairs): Cell {
  if (typeof value === 'string') return wellFormed(value, repairs);
  return value !== null && typeof value === 'object' ? jsonText(value, repairs) : (value as Cell);
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
  /** A typed layout's compiled row filling (`rows-compiled.ts`). */
  readonly fastPath = new FastPath<CompiledRowFiller>(() =>
    this.columns.every((column) => column.kind !== undefined) ? compileRowFiller(this.root, this.columns, this.filler!.host, this.held ? this.overflowName : undefined, this.ignored)
      : undefined,
  );
  /** Per level of the column names, keys without a column seen holding null there: the compiled filling skips them too. */
  private readonly ignored = new Map<KeyIndex<PathNode>, string[]>();

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
    const object = checkRecord(record);
    const compiled = this.fastPath.next();
    if (compiled !== undefined) {
      if (filler.filledBy(compiled, object, repairs)) return filler.row;
      this.fastPath.refusedOne();
    }
    filler.begin(repairs, spilled);
    try {
      this.walk(object, this.root, undefined, filler);
      return filler.finish();
    } catch (error) {
      // `JSON.stringify` of a value nested thousands of levels deep overflows the stack.
      if (error instanceof RangeError) throw tooDeep();
      throw error;
    }
  }

  /** A key without a column at a level that held null here: the compiled filling skips it too, once made again. */
  private ignore(children: KeyIndex<PathNode>, key: string): void {
    let keys = this.ignored.get(children);
    if (keys === undefined) this.ignored.set(children, (keys = []));
    this.fastPath.skipLater(keys, key);
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
        if (value === null) {
          this.ignore(children, key);
          continue;
        }
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
  /** The row, filled again for each record. */
  readonly row: RowCell[];
  /** What the compiled row filling asks of the filler (`rows-compiled.ts`). */
  readonly host: RowHost = {
    leafCell: (index, value) => this.leafCell(this.columns[index].kind!, value, this.columns[index].name),
    repaired: (text) => wellFormed(text, this.repairs),
  };
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

  /** Fills the row by `compiled`; false, with no repair counted, when it refused the record (for the walk). */
  filledBy(compiled: CompiledRowFiller, record: PlainObject, repairs: Repairs): boolean {
    this.repairs = repairs;
    const repaired = repairs.count;
    try {
      if (compiled(record, this.row)) return true;
    } catch {
      // The walk meets the same value and throws its own error, naming the field.
    }
    repairs.count = repaired;
    return false;
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
      this.row[this.columns.length] = jsonText(this.spilled, this.repairs);
      this.noteSpilled?.(this.spilled);
    }
    return this.row;
  }
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
