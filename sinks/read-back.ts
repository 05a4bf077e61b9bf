/**
 * Records read back from the Parquet files our writer made, as they were written: a dataset merges
 * new versions of records into its parts this way (`src/dataset/parts.ts`), and a file whose sample
 * typed a column too narrowly is re-encoded from its own rows (`parquet-widening.ts`). A flat row
 * (Parquet or CSV) becomes a record again by splitting its column names and `_extra`; a nested
 * row by its fields' shapes (`socialstream.columns`).
 *
 * Row groups are read one at a time, in order, so memory holds one group's rows, never the file's.
 */
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, type FileMetaData } from 'hyparquet';
import { parseExact } from '../src/exact-json.ts';
import { setField } from '../src/operations/unkey.ts';
import { COLUMNS_METADATA_KEY } from './parquet-file.ts';
import type { NestedField, Shape } from './shapes.ts';
import { OVERFLOW_NAME, splitColumnName } from './rows.ts';
import { isPlainObject } from './values.ts';
import type { ColumnKind } from '../src/column-kinds.ts';

type Record_ = Record<string, unknown>;

/**
 * Names (lower case) of top-level fields a record holds in its field `_extra`, by path, rather than at
 * its top: a dataset's record's own fields named like a column the dataset adds (`_fetched_at`, `_key`,
 * `_extra`, its Hive key; `src/dataset/columns.ts`). A part writes them into its `_extra` column beside
 * the dataset's own columns of those names, and reading it back puts them into the record's `_extra` again.
 */
export type HeldNames = ReadonlySet<string>;

const NONE_HELD: HeldNames = new Set();

/**
 * The records of a Parquet file written by `parquet.ts` (either layout), in order, a row group at a
 * time; `held`: a dataset part's (`HeldNames`).
 */
export async function* readParquetRecords(path: string, held: HeldNames = NONE_HELD): AsyncGenerator<Record_> {
  const file = await asyncBufferFromFile(path);
  const metadata = await parquetMetadataAsync(file);
  const entry = metadata.key_value_metadata?.find(({ key }) => key === COLUMNS_METADATA_KEY);
  const described = JSON.parse(entry?.value ?? '{}') as {
    layout?: 'nested' | 'flat';
    columns?: { name: string; kind: ColumnKind; map?: true }[];
    fields?: NestedField[];
    overflow?: string;
  };
  const overflow = described.overflow ?? '_extra';
  const nested = described.layout === 'nested';
  const columns = described.columns ?? [];
  // A flat MAP column's leaves have paths (`name`, `key_value`, `key`), which hyparquet would join with the dots in flat names: read under names of our own.
  const ownNamed = nested || columns.some((column) => column.map !== undefined);
  const { renamed, root } = ownNamed ? ownNames(metadata) : { renamed: metadata, root: undefined };
  const fields = described.fields ?? [];
  const flatRecord = flatRecords(new Map(columns.map((column) => [column.name, column.kind])), overflow, held);
  const flatColumns = root === undefined || nested ? undefined : [...root.children];
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = (await parquetReadObjects({ file, metadata: renamed, rowStart, rowEnd })) as Record<string, unknown>[];
    rowStart = rowEnd;
    for (const row of rows) {
      if (nested) yield nestedRecordOf(row, fields, root!, overflow, held);
      else if (flatColumns === undefined) yield flatRecord(row as Record<string, Cell>);
      else yield flatRecord(Object.fromEntries(flatColumns.map(([name, element]) => [name, cellOf(row[element.token], element)])));
    }
  }
}

/** A cell as a reader gives it back: hyparquet's INT64 is a bigint and its TIMESTAMP a Date. */
export type Cell = string | number | boolean | bigint | Date | null | undefined;

/** A MAP column's cell as an object of its entries (a flat dataset's, `PartRowOptions.maps`): `mapOf`. */
type MapEntries = Record<string, Cell>;

/**
 * How a flat row (Parquet or CSV) becomes the record it was: dotted names split, `_extra` put back
 * at its paths. Each column's name is split once, not once a row (a re-encoded file's rows went
 * through `splitColumnName` per cell, most of the time it took to read them back).
 */
export function flatRecords(kinds: ReadonlyMap<string, ColumnKind>, overflow: string, held: HeldNames = NONE_HELD): (row: Record<string, Cell | MapEntries>) => Record_ {
  const columns = new Map<string, { keys: string[]; kind: ColumnKind | undefined }>();
  const columnOf = (name: string) => {
    let column = columns.get(name);
    if (column === undefined) columns.set(name, (column = { keys: splitColumnName(name), kind: kinds.get(name) }));
    return column;
  };
  return (row) => {
    const record: Record_ = {};
    let spilled: string | undefined;
    for (const name in row) {
      const cell = row[name];
      // NULL and an absent field are the same in a part (sinks/README.md): a record gets neither.
      if (cell === null || cell === undefined) continue;
      const { keys, kind } = columnOf(name);
      if (isPlainObject(cell)) setPath(record, keys, entriesOf(cell, kind));
      else if (name === overflow) spilled = String(cell);
      else setPath(record, keys, valueOf(cell, kind));
    }
    if (spilled !== undefined) putSpilled(record, spilled, held);
    return record;
  };
}

/**
 * Puts the values of a row's `_extra` cell back where they were: each at its path, but those of `held` names into the
 * record's field `_extra` (as staged), where they cannot take the place of the dataset's own columns of those names.
 */
function putSpilled(record: Record_, cell: string, held: HeldNames): void {
  let holder: Record_ | undefined;
  for (const [path, value] of Object.entries(parseExact(cell) as Record_)) {
    const keys = splitColumnName(path);
    if (keys.length === 1 && held.has(keys[0].toLowerCase())) setField((holder ??= {}), path, value);
    else setPath(record, keys, value);
  }
  if (holder !== undefined) setField(record, OVERFLOW_NAME, holder);
}

/** A MAP's entries as the object they were written from, each value as its kind gives it back. */
function entriesOf(map: MapEntries, kind: ColumnKind | undefined): Record_ {
  const object: Record_ = {};
  for (const [key, cell] of Object.entries(map)) setField(object, key, cell === null || cell === undefined ? null : valueOf(cell, kind));
  return object;
}

/** A schema element of a part read under names of our own: the name hyparquet gives it, its children by their names in the part. */
interface Element {
  readonly token: string;
  readonly children: ReadonlyMap<string, Element>;
  /** A LIST's element (its repeated group's one child), which hyparquet gives as the list's items. */
  readonly item: Element | undefined;
  /** A MAP's repeated group, which hyparquet gives as a list of `{key, value}` structs (`ownNames`). */
  readonly entries: Element | undefined;
}

/** A flat part's cell: a MAP column's entries as an object (`mapOf`), any other column's cell as it is. */
function cellOf(cell: unknown, element: Element): Cell | MapEntries {
  return element.entries === undefined ? (cell as Cell) : mapOf(cell, element, (value) => (value ?? null) as Cell);
}

/**
 * A MAP's entries, which hyparquet gives as a list of key/value structs (`ownNames`), as one object,
 * each value through `read`: built by `Object.fromEntries`, so a key `__proto__` stays a key.
 */
function mapOf<T>(cell: unknown, element: Element, read: (value: unknown, valueElement: Element) => T): Record<string, T> | null {
  if (cell === null || cell === undefined) return null;
  const entries = element.entries!;
  const key = entries.children.get('key')!;
  const value = entries.children.get('value')!;
  const list = (cell as Record<string, unknown>)[entries.token] as Array<Record<string, unknown>>;
  return Object.fromEntries(list.map((entry) => [entry[key.token] as string, read(entry[value.token], value)]));
}

/**
 * The part's metadata with its schema elements renamed `f<index>`, and the tree that names them
 * back. hyparquet assembles a nested column by its fields' paths joined with `.` and sets each
 * field by assignment, so a struct's field `a.b` and its field `a` → `b` met as one path (one
 * value lost, or a list where a number was), and a field `__proto__` set a prototype instead of a
 * value. Names of our own have neither problem; the record is built back from the part's names.
 * A MAP is read as the list of key/value structs it is stored as, not as a MAP: hyparquet builds a
 * MAP's object by assignment too, so an entry `__proto__` was lost (`mapOf` builds it instead).
 */
function ownNames(metadata: FileMetaData): { renamed: FileMetaData; root: Element } {
  const names: string[] = [];
  const paths = new Map<string, string[]>();
  let index = 0;
  /** `keep`: the element keeps its name (the root). */
  const visit = (path: readonly string[], tokenPath: readonly string[], keep: boolean): Element => {
    const element = metadata.schema[index];
    const token = keep ? element.name : `f${index}`;
    names[index] = token;
    index += 1;
    const children = new Map<string, Element>();
    for (let i = 0; i < (element.num_children ?? 0); i++) {
      const name = metadata.schema[index].name;
      children.set(name, visit([...path, name], [...tokenPath, `f${index}`], false));
    }
    if (children.size === 0) paths.set(JSON.stringify(path), [...tokenPath]);
    // hyparquet's lists: a LIST group's repeated child, and that child's one child when it has one.
    const repeated = element.converted_type === 'LIST' ? [...children.values()][0] : undefined;
    const item = repeated === undefined ? undefined : repeated.children.size === 1 ? [...repeated.children.values()][0] : repeated;
    const entries = isMap(element) ? [...children.values()][0] : undefined;
    return { token, children, item, entries };
  };
  const root = visit([], [], true);
  const renamed: FileMetaData = {
    ...metadata,
    // A MAP read as what it is stored as: a group holding a repeated group of key/value structs.
    schema: metadata.schema.map((element, i) => (isMap(element) ? { ...element, name: names[i], converted_type: undefined, logical_type: undefined } : { ...element, name: names[i] })),
    row_groups: metadata.row_groups.map((group) => ({
      ...group,
      columns: group.columns.map((column) =>
        column.meta_data === undefined ? column : { ...column, meta_data: { ...column.meta_data, path_in_schema: paths.get(JSON.stringify(column.meta_data.path_in_schema))! } },
      ),
    })),
  };
  return { renamed, root };
}

function isMap(element: FileMetaData['schema'][number]): boolean {
  return element.converted_type === 'MAP' || element.logical_type?.type === 'MAP';
}

/**
 * A row of a nested part as the record it was: struct fields and top-level columns that are NULL
 * are absent (NULL and absent are the same in a part), list elements keep their nulls, JSON text
 * leaves are parsed, and `_extra`'s values go back to their dotted paths.
 */
function nestedRecordOf(row: Record<string, unknown>, fields: readonly NestedField[], root: Element, overflow: string, held: HeldNames): Record_ {
  const record = structOf(row, fields, root);
  const token = root.children.get(overflow)?.token;
  const spilled = token === undefined ? undefined : row[token];
  if (typeof spilled === 'string') putSpilled(record, spilled, held);
  return record;
}

function structOf(object: Record<string, unknown>, fields: readonly NestedField[], element: Element): Record_ {
  const record: Record_ = {};
  for (const { name, shape } of fields) {
    const child = element.children.get(name);
    const value = child === undefined ? undefined : nestedValueOf(object[child.token], shape, child);
    if (value !== undefined) setField(record, name, value);
  }
  return record;
}

function nestedValueOf(value: unknown, shape: Shape, element: Element): unknown {
  if (value === null || value === undefined) return undefined;
  if ('struct' in shape) return structOf(value as Record<string, unknown>, shape.struct, element);
  if ('list' in shape) return (value as unknown[]).map((item) => nestedValueOf(item, shape.list, element.item!) ?? null);
  if ('map' in shape) return mapOf(value, element, (item, valueElement) => nestedValueOf(item, shape.map, valueElement) ?? null);
  return valueOf(value as Cell, shape.kind);
}

function valueOf(cell: Cell, kind: ColumnKind | undefined): unknown {
  // An INT64 past 2^53 stays the bigint it was written from; a smaller one is the number it was.
  if (typeof cell === 'bigint') return Number.isSafeInteger(Number(cell)) ? Number(cell) : cell;
  if (cell instanceof Date) return cell.toISOString();
  if (kind === 'json' && typeof cell === 'string') return parseExact(cell);
  return cell;
}

function setPath(record: Record_, keys: readonly string[], value: unknown): void {
  let target = record;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i];
    const next = Object.hasOwn(target, key) ? target[key] : undefined;
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) target = next as Record_;
    else {
      const child: Record_ = {};
      setField(target, key, child);
      target = child;
    }
  }
  setField(target, keys[keys.length - 1], value);
}
