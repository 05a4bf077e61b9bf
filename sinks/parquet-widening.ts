/**
 * How a Parquet file fixes up what its sample typed too narrowly (docs/types.md, "Files").
 *
 * A file plans its columns from its first `sampleSize` records and writes row groups as it goes. A
 * later value its column cannot hold goes to `_extra`, as before; the writer also notes it here
 * (`Spills`), by its path, on the lattice's terms (`shapes.ts` `Seen`). Values that fit
 * are not looked at again, so a file whose sample was right pays nothing but the noting of what
 * overflowed. At close, the written columns are widened by what was noted (`widenFields`,
 * `widenColumns`): a kind joins the kinds that overflowed it (`src/column-kinds.ts` `joinKinds`), a field
 * first typed after the sample becomes a column, a STRUCT that passes `MAP_THRESHOLD` keys a MAP
 * (in the flat layout, one column of JSON text). Only when that changes the schema is the file
 * re-encoded from its own rows under the widened one (`parquet.ts`). A value no widening holds (an
 * object among strings) widens nothing and stays in `_extra` with its path; a column's kind is
 * never flipped to another by later values, only widened.
 */
import { mapValuesSeen, observe, seen, settle, type NestedField, type Seen, type Shape } from './shapes.ts';
import { joinName, MAP_THRESHOLD, splitColumnName, type Column } from './rows.ts';
import { settleKind, type PlainObject } from './values.ts';
import { joinKinds, type ColumnKind } from '../src/column-kinds.ts';

/** The values a file sent to `_extra`, as a tree of what each path saw (the objects on the way to a path count as objects). */
export class Spills {
  /** By top-level key. */
  readonly fields = new Map<string, Seen>();

  /** `maxDepth`: how deep objects and arrays are observed before they count as one value of JSON text. */
  constructor(private readonly maxDepth: number) {}

  /** Notes the values one record sent to `_extra`, keyed by their escaped dotted paths (a bound function: a layout calls it as it is). */
  readonly note = (spilled: PlainObject): void => {
    for (const name in spilled) {
      const keys = splitColumnName(name);
      let fields = this.fields;
      for (let depth = 1; depth <= keys.length; depth++) {
        const key = keys[depth - 1];
        let field = fields.get(key);
        if (field === undefined) fields.set(key, (field = seen()));
        if (depth === keys.length) observe(spilled[name], field, name, depth, this.maxDepth);
        else {
          field.objects++;
          fields = field.fields;
        }
      }
    }
  };
}

/**
 * A nested file's fields widened by what went to `_extra`, or `undefined` when nothing widens.
 * Top-level fields are not added here: a field first seen after the sample was already added by its
 * first value (`NestedLayout.addField`), and one `columns` left out stays out.
 */
export function widenFields(fields: readonly NestedField[], spills: Spills): NestedField[] | undefined {
  const widened = fields.map(({ name, shape }) => ({ name, shape: widen(shape, spills.fields.get(name)) ?? shape }));
  return JSON.stringify(widened) === JSON.stringify(fields) ? undefined : widened;
}

/** `shape` widened so it also holds what `spilled` saw; a value of a kind no widening joins leaves it as it is. */
export function widen(shape: Shape | undefined, spilled: Seen | undefined): Shape | undefined {
  if (spilled === undefined) return shape;
  // A field no value typed (only null, `[]`, `{}` in the sample): the first real values decide.
  if (shape === undefined) return settle(spilled);
  if ('kind' in shape) {
    let { kind } = shape;
    // JSON text holds every object and array already, and joins no scalar.
    if (kind !== 'json') for (const each of spilled.scalars.keys()) kind = joinKinds(kind, each) ?? kind;
    return kind === shape.kind ? shape : { kind };
  }
  if ('list' in shape) return { list: widen(shape.list, spilled.elements) ?? shape.list };
  if ('map' in shape) return spilled.objects === 0 ? shape : { map: widen(shape.map, mapValuesSeen(spilled)) ?? shape.map };
  const fields = new Map(shape.struct.map(({ name, shape: child }) => [name, child]));
  for (const [name, child] of spilled.fields) {
    const widened = widen(fields.get(name), child);
    if (widened !== undefined) fields.set(name, widened);
  }
  // Keys that are data (dates, ids), counted over the sample's fields and the later ones alike.
  if (fields.size > MAP_THRESHOLD) return { map: joinShapes([...fields.values()]) };
  return { struct: [...fields].map(([name, child]) => ({ name, shape: child })) };
}

/** The shape that holds values of every one of `shapes` (a MAP's values), by the lattice. */
function joinShapes(shapes: readonly Shape[]): Shape {
  return shapes.slice(1).reduce((joined, shape) => widen(joined, seenOf(shape)) ?? joined, shapes[0]);
}

/** A shape as if one value of it had been seen. */
function seenOf(shape: Shape): Seen {
  const of = seen();
  if ('kind' in shape) {
    if (shape.kind === 'json') {
      of.objects = 1;
      of.opaque = true;
    } else of.scalars.set(shape.kind, 1);
  } else if ('struct' in shape) {
    of.objects = 1;
    for (const field of shape.struct) of.fields.set(field.name, seenOf(field.shape));
  } else if ('list' in shape) {
    of.arrays = 1;
    of.elements = seenOf(shape.list);
  } else {
    of.objects = 1;
    of.fields.set('', seenOf(shape.map));
  }
  return of;
}

/** What the flat layout may change when it widens: not a pinned kind, and no new column where `columns` chose them. */
export interface FlatWidening {
  readonly maxDepth: number;
  readonly pinned: (name: string) => boolean;
  readonly addsColumns: boolean;
}

/**
 * A flat file's columns widened by what went to `_extra`, or `undefined` when nothing changes. A
 * column's kind joins the kinds that overflowed it; an object where there was no column (or one the
 * sample saw only as null) gives a column per leaf, as the sample would have; an object that passes
 * `MAP_THRESHOLD` distinct keys, the columns it had included, becomes one column of JSON text.
 */
export function widenColumns(columns: readonly Column[], spills: Spills, widening: FlatWidening): Column[] | undefined {
  const leaves = new Map<string, Map<ColumnKind, number>>();
  const collapsed: string[] = [];
  flatLeaves(spills.fields, undefined, childKeys(columns), leaves, collapsed);
  const under = (name: string, prefix: string): boolean => name.startsWith(prefix + '.');
  const final: Column[] = [];
  // A column typed by absence sends every value to `_extra`: once one came, the file is re-encoded even if its kind stays `string`.
  let typedLate = false;
  for (const column of columns) {
    const { name } = column;
    const counts = leaves.get(name);
    if (widening.pinned(name)) final.push(column);
    else if (collapsed.some((prefix) => under(name, prefix))) continue;
    else if (column.untyped) {
      // Typed by nothing in the sample: its first real values decide; a parent of new columns only is none.
      typedLate ||= counts !== undefined;
      if (counts !== undefined) final.push({ name, kind: settleKind(counts), untyped: false });
      else if (![...leaves.keys()].some((leaf) => under(leaf, name))) final.push({ name, kind: 'string', untyped: false });
    } else {
      let kind = column.kind!;
      if (counts !== undefined && kind !== 'json') for (const each of counts.keys()) kind = joinKinds(kind, each) ?? kind;
      final.push({ name, kind, untyped: false });
    }
  }
  const written = new Set(columns.map((column) => column.name));
  if (widening.addsColumns) for (const [name, counts] of leaves) if (!written.has(name)) final.push({ name, kind: settleKind(counts), untyped: false });
  // A column the sample typed by absence that nothing came to is as it was written: VARCHAR, all NULL.
  const same = !typedLate && final.length === columns.length && final.every((column, i) => column.name === columns[i].name && column.kind === columns[i].kind);
  return same ? undefined : final;
}

/** The dotted leaf paths of what overflowed, with how many values of each kind each got, as `discoverColumns` would flatten them. */
function flatLeaves(
  fields: ReadonlyMap<string, Seen>,
  prefix: string | undefined,
  written: ReadonlyMap<string | undefined, ReadonlySet<string>>,
  leaves: Map<string, Map<ColumnKind, number>>,
  collapsed: string[],
): void {
  for (const [key, field] of fields) {
    const name = joinName(prefix, key);
    const counts = new Map(field.scalars);
    // Arrays, keyed collections and objects too deep (`opaque`) are JSON text in the flat layout.
    let json = field.arrays;
    if (field.objects > 0) {
      const keys = new Set([...(written.get(name) ?? []), ...field.fields.keys()]);
      if (field.opaque || keys.size > MAP_THRESHOLD) {
        json += field.objects;
        if (keys.size > MAP_THRESHOLD) collapsed.push(name);
      } else flatLeaves(field.fields, name, written, leaves, collapsed);
    }
    if (json > 0) counts.set('json', (counts.get('json') ?? 0) + json);
    if (counts.size > 0) leaves.set(name, counts);
  }
}

/** The keys directly beneath each dotted prefix of the written columns (the record's own under `undefined`). */
function childKeys(columns: readonly Column[]): Map<string | undefined, Set<string>> {
  const children = new Map<string | undefined, Set<string>>();
  for (const { name } of columns) {
    let prefix: string | undefined;
    for (const key of splitColumnName(name)) {
      let keys = children.get(prefix);
      if (keys === undefined) children.set(prefix, (keys = new Set()));
      keys.add(key);
      prefix = joinName(prefix, key);
    }
  }
  return children;
}
