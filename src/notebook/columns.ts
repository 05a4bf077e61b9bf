/**
 * The columns a preview shows, named and flattened the way the sinks name a file's columns
 * (`sinks/rows.ts`), so what a notebook shows is what a CSV or Parquet export will hold:
 * nested plain objects become dotted names (`author.name`) down to three segments; arrays, empty
 * objects, keyed collections (`{"0": …, "1": …}`) and deeper objects stay one value; a key holding
 * `.` or `\` is escaped (`a\.b`), `__proto__` is `\__proto__`, and an empty key an empty segment
 * (`{"": {"a": 1}}` is `.a`). The client never imports the sinks, hence this small copy of the
 * naming rule; the types are the sinks' own (`src/column-kinds.ts`).
 */
import { joinKinds, valueKind, type ColumnKind } from '../column-kinds.ts';

/** What a column holds: the sinks' kinds, plus `null` (only nulls seen) and `mixed` (kinds that do not share a column). */
export type ColumnType = ColumnKind | 'null' | 'mixed';

/** A column of a `RecordTable`: its dotted name and the type of its values. */
export interface TableColumn {
  /** Escaped, dotted path: `author.name`, `a\.b`. */
  readonly name: string;
  readonly type: ColumnType;
  /** Rows where it is null or absent. */
  readonly missing: number;
}

/** The deepest dotted path, as the sinks' default `maxDepth`. */
const MAX_DEPTH = 3;
/** The column of records that are not objects (a preview of numbers or strings). */
export const VALUE_COLUMN = '(value)';

type PlainObject = Record<string, unknown>;

function isPlainObject(value: unknown): value is PlainObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function escapeKey(key: string): string {
  // As the sinks name a field `__proto__`: `\__proto__` (there, a plain name would set a prototype in their lookup objects).
  if (key === '__proto__') return '\\' + key;
  return key.includes('.') || key.includes('\\') ? key.replace(/[\\.]/g, (c) => '\\' + c) : key;
}

/** `record` as leaf path → value, in key order; `undefined` fields are absent, as in JSON. */
export function flatten(record: unknown): Map<string, unknown> {
  const cells = new Map<string, unknown>();
  if (!isPlainObject(record)) {
    cells.set(VALUE_COLUMN, record);
    return cells;
  }
  const visit = (object: PlainObject, prefix: string | undefined, depth: number): void => {
    for (const key of Object.keys(object)) {
      const value = object[key];
      if (value === undefined) continue;
      // `undefined` is the record: a field with an empty key is named `''`, and its field `a` is `.a`.
      const name = prefix === undefined ? escapeKey(key) : `${prefix}.${escapeKey(key)}`;
      if (isPlainObject(value) && depth < MAX_DEPTH) {
        const keys = Object.keys(value);
        if (keys.length > 0 && !keys.every((k, i) => k === String(i))) {
          visit(value, name, depth + 1);
          continue;
        }
      }
      cells.set(name, value);
    }
  };
  visit(record, undefined, 1);
  return cells;
}

/**
 * The type of a column whose values have these kinds, by the sinks' lattice (`joinKinds`); kinds
 * that no column holds together are `mixed` (the sinks keep the column's commonest kind and put the
 * others in `_extra`).
 */
function settle(kinds: ReadonlySet<ColumnKind>): ColumnType {
  let settled: ColumnKind | undefined;
  for (const kind of kinds) {
    const joined = settled === undefined ? kind : joinKinds(settled, kind);
    if (joined === undefined) return 'mixed';
    settled = joined;
  }
  return settled ?? 'null';
}

/**
 * The columns of `rows` (flattened records), in order of first appearance, with their types. A name
 * that is a leaf in one record and a parent in another (`a: null`, then `a: {b: 1}`) keeps only the
 * leaves below it when it only ever held null, as the sinks do.
 */
export function columnsOf(rows: readonly ReadonlyMap<string, unknown>[]): TableColumn[] {
  const kinds = new Map<string, Set<ColumnKind>>();
  for (const row of rows) {
    for (const [name, value] of row) {
      let seen = kinds.get(name);
      if (seen === undefined) kinds.set(name, (seen = new Set()));
      if (value !== null) seen.add(valueKind(value));
    }
  }
  const parents = new Set<string>();
  for (const name of kinds.keys()) {
    for (let i = name.indexOf('.'); i !== -1; i = name.indexOf('.', i + 1)) {
      if (!isEscaped(name, i)) parents.add(name.slice(0, i));
    }
  }
  const columns: TableColumn[] = [];
  for (const [name, seen] of kinds) {
    if (seen.size === 0 && parents.has(name)) continue;
    const missing = rows.reduce((n, row) => (row.get(name) === undefined || row.get(name) === null ? n + 1 : n), 0);
    columns.push({ name, type: settle(seen), missing });
  }
  return columns;
}

/** Whether the character at `index` is escaped by an odd run of backslashes before it. */
function isEscaped(name: string, index: number): boolean {
  let slashes = 0;
  for (let i = index - 1; i >= 0 && name[i] === '\\'; i--) slashes++;
  return slashes % 2 === 1;
}
