/**
 * A nested dataset's schema (docs/datasets.md "Parquet layout"): its records' top-level fields, each a
 * leaf, a STRUCT of named fields or a LIST of one shape, as the nested Parquet layout writes them
 * (`parquet-nested.ts`), recorded in the schema file and pinned on every part, so every part types
 * a field alike.
 *
 * A run merges what its records hold into the recorded shapes: a field first seen (at the top, in
 * a struct, in a list's structs) is added, so the parts written before read it as NULL (DuckDB
 * `union_by_name`, Polars `missing_struct_fields='insert'`); an integer leaf that meets a bigint
 * widens to `bigint` (both INT64); a value of a kind its field cannot hold is drift, and the writer
 * puts it in `_extra` (a list whole). Within a run a field seen only as null, or a list seen only
 * empty, waits for a value before it takes a kind, as a flat column does.
 */
import type { SchemaDrift } from '../src/errors.ts';
import { bigintsIn, caseless, datasetKind, holds, widens, type ColumnShape, type DatasetSchemaTracker, type PageDrift, type SchemaColumn } from './dataset-schema.ts';
import { DEFAULT_NESTED_MAX_DEPTH, observeFields, settle, type NestedField, type Seen, type Shape } from './parquet-nested.ts';
import { checkRecord, joinName, type ColumnKind } from './rows.ts';

/** A shape while a run settles it: `null` is a field no value has typed yet (text if none does). */
type Draft = { kind: ColumnKind | 'null' } | { kind: 'struct'; fields: DraftColumn[] } | { kind: 'list'; element: Draft };
type DraftColumn = { name: string } & Draft;

const UNTYPED: Draft = { kind: 'null' };
const JSON_TEXT: Draft = { kind: 'json' };

type Conflict = { column: string; recorded: string; seen: string };

export class NestedSchemaTracker implements DatasetSchemaTracker {
  readonly #recorded: readonly SchemaColumn[];
  /** The recorded columns, then those this run added, as merged so far. */
  #columns: DraftColumn[];
  /** Top-level fields some record of this run carried. */
  readonly #seen = new Set<string>();
  readonly #conflicting = new Map<string, Conflict>();
  /** The conflicts of the page being observed. */
  #page: Conflict[] = [];

  constructor(recorded: readonly SchemaColumn[]) {
    this.#recorded = recorded;
    this.#columns = recorded.map((column) => ({ ...column }));
  }

  get first(): boolean {
    return this.#recorded.length === 0;
  }

  observe(records: readonly unknown[], maxDepth = DEFAULT_NESTED_MAX_DEPTH): PageDrift {
    const fields = new Map<string, Seen>();
    for (const record of records) {
      const object = checkRecord(record);
      observeFields(object, Object.keys(object), fields, '', 1, maxDepth);
    }
    for (const name of fields.keys()) this.#seen.add(name);
    const before = this.#columns;
    this.#page = [];
    this.#columns = this.#mergeFields(before, fields, '');
    if (this.first) return { added: [], conflicting: [] };
    return { added: addedPaths(before, this.#columns, ''), conflicting: this.#page };
  }

  doubles(fields: readonly string[]): string[] {
    const doubles = new Set(this.#recordedDoubles());
    return fields.filter((name) => doubles.has(name));
  }

  rounding(records: readonly unknown[]): { column: string; value: bigint }[] {
    return bigintsIn(records, this.#recordedDoubles());
  }

  /** The recorded `double` leaves a record reaches through structs (not lists): the ones a bigint would round. */
  #recordedDoubles(): string[] {
    const found: string[] = [];
    const visit = (columns: readonly SchemaColumn[], prefix: string): void => {
      for (const column of columns) {
        const name = joinName(prefix, column.name);
        if (column.kind === 'struct') visit(column.fields, name);
        else if (column.kind === 'double') found.push(name);
      }
    };
    visit(this.#recorded, '');
    return found;
  }

  columns(): SchemaColumn[] {
    return this.#columns.map((column) => ({ name: column.name, ...typed(column) }));
  }

  drift(): SchemaDrift {
    if (this.first) return { added: [], missing: [], conflicting: [] };
    return {
      added: addedPaths(this.#recorded, this.#columns, '').map(({ name, kind }) => ({ column: name, kind })),
      missing: this.#recorded.filter((column) => !this.#seen.has(column.name)).map((column) => joinName('', column.name)),
      conflicting: [...this.#conflicting.values()],
    };
  }

  #mergeFields(columns: readonly DraftColumn[], fields: ReadonlyMap<string, Seen>, prefix: string): DraftColumn[] {
    const merged = columns.map((column): DraftColumn => {
      const field = fields.get(column.name);
      return field === undefined ? column : { name: column.name, ...this.#merge(column, field, joinName(prefix, column.name)) };
    });
    const names = new Set(columns.map((column) => column.name));
    // A field that differs from a sibling only by case gets none: its values go to `_extra` (`caseless`).
    const cased = new Set(columns.map((column) => caseless(column.name)));
    for (const [name, field] of fields) {
      if (names.has(name) || cased.has(caseless(name))) continue;
      cased.add(caseless(name));
      merged.push({ name, ...this.#merge(UNTYPED, field, joinName(prefix, name)) });
    }
    return merged;
  }

  /** `draft` given what a page showed of its field (`name`, an escaped dotted path); a value it cannot hold is a conflict. */
  #merge(draft: Draft, field: Seen, name: string): Draft {
    const scalars = field.scalars.size > 0;
    const objects = field.objects > 0;
    const arrays = field.arrays > 0;
    const kinds = (scalars ? 1 : 0) + (objects ? 1 : 0) + (arrays ? 1 : 0);
    if (kinds === 0 || draft.kind === 'json') return draft;
    if (draft.kind === 'null') {
      // As the nested layout settles a field (`parquet-nested.ts` `settle`), but waiting while there is nothing to type.
      if (kinds > 1 || field.opaque) return JSON_TEXT;
      if (scalars) return datasetShape(settle(field));
      if (objects) return field.fields.size === 0 ? JSON_TEXT : { kind: 'struct', fields: this.#mergeFields([], field.fields, name) };
      const element = field.elements === undefined ? UNTYPED : this.#merge(UNTYPED, field.elements, name);
      return element.kind === 'json' ? JSON_TEXT : { kind: 'list', element };
    }
    if (draft.kind === 'struct' || draft.kind === 'list') {
      for (const kind of field.scalars.keys()) this.#conflict(name, draft.kind, datasetKind(kind));
      const other = draft.kind === 'struct' ? arrays : objects;
      if (other) this.#conflict(name, draft.kind, draft.kind === 'struct' ? 'list' : 'struct');
      if (field.opaque && (draft.kind === 'struct' ? objects : arrays)) {
        this.#conflict(name, draft.kind, 'json');
        return draft;
      }
      if (draft.kind === 'struct') return objects ? { kind: 'struct', fields: this.#mergeFields(draft.fields, field.fields, name) } : draft;
      return arrays && field.elements !== undefined ? { kind: 'list', element: this.#merge(draft.element, field.elements, name) } : draft;
    }
    let kind: ColumnKind = draft.kind;
    if (objects) this.#conflict(name, kind, field.opaque ? 'json' : 'struct');
    if (arrays) this.#conflict(name, kind, 'list');
    for (const seenKind of field.scalars.keys()) {
      const each = datasetKind(seenKind);
      if (widens(kind, each)) kind = 'bigint';
      else if (!holds(kind, each)) this.#conflict(name, kind, each);
    }
    return { kind };
  }

  #conflict(column: string, recorded: string, seenKind: string): void {
    const conflict = { column, recorded, seen: seenKind };
    this.#conflicting.set(column, conflict);
    this.#page.push(conflict);
  }
}

/** A settled shape as a dataset records it: ISO instants stay text, as in a flat dataset (`dataset-schema.ts`). */
function datasetShape(shape: Shape): Draft {
  if ('kind' in shape) return { kind: datasetKind(shape.kind) };
  if ('list' in shape) return { kind: 'list', element: datasetShape(shape.list) };
  return { kind: 'struct', fields: shape.struct.map((field) => ({ name: field.name, ...datasetShape(field.shape) })) };
}

/** A draft as it is written: a field no value typed is text (a LIST of text), as in the sinks. */
function typed(draft: Draft): ColumnShape {
  if (draft.kind === 'null') return { kind: 'string' };
  if (draft.kind === 'struct') return { kind: 'struct', fields: draft.fields.map((field) => ({ name: field.name, ...typed(field) })) };
  if (draft.kind === 'list') return { kind: 'list', element: typed(draft.element) };
  return { kind: draft.kind };
}

/** The fields of `after` that `before` lacks, by escaped dotted path, inside structs and lists' structs too. */
function addedPaths(before: readonly DraftColumn[], after: readonly DraftColumn[], prefix: string): { name: string; kind: string }[] {
  const old = new Map(before.map((column) => [column.name, column]));
  const added: { name: string; kind: string }[] = [];
  for (const column of after) {
    const name = joinName(prefix, column.name);
    const was = old.get(column.name);
    if (was === undefined) added.push({ name, kind: typed(column).kind });
    else added.push(...addedInside(was, column, name));
  }
  return added;
}

function addedInside(before: Draft, after: Draft, name: string): { name: string; kind: string }[] {
  if (before.kind === 'struct' && after.kind === 'struct') return addedPaths(before.fields, after.fields, name);
  if (before.kind === 'list' && after.kind === 'list') return addedInside(before.element, after.element, name);
  return [];
}

/** The nested layout's fields for a dataset's recorded columns (`NestedLayout.plan` pins them). */
export function nestedFields(columns: readonly SchemaColumn[]): NestedField[] {
  return columns.map((column) => ({ name: column.name, shape: layoutShape(column) }));
}

function layoutShape(shape: ColumnShape): Shape {
  if (shape.kind === 'struct') return { struct: nestedFields(shape.fields) };
  if (shape.kind === 'list') return { list: layoutShape(shape.element) };
  return { kind: shape.kind };
}

