/**
 * A nested dataset's schema (docs/datasets.md): its records' top-level fields, each a
 * leaf, a STRUCT of named fields or a LIST of one shape, as the nested Parquet layout writes them
 * (`parquet-nested.ts`), recorded in the schema file and pinned on every part, so every part types
 * a field alike.
 *
 * A run merges what its records hold into the recorded shapes: a field first seen (at the top, in
 * a struct, in a list's structs) is added, so the parts written before read it as NULL (DuckDB
 * `union_by_name`, Polars `missing_struct_fields='insert'`); a leaf widens on the type lattice
 * (`schema.ts` `takes`: integer → bigint, integer → double, numbers → string), never
 * narrows; a value of a kind its field cannot hold is drift, and the writer puts it in `_extra` (a
 * list whole), counted. A field seen only as null, `[]` or `{}` is `untyped`, recorded but in no
 * part (`nestedFields`), until a real value types it, in whichever run.
 */
import type { SchemaDrift } from '../errors.ts';
import {
  addConflict,
  caseless,
  mapOf,
  takeAll,
  type ColumnShape,
  type Conflict,
  type DatasetKind,
  type DatasetSchemaTracker,
  type PageDrift,
  type SchemaColumn,
} from './schema.ts';
import { DEFAULT_NESTED_MAX_DEPTH } from '../../sinks/parquet-nested.ts';
import { mapValuesSeen, observeFields, settledCategory, type NestedField, type Seen, type Shape } from '../../sinks/shapes.ts';
import { joinName, MAP_THRESHOLD, OVERFLOW_NAME } from '../../sinks/rows.ts';
import { checkRecord } from '../../sinks/values.ts';

type Draft = ColumnShape;
type DraftColumn = SchemaColumn;

const UNTYPED: Draft = { kind: 'untyped' };
const JSON_TEXT: Draft = { kind: 'json' };

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
      observeFields(object, Object.keys(object), fields, undefined, 1, maxDepth);
    }
    // A record's field `_extra` holds values bound for the overflow column (`HeldNames`), never a column.
    fields.delete(OVERFLOW_NAME);
    for (const name of fields.keys()) this.#seen.add(name);
    const before = this.#columns;
    this.#page = [];
    this.#columns = this.#mergeFields(before, fields, undefined);
    if (this.first) return { added: [], conflicting: [] };
    return { added: addedPaths(before, this.#columns, undefined), conflicting: this.#page };
  }

  columns(): SchemaColumn[] {
    return this.#columns;
  }

  drift(): SchemaDrift {
    if (this.first) return { added: [], missing: [], conflicting: [] };
    const widened = widenedPaths(this.#recorded, this.#columns, undefined);
    return {
      added: addedPaths(this.#recorded, this.#columns, undefined).map(({ name, kind }) => ({ column: name, kind })),
      missing: this.#recorded.filter((column) => !this.#seen.has(column.name)).map((column) => joinName(undefined, column.name)),
      conflicting: [...this.#conflicting.values()],
      ...(widened.length === 0 ? {} : { widened }),
    };
  }

  #mergeFields(columns: readonly DraftColumn[], fields: ReadonlyMap<string, Seen>, prefix: string | undefined): DraftColumn[] {
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

  /**
   * `draft` given what a page showed of its field (`name`, an escaped dotted path), by the type
   * lattice: an untyped field takes the shape of its commonest kind of value (scalars, objects,
   * arrays), a leaf widens (`takeAll`), a struct gains fields, a list's element is merged; every
   * value it cannot hold is a conflict (it goes to `_extra`). A shape is never flipped.
   */
  #merge(draft: Draft, field: Seen, name: string): Draft {
    const scalars = [...field.scalars.values()].reduce((sum, count) => sum + count, 0);
    const category = draft.kind === 'untyped' ? settledCategory(field) : draft.kind === 'struct' || draft.kind === 'map' || draft.kind === 'json' ? 'objects' : draft.kind === 'list' ? 'arrays' : 'scalars';
    if (category === undefined) return draft;
    const recorded = draft.kind === 'untyped' ? 'untyped' : shapeName(draft);
    if (category !== 'scalars') for (const [seen, values] of field.scalars) this.#conflict(name, recorded, seen, values);
    if (category !== 'objects' && field.objects > 0) this.#conflict(name, recorded, field.opaque ? 'json' : 'struct', field.objects);
    if (category !== 'arrays' && field.arrays > 0) this.#conflict(name, recorded, 'list', field.arrays);
    if (category === 'scalars') {
      if (scalars === 0) return draft;
      const kind: DatasetKind = draft.kind === 'struct' || draft.kind === 'list' || draft.kind === 'map' ? 'untyped' : draft.kind;
      return { kind: takeAll(kind, field.scalars, (seen, values) => this.#conflict(name, recorded, seen, values)) };
    }
    if (category === 'objects') {
      if (field.objects === 0) return draft;
      // A keyed collection or an object nested too deep is JSON text; a struct never becomes JSON text, nor JSON text a struct.
      if (draft.kind === 'json' || (draft.kind === 'untyped' && field.opaque)) return JSON_TEXT;
      // An object whose keys are data is a map (`ColumnShape`), which holds a keyed collection's keys too.
      if (draft.kind === 'map') return { kind: 'map', value: this.#merge(draft.value, mapValuesSeen(field), name) };
      if (field.opaque) {
        this.#conflict(name, recorded, 'json', field.objects);
        return draft;
      }
      // A struct whose keys pass the threshold becomes a map.
      const known = draft.kind === 'struct' ? draft.fields : [];
      if (distinctKeys(known, field.fields) > MAP_THRESHOLD) return { kind: 'map', value: this.#merge(mapOf(known).value, mapValuesSeen(field), name) };
      const fields = this.#mergeFields(known, field.fields, name);
      return { kind: 'struct', fields };
    }
    if (field.arrays === 0 || field.elements === undefined) return draft;
    return { kind: 'list', element: this.#merge(draft.kind === 'list' ? draft.element : UNTYPED, field.elements, name) };
  }

  #conflict(column: string, recorded: string, seen: string, values: number): void {
    this.#page.push(addConflict(this.#conflicting, { column, recorded, seen, values }));
  }
}

/** How many distinct keys an object field has: the struct's recorded fields and those a page showed. */
function distinctKeys(recorded: readonly SchemaColumn[], seen: ReadonlyMap<string, Seen>): number {
  let count = seen.size;
  for (const { name } of recorded) if (!seen.has(name)) count += 1;
  return count;
}

/** A shape's kind in words, for drift: a leaf's kind, `struct`, `list` or `map`. */
function shapeName(shape: ColumnShape): string {
  return shape.kind;
}

/** The leaves of `after` whose kind widened from `before`'s (untyped → a type, integer → double …), by escaped dotted path. */
function widenedPaths(before: readonly SchemaColumn[], after: readonly SchemaColumn[], prefix: string | undefined): { column: string; from: string; to: string }[] {
  const old = new Map(before.map((column) => [column.name, column]));
  return after.flatMap((column) => {
    const was = old.get(column.name);
    return was === undefined ? [] : widenedInside(was, column, joinName(prefix, column.name));
  });
}

function widenedInside(before: ColumnShape, after: ColumnShape, name: string): { column: string; from: string; to: string }[] {
  if (before.kind === 'struct' && after.kind === 'struct') return widenedPaths(before.fields, after.fields, name);
  if (before.kind === 'list' && after.kind === 'list') return widenedInside(before.element, after.element, name);
  if (before.kind === 'map' && after.kind === 'map') return widenedInside(before.value, after.value, name);
  if (before.kind === after.kind) return [];
  return [{ column: name, from: before.kind, to: after.kind }];
}

/** The fields of `after` that `before` lacks, by escaped dotted path, inside structs and lists' structs too. */
function addedPaths(before: readonly DraftColumn[], after: readonly DraftColumn[], prefix: string | undefined): { name: string; kind: string }[] {
  const old = new Map(before.map((column) => [column.name, column]));
  const added: { name: string; kind: string }[] = [];
  for (const column of after) {
    const name = joinName(prefix, column.name);
    const was = old.get(column.name);
    if (was === undefined) added.push({ name, kind: column.kind });
    else added.push(...addedInside(was, column, name));
  }
  return added;
}

function addedInside(before: Draft, after: Draft, name: string): { name: string; kind: string }[] {
  if (before.kind === 'struct' && after.kind === 'struct') return addedPaths(before.fields, after.fields, name);
  if (before.kind === 'list' && after.kind === 'list') return addedInside(before.element, after.element, name);
  if (before.kind === 'map' && after.kind === 'map') return addedInside(before.value, after.value, name);
  return [];
}

/**
 * The nested layout's fields for a dataset's recorded columns (`NestedLayout.plan` pins them): an
 * untyped column, a struct of untyped fields or a list of untyped elements is left out, so no part
 * holds a column typed by absence (DuckDB's `union_by_name` cannot union Parquet's NULL type with a
 * STRUCT: its issue 22147), and every reader reads it as NULL until a value types it.
 */
export function nestedFields(columns: readonly SchemaColumn[]): NestedField[] {
  return columns.flatMap((column) => {
    const shape = layoutShape(column);
    return shape === undefined ? [] : [{ name: column.name, shape }];
  });
}

function layoutShape(shape: ColumnShape): Shape | undefined {
  if (shape.kind === 'untyped') return undefined;
  if (shape.kind === 'struct') {
    const struct = nestedFields(shape.fields);
    return struct.length === 0 ? undefined : { struct };
  }
  if (shape.kind === 'list') {
    const element = layoutShape(shape.element);
    return element === undefined ? undefined : { list: element };
  }
  if (shape.kind === 'map') {
    const value = layoutShape(shape.value);
    return value === undefined ? undefined : { map: value };
  }
  return { kind: shape.kind };
}
