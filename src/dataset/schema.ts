/**
 * A dataset's schema per operation: the column names and kinds its part files use, recorded by the
 * first run and kept across runs so every part types a column alike and DuckDB unions them as one
 * table. A column's kind is the narrowest that holds every value the dataset has seen (`takes`):
 * a later run may add columns (`evolve`) and widen a kind; a value no widening holds goes to
 * `_extra`, as in every sink. Each page is compared with the schema as it stands, so `freeze` can
 * stop at the first drifting page, before another is bought.
 */
import type { SchemaDrift } from '../errors.ts';
import { DEFAULT_MAX_DEPTH, joinName, MAP_THRESHOLD, OVERFLOW_NAME, RowLayout, splitColumnName } from '../../sinks/rows.ts';
import { joinKinds, type ColumnKind } from '../column-kinds.ts';

/**
 * A column of a dataset's schema. A flat dataset's are leaves, named by escaped dotted paths as
 * the sinks write them; a nested dataset's (`schema-nested.ts`) are its records' top-level fields,
 * each a leaf, a STRUCT of named columns or a LIST of one shape.
 */
export type SchemaColumn = { name: string } & ColumnShape;

/**
 * A leaf's kind in a dataset's schema: a sink's kind, or `untyped` for a field no value has typed
 * yet (only null, `[]`, `{}`). An untyped column is recorded but left out of the parts, so every
 * reader reads it as NULL (or not at all) and no part has a column typed by absence; its first
 * real value types it.
 */
export type DatasetKind = ColumnKind | 'untyped';

/**
 * A column's shape: a leaf's kind, a STRUCT's fields (in order), a LIST's element, or a MAP's
 * value: an object whose keys are data (dates, ids), from string keys to one shape of value. An
 * object field is a MAP once it has more distinct keys than `MAP_THRESHOLD` over every record the
 * dataset has seen (`mapOf`), so its type stays the same however many keys later runs bring.
 */
export type ColumnShape =
  | { kind: DatasetKind }
  | { kind: 'struct'; fields: SchemaColumn[] }
  | { kind: 'list'; element: ColumnShape }
  | MapShape;

/** A MAP from string keys to values of one shape. */
export type MapShape = { kind: 'map'; value: ColumnShape };

/** A leaf column: every column of a flat dataset but its MAPs. */
export interface LeafColumn {
  name: string;
  kind: DatasetKind;
}

/**
 * A flat dataset's MAP column (Parquet parts): an object keyed by data at its path, whose columns once passed
 * `MAP_THRESHOLD` distinct keys over every run (`foldKeyedColumns`), from string keys to values of one leaf kind
 * (objects and arrays among them JSON text, as the flat layout writes them).
 */
export interface FlatMapColumn {
  name: string;
  kind: 'map';
  value: { kind: DatasetKind };
}

/** A flat dataset's column: a leaf, or a MAP of leaves. */
export type FlatColumn = LeafColumn | FlatMapColumn;

/** A conflict: values of kind `seen` that a column of kind `recorded` cannot hold, `values` of them, put in `_extra` by path. */
export type Conflict = { column: string; recorded: string; seen: string; values: number };

/** A page's new columns and conflicting values, measured against the schema before it. */
export interface PageDrift {
  /** In a nested dataset, a struct's new field is named by its dotted path, and its kind may be `struct` or `list`. */
  added: { name: string; kind: string }[];
  conflicting: Conflict[];
}

/** How a dataset's schema follows the records of a run (`SchemaTracker` flat, `NestedSchemaTracker` nested). */
export interface DatasetSchemaTracker {
  /** True when the dataset had no schema yet: this run records the first one, so nothing drifts. */
  readonly first: boolean;
  /** Takes in one page; returns how it drifts from the schema as it stood before the page. */
  observe(records: readonly unknown[], maxDepth?: number): PageDrift;
  /** The schema to write with: recorded columns first. */
  columns(): SchemaColumn[];
  /** The whole run's drift (empty for the run that records the first schema). */
  drift(): SchemaDrift;
}

/**
 * The kind a column of kind `recorded` has once it takes values of kind `seen` (docs/types.md
 * "Types"): `recorded` when it holds them, a wider kind when the lattice widens it (`joinKinds`:
 * integer → bigint, integer → double, numbers → string), or `undefined` when none can hold both
 * and the values go to `_extra`. A kind is never narrowed or flipped. A double column cannot hold
 * an integer past 2^53 exactly, nor a bigint column a fraction without rounding the integers it
 * holds: such values go to `_extra`, with every digit.
 */
export function takes(recorded: DatasetKind, seen: ColumnKind): ColumnKind | undefined {
  if (recorded === 'untyped') return seen;
  if ((recorded === 'double' && seen === 'bigint') || (recorded === 'bigint' && seen === 'double')) return undefined;
  return joinKinds(recorded, seen);
}

/**
 * The kind a column first takes from a page's values (the commonest kind, widened by those the
 * lattice joins: `settleKind`), then every kind of value it met: conflicts for those it cannot hold.
 */
export function takeAll(recorded: DatasetKind, counts: ReadonlyMap<ColumnKind, number>, conflict: (seen: ColumnKind, values: number) => void): DatasetKind {
  const ordered = [...counts].sort(([, m], [, n]) => n - m);
  let kind = recorded;
  for (const [seen, values] of ordered) {
    const taken = takes(kind, datasetKind(seen));
    if (taken === undefined) conflict(datasetKind(seen), values);
    else kind = taken;
  }
  return kind;
}

/**
 * A dataset keeps ISO instants as text (DuckDB: `CAST(col AS TIMESTAMP)`). Its first reader for
 * merging (parquetjs-lite) could not read TIMESTAMP back; hyparquet can, but datasets recorded such
 * columns as `string`, and a column's kind must not change under them.
 */
export function datasetKind(kind: ColumnKind): ColumnKind {
  return kind === 'timestamp' ? 'string' : kind;
}

/**
 * A flat dataset's schema over a run: dotted leaf columns, widened on the lattice. With `maps` (Parquet parts), an
 * object keyed by data is one MAP column once its keys over every run pass `MAP_THRESHOLD` (`foldKeyedColumns`, after
 * each page): the columns it had fold into it, the drift says `widened (views_by_day: struct → map)`, and the parts
 * that hold them are rewritten by the widening rewrite. Without (CSV, NDJSON), such an object stays columns.
 */
export class SchemaTracker implements DatasetSchemaTracker {
  /** Columns by name: recorded ones, then those added this run; a MAP's kind is its values'. */
  #columns = new Map<string, DatasetKind>();
  /** The MAP columns among them. */
  readonly #maps = new Set<string>();
  readonly #recorded: ReadonlyMap<string, DatasetKind>;
  /** Columns some record of this run carried (null or not). */
  readonly #seen = new Set<string>();
  readonly #conflicting = new Map<string, Conflict>();

  /** The columns' names in lower case: a name that differs from one only by case gets no column (`caseless`). */
  #cased = new Set<string>();

  constructor(
    recorded: readonly SchemaColumn[],
    /** Whether objects keyed by data become MAP columns (a flat dataset's Parquet parts can hold them). */
    private readonly maps = false,
  ) {
    for (const column of flatColumnsOf(recorded)) {
      this.#columns.set(column.name, column.kind === 'map' ? column.value.kind : column.kind);
      if (column.kind === 'map') this.#maps.add(column.name);
    }
    for (const name of this.#columns.keys()) this.#cased.add(caseless(name));
    this.#recorded = new Map(this.#columns);
  }

  /** True when the dataset had no schema yet: this run records the first one, so nothing drifts. */
  get first(): boolean {
    return this.#recorded.size === 0;
  }

  /** Takes in one page; returns how it drifts from the schema as it stood before the page. */
  observe(records: readonly unknown[], maxDepth = DEFAULT_MAX_DEPTH): PageDrift {
    const drift: PageDrift = { added: [], conflicting: [] };
    for (const observed of RowLayout.observe(records, maxDepth, this.maps ? this.#maps : undefined)) {
      // A record's field `_extra` holds values bound for the overflow column (`HeldNames`), never a column.
      if (isHolder(observed.name)) continue;
      this.#seen.add(observed.name);
      const known = this.#columns.has(observed.name);
      if (!known) {
        if (this.#cased.has(caseless(observed.name))) continue;
        this.#cased.add(caseless(observed.name));
      }
      const kind = takeAll(this.#columns.get(observed.name) ?? 'untyped', observed.counts, (seen, values) => {
        const conflict = addConflict(this.#conflicting, { column: observed.name, recorded: this.#columns.get(observed.name) ?? 'untyped', seen, values });
        drift.conflicting.push(conflict);
      });
      this.#columns.set(observed.name, kind);
      if (!known && !this.first) drift.added.push({ name: observed.name, kind });
    }
    if (this.maps) this.#fold(drift);
    return drift;
  }

  /** Folds the objects keyed by data into MAP columns; a page that made one adds it, not the columns it folded. */
  #fold(drift: PageDrift): void {
    const before = new Set(this.#maps);
    const folded = foldKeyedColumns(this.columns());
    if (folded.length === this.#columns.size) return;
    this.#columns = new Map(folded.map((column) => [column.name, column.kind === 'map' ? column.value.kind : column.kind]));
    for (const column of folded) if (column.kind === 'map') this.#maps.add(column.name);
    this.#cased = new Set([...this.#columns.keys()].map(caseless));
    if (this.first) return;
    const added = drift.added.filter(({ name }) => this.#columns.has(name));
    drift.added.splice(0, drift.added.length, ...added);
    for (const name of this.#maps) if (!before.has(name)) drift.added.push({ name, kind: 'map' });
  }

  /** The schema to write with: recorded columns first; a column never given a value is `untyped`, and left out of the parts. */
  columns(): FlatColumn[] {
    return [...this.#columns].map(([name, kind]) => (this.#maps.has(name) ? { name, kind: 'map', value: { kind } } : { name, kind }));
  }

  /** The whole run's drift (empty for the run that records the first schema). */
  drift(): SchemaDrift {
    if (this.first) return { added: [], missing: [], conflicting: [] };
    // A recorded column folded into a MAP this run: the MAP is a widening of the object it lay in, not a new column.
    const into = new Map<string, string>();
    for (const name of this.#recorded.keys()) {
      if (this.#columns.has(name)) continue;
      const map = [...this.#maps].find((each) => name.startsWith(`${each}.`));
      if (map !== undefined) into.set(name, map);
    }
    const widened: { column: string; from: string; to: string }[] = [...this.#recorded].flatMap(([column, from]) => {
      const to = this.#columns.get(column);
      return to === undefined || to === from ? [] : [{ column, from, to }];
    });
    for (const map of new Set(into.values())) widened.push({ column: map, from: 'struct', to: 'map' });
    const seen = (name: string) => this.#seen.has(name) || (into.has(name) && this.#seen.has(into.get(name)!));
    return {
      // Added: every column this run brought that the recorded schema lacks, with the kind it settled on.
      added: [...this.#columns]
        .filter(([name]) => !this.#recorded.has(name) && !(this.#maps.has(name) && [...into.values()].includes(name)))
        .map(([column, kind]) => ({ column, kind: this.#maps.has(column) ? 'map' : kind })),
      missing: [...this.#recorded.keys()].filter((name) => !seen(name)),
      conflicting: [...this.#conflicting.values()],
      ...(widened.length === 0 ? {} : { widened }),
    };
  }
}

/** Whether a flat column's name lies in a record's field `_extra`, which holds values bound for the overflow column. */
function isHolder(name: string): boolean {
  return name === OVERFLOW_NAME || name.startsWith(`${OVERFLOW_NAME}.`);
}

/**
 * Names of columns (and of a struct's fields) are told apart without case. DuckDB matches them
 * without case, so `url` and `URL` would read as one column, and a struct with both fails to bind:
 * the name seen first gets the column, and a later one that differs from it only by case gets
 * none, so the writers put its values in `_extra` under its path (`json_extract(_extra, '$.URL')`),
 * and a merge gives them back from there. `caseless(name)` is the key the names are told apart by.
 */
export function caseless(name: string): string {
  return name.toLowerCase();
}

/** Adds `conflict` to a run's conflicts, one per column and kind, counting its values; returns it (as counted on this page). */
export function addConflict(conflicts: Map<string, Conflict>, conflict: Conflict): Conflict {
  const id = `${conflict.column}\u0000${conflict.seen}`;
  const held = conflicts.get(id);
  conflicts.set(id, held === undefined ? { ...conflict } : { ...held, values: held.values + conflict.values });
  return conflict;
}

/** A flat dataset's columns: leaves, and MAPs of leaves (`state.ts` refuses a schema file that says otherwise). */
export function flatColumnsOf(columns: readonly SchemaColumn[]): FlatColumn[] {
  return columns.map((column) => {
    if (column.kind === 'map' && column.value.kind !== 'struct' && column.value.kind !== 'list' && column.value.kind !== 'map') return { name: column.name, kind: 'map', value: { kind: column.value.kind } };
    if (column.kind === 'struct' || column.kind === 'list' || column.kind === 'map') throw new TypeError(`the flat column ${column.name} cannot be a ${column.kind}`);
    return column;
  });
}

/**
 * `columns` (a flat dataset's) with each object keyed by data folded into one MAP column: the columns under a path whose
 * distinct next keys pass `MAP_THRESHOLD` over them all (dates spread over runs, or two writers' shares of one
 * object), and those under a recorded MAP. The MAP takes the place of the first column it folds; its values' kind is
 * theirs merged on the lattice (`takes`: a kind that does not join leaves it, and such values go to `_extra`), a column
 * deeper than a key being an object, JSON text. A record's top level is never a map.
 */
export function foldKeyedColumns(columns: readonly FlatColumn[]): FlatColumn[] {
  const paths = columns.map((column) => splitColumnName(column.name));
  const keysUnder = new Map<string, Set<string>>();
  paths.forEach((keys) => {
    for (let depth = 1; depth < keys.length; depth++) {
      const prefix = pathName(keys.slice(0, depth));
      let next = keysUnder.get(prefix);
      if (next === undefined) keysUnder.set(prefix, (next = new Set()));
      next.add(keys[depth]);
    }
  });
  const leaves = new Set(columns.flatMap((column) => (column.kind === 'map' ? [] : [column.name])));
  const folded = new Set(columns.flatMap((column) => (column.kind === 'map' ? [column.name] : [])));
  for (const [prefix, keys] of keysUnder) if (keys.size > MAP_THRESHOLD && !leaves.has(prefix)) folded.add(prefix);
  /** The outermost folded path a column lies in (or is), if any. */
  const mapOf = (keys: readonly string[]): string | undefined => {
    for (let depth = 1; depth <= keys.length; depth++) {
      const prefix = pathName(keys.slice(0, depth));
      if (folded.has(prefix)) return prefix;
    }
    return undefined;
  };
  const maps = new Map<string, FlatMapColumn>();
  const result: FlatColumn[] = [];
  columns.forEach((column, i) => {
    const map = mapOf(paths[i]);
    if (map === undefined) {
      result.push(column);
      return;
    }
    let into = maps.get(map);
    if (into === undefined) {
      maps.set(map, (into = { name: map, kind: 'map', value: { kind: 'untyped' } }));
      result.push(into);
    }
    const depth = splitColumnName(map).length;
    // A column the map was, its values' kind; one a key's, its kind; one deeper, an object: JSON text.
    const kind: DatasetKind = column.name === map ? (column as FlatMapColumn).value.kind : paths[i].length === depth + 1 && column.kind !== 'map' ? column.kind : 'json';
    if (kind !== 'untyped') into.value = { kind: takes(into.value.kind, kind) ?? into.value.kind };
  });
  return result;
}

/** The escaped, dotted name of a path of one key or more. */
function pathName(keys: readonly string[]): string {
  return keys.slice(1).reduce((name, key) => joinName(name, key), joinName(undefined, keys[0]));
}

/**
 * A flat dataset's schema merged: `mergeSchemas` (leaves widen, another writer's columns are kept), then its objects
 * keyed by data folded into MAPs (`foldKeyedColumns`), so two writers' shares of one object that pass the threshold
 * together make one MAP, and a recorded map takes in the columns another writer added under it.
 */
export function mergeFlatSchemas(recorded: readonly SchemaColumn[], run: readonly SchemaColumn[]): SchemaColumn[] {
  return foldKeyedColumns(flatColumnsOf(mergeSchemas(recorded, run)));
}

/**
 * Columns of `recorded` (widened where `run` widened them: `takes`; a struct or list given the
 * fields `run` added inside it; an untyped one typed), then those of `run` it lacks: another writer
 * may have added some meanwhile.
 */
export function mergeSchemas(recorded: readonly SchemaColumn[], run: readonly SchemaColumn[]): SchemaColumn[] {
  const byName = new Map(run.map((column) => [column.name, column]));
  const kept = recorded.map((column): SchemaColumn => ({ name: column.name, ...mergeShape(column, byName.get(column.name)) }));
  const names = new Set(recorded.map((column) => column.name));
  return [...kept, ...run.filter((column) => !names.has(column.name))];
}

/**
 * `recorded` with what `run` holds merged in. Objects merge as objects: two structs whose fields
 * together pass `MAP_THRESHOLD`, or a struct and a map, make a map (two writers may each have added
 * a share of one object's keys).
 */
export function mergeShape(recorded: ColumnShape, run: ColumnShape | undefined): ColumnShape {
  if (run === undefined || run.kind === 'untyped') return shapeOf(recorded);
  if (recorded.kind === 'untyped') return shapeOf(run);
  if (recorded.kind === 'struct' || recorded.kind === 'map') {
    if (run.kind !== 'struct' && run.kind !== 'map') return shapeOf(recorded);
    if (recorded.kind === 'struct' && run.kind === 'struct') {
      const fields = mergeSchemas(recorded.fields, run.fields);
      return fields.length > MAP_THRESHOLD ? mapOf(fields) : { kind: 'struct', fields };
    }
    return { kind: 'map', value: mergeShape(mapValue(recorded), mapValue(run)) };
  }
  if (recorded.kind === 'list') return run.kind === 'list' ? { kind: 'list', element: mergeShape(recorded.element, run.element) } : shapeOf(recorded);
  if (run.kind === 'struct' || run.kind === 'list' || run.kind === 'map') return shapeOf(recorded);
  return { kind: takes(recorded.kind, run.kind) ?? recorded.kind };
}

/**
 * The map a struct's fields become once they pass `MAP_THRESHOLD`: its value holds every field's
 * shape, merged in order (`mergeShape`: leaves widen on the lattice; a field of a shape the others
 * cannot hold leaves the value as the earlier fields made it, and its values go to `_extra`).
 */
export function mapOf(fields: readonly ColumnShape[]): MapShape {
  return { kind: 'map', value: fields.reduce<ColumnShape>((value, field) => mergeShape(value, field), { kind: 'untyped' }) };
}

/** The shape of a map's values, or of every field of a struct taken as one. */
function mapValue(shape: ColumnShape & { kind: 'struct' | 'map' }): ColumnShape {
  return shape.kind === 'map' ? shape.value : mapOf(shape.fields).value;
}

/** A shape without the name a column carries beside it. */
function shapeOf(shape: ColumnShape): ColumnShape {
  if (shape.kind === 'struct') return { kind: 'struct', fields: shape.fields };
  if (shape.kind === 'list') return { kind: 'list', element: shape.element };
  if (shape.kind === 'map') return { kind: 'map', value: shape.value };
  return { kind: shape.kind };
}

/** A column's type in words, as `dataset info` shows it: `integer`, `list<string>`, `map<string, integer>`, `struct<nickname: string, stats: struct<plays: integer>>`. */
export function typeName(shape: ColumnShape): string {
  if (shape.kind === 'struct') return `struct<${shape.fields.map((field) => `${field.name}: ${typeName(field)}`).join(', ')}>`;
  if (shape.kind === 'list') return `list<${typeName(shape.element)}>`;
  if (shape.kind === 'map') return `map<string, ${typeName(shape.value)}>`;
  return shape.kind;
}

export function hasDrift(drift: PageDrift | SchemaDrift): boolean {
  return drift.added.length > 0 || drift.conflicting.length > 0 || ('widened' in drift && (drift.widened?.length ?? 0) > 0);
}

