/**
 * A dataset's schema per operation: the column names and kinds its part files use, recorded by the
 * first run and kept across runs so every part types a column alike and DuckDB unions them as one
 * table. A later run may add columns (`evolve`); a value whose kind a column cannot hold goes to
 * `_extra`, as in every sink. Each page is compared with the schema as it stands, so `freeze` can
 * stop at the first drifting page, before another is bought.
 */
import type { SchemaDrift } from '../src/errors.ts';
import { DEFAULT_MAX_DEPTH, RowLayout, splitColumnName, type ColumnKind } from './rows.ts';

/**
 * A column of a dataset's schema. A flat dataset's are leaves, named by escaped dotted paths as
 * the sinks write them; a nested dataset's (`dataset-nested.ts`) are its records' top-level fields,
 * each a leaf, a STRUCT of named columns or a LIST of one shape.
 */
export type SchemaColumn = { name: string } & ColumnShape;

/** A column's shape: a leaf's kind, a STRUCT's fields (in order) or a LIST's element. */
export type ColumnShape = { kind: ColumnKind } | { kind: 'struct'; fields: SchemaColumn[] } | { kind: 'list'; element: ColumnShape };

/** A leaf column: every column of a flat dataset. */
export interface LeafColumn {
  name: string;
  kind: ColumnKind;
}

/** A page's new columns and conflicting values, measured against the schema before it. */
export interface PageDrift {
  /** In a nested dataset, a struct's new field is named by its dotted path, and its kind may be `struct` or `list`. */
  added: { name: string; kind: string }[];
  conflicting: { column: string; recorded: string; seen: string }[];
}

/** How a dataset's schema follows the records of a run (`SchemaTracker` flat, `NestedSchemaTracker` nested). */
export interface DatasetSchemaTracker {
  /** True when the dataset had no schema yet: this run records the first one, so nothing drifts. */
  readonly first: boolean;
  /** Takes in one page; returns how it drifts from the schema as it stood before the page. */
  observe(records: readonly unknown[], maxDepth?: number): PageDrift;
  /** The recorded `double` columns among `fields`: a page of that operation would give them bigints. */
  doubles(fields: readonly string[]): string[];
  /** The recorded `double` columns to which `records` give a bigint (see `SchemaTracker.rounding`). */
  rounding(records: readonly unknown[]): { column: string; value: bigint }[];
  /** The schema to write with: recorded columns first. */
  columns(): SchemaColumn[];
  /** The whole run's drift (empty for the run that records the first schema). */
  drift(): SchemaDrift;
}

/** Whether a column of kind `recorded` holds a value of kind `seen` unchanged. */
export function holds(recorded: ColumnKind, seen: ColumnKind): boolean {
  return recorded === seen || recorded === 'json' || (seen === 'integer' && (recorded === 'double' || recorded === 'bigint'));
}

/**
 * An `integer` column that meets a bigint becomes `bigint`: both are INT64, so its parts need no
 * rewriting, and from then on it holds integers past 2^53 exactly.
 */
export function widens(recorded: ColumnKind | 'struct' | 'list', seen: ColumnKind | 'struct' | 'list'): boolean {
  return recorded === 'integer' && seen === 'bigint';
}

/**
 * A dataset keeps ISO instants as text (DuckDB: `CAST(col AS TIMESTAMP)`). Its first reader for
 * merging (parquetjs-lite) could not read TIMESTAMP back; hyparquet can, but datasets recorded such
 * columns as `string`, and a column's kind must not change under them.
 */
export function datasetKind(kind: ColumnKind): ColumnKind {
  return kind === 'timestamp' ? 'string' : kind;
}

export class SchemaTracker implements DatasetSchemaTracker {
  /** Columns by name: recorded ones, then those added this run; `undefined` until a non-null value is seen. */
  readonly #columns = new Map<string, ColumnKind | undefined>();
  readonly #recorded: ReadonlySet<string>;
  /** Columns some record of this run carried (null or not). */
  readonly #seen = new Set<string>();
  readonly #conflicting = new Map<string, { column: string; recorded: ColumnKind; seen: ColumnKind }>();

  /** The columns' names in lower case: a name that differs from one only by case gets no column (`caseless`). */
  readonly #cased = new Set<string>();

  constructor(recorded: readonly SchemaColumn[]) {
    for (const { name, kind } of leavesOf(recorded)) this.#columns.set(name, kind);
    for (const name of this.#columns.keys()) this.#cased.add(caseless(name));
    this.#recorded = new Set(recorded.map((column) => column.name));
  }

  /** True when the dataset had no schema yet: this run records the first one, so nothing drifts. */
  get first(): boolean {
    return this.#recorded.size === 0;
  }

  /** Takes in one page; returns how it drifts from the schema as it stood before the page. */
  observe(records: readonly unknown[], maxDepth = DEFAULT_MAX_DEPTH): PageDrift {
    const drift: PageDrift = { added: [], conflicting: [] };
    for (const observed of RowLayout.observe(records, maxDepth)) {
      const seen = observed.kind === undefined ? undefined : datasetKind(observed.kind);
      this.#seen.add(observed.name);
      if (!this.#columns.has(observed.name)) {
        if (this.#cased.has(caseless(observed.name))) continue;
        this.#cased.add(caseless(observed.name));
        this.#columns.set(observed.name, seen);
        if (!this.first) drift.added.push({ name: observed.name, kind: seen ?? 'string' });
        continue;
      }
      const recorded = this.#columns.get(observed.name);
      if (seen === undefined) continue;
      // A column that only ever held null takes the first kind it is given.
      if (recorded === undefined || widens(recorded, seen)) {
        this.#columns.set(observed.name, seen);
      } else if (!holds(recorded, seen)) {
        const conflict = { column: observed.name, recorded, seen };
        this.#conflicting.set(observed.name, conflict);
        drift.conflicting.push(conflict);
      }
    }
    return drift;
  }

  /** The recorded `double` columns among `fields`: a page of that operation would give them bigints. */
  doubles(fields: readonly string[]): string[] {
    return fields.filter((name) => this.#recorded.has(name) && this.#columns.get(name) === 'double');
  }

  /**
   * The recorded `double` columns to which `records` give a bigint (an integer past 2^53), which a
   * DOUBLE would round. A dataset refuses such a page (docs/guide/big-integers.md): its parts may hold
   * that column's earlier values rounded already.
   */
  rounding(records: readonly unknown[]): { column: string; value: bigint }[] {
    return bigintsIn(records, [...this.#recorded].filter((name) => this.#columns.get(name) === 'double'));
  }

  /** The schema to write with: recorded columns first; a column never given a value is text, as in the sinks. */
  columns(): LeafColumn[] {
    return [...this.#columns].map(([name, kind]) => ({ name, kind: kind ?? 'string' }));
  }

  /** The whole run's drift (empty for the run that records the first schema). */
  drift(): SchemaDrift {
    if (this.first) return { added: [], missing: [], conflicting: [] };
    return {
      // Added: every column this run brought that the recorded schema lacks, with the kind it settled on.
      added: [...this.#columns].filter(([name]) => !this.#recorded.has(name)).map(([column, kind]) => ({ column, kind: kind ?? 'string' })),
      missing: [...this.#recorded].filter((name) => !this.#seen.has(name)),
      conflicting: [...this.#conflicting.values()],
    };
  }
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

/** The first bigint `records` give each of `columns` (escaped dotted paths through objects). */
export function bigintsIn(records: readonly unknown[], columns: readonly string[]): { column: string; value: bigint }[] {
  const found: { column: string; value: bigint }[] = [];
  for (const name of columns) {
    const keys = splitColumnName(name);
    for (const record of records) {
      let value: unknown = record;
      for (const key of keys) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
      if (typeof value === 'bigint') {
        found.push({ column: name, value });
        break;
      }
    }
  }
  return found;
}

/** A flat dataset's columns, which are all leaves (`dataset-state.ts` refuses a schema file that says otherwise). */
export function leavesOf(columns: readonly SchemaColumn[]): LeafColumn[] {
  return columns.map((column) => {
    if (column.kind === 'struct' || column.kind === 'list') throw new TypeError(`the flat column ${column.name} cannot be a ${column.kind}`);
    return column;
  });
}

/**
 * Columns of `recorded` (kept as they are, but an `integer` one `run` widened to `bigint`, and a
 * struct or list given the fields `run` added inside it), then those of `run` it lacks: another
 * writer may have added some meanwhile.
 */
export function mergeSchemas(recorded: readonly SchemaColumn[], run: readonly SchemaColumn[]): SchemaColumn[] {
  const byName = new Map(run.map((column) => [column.name, column]));
  const kept = recorded.map((column): SchemaColumn => ({ name: column.name, ...mergeShape(column, byName.get(column.name)) }));
  const names = new Set(recorded.map((column) => column.name));
  return [...kept, ...run.filter((column) => !names.has(column.name))];
}

function mergeShape(recorded: ColumnShape, run: ColumnShape | undefined): ColumnShape {
  if (run === undefined) return shapeOf(recorded);
  if (recorded.kind === 'struct') return run.kind === 'struct' ? { kind: 'struct', fields: mergeSchemas(recorded.fields, run.fields) } : shapeOf(recorded);
  if (recorded.kind === 'list') return run.kind === 'list' ? { kind: 'list', element: mergeShape(recorded.element, run.element) } : shapeOf(recorded);
  return { kind: widens(recorded.kind, run.kind) ? 'bigint' : recorded.kind };
}

/** A shape without the name a column carries beside it. */
function shapeOf(shape: ColumnShape): ColumnShape {
  if (shape.kind === 'struct') return { kind: 'struct', fields: shape.fields };
  if (shape.kind === 'list') return { kind: 'list', element: shape.element };
  return { kind: shape.kind };
}

/** A column's type in words, as `dataset info` shows it: `integer`, `list<string>`, `struct<nickname: string, stats: struct<plays: integer>>`. */
export function typeName(shape: ColumnShape): string {
  if (shape.kind === 'struct') return `struct<${shape.fields.map((field) => `${field.name}: ${typeName(field)}`).join(', ')}>`;
  if (shape.kind === 'list') return `list<${typeName(shape.element)}>`;
  return shape.kind;
}

export function hasDrift(drift: PageDrift | SchemaDrift): boolean {
  return drift.added.length > 0 || drift.conflicting.length > 0;
}

/** One line for a summary: `2 new (views: integer), 1 missing (flair), 1 conflicting (score: integer ← string)`. */
export function describeDrift(drift: SchemaDrift): string {
  const parts: string[] = [];
  if (drift.added.length > 0) parts.push(`${drift.added.length} new (${drift.added.map((a) => `${a.column}: ${a.kind}`).join(', ')})`);
  if (drift.missing.length > 0) parts.push(`${drift.missing.length} missing (${drift.missing.join(', ')})`);
  if (drift.conflicting.length > 0) {
    parts.push(`${drift.conflicting.length} conflicting (${drift.conflicting.map((c) => `${c.column}: ${c.recorded} ← ${c.seen}`).join(', ')})`);
  }
  return parts.length === 0 ? 'no schema drift' : `schema drift: ${parts.join(', ')}`;
}
