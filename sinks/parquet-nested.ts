/**
 * The nested layout of a Parquet file: records keep their shape. An object is a STRUCT group, an
 * array of one kind a LIST (of scalars, of structs, of lists), so DuckDB reads `author.nickname`
 * and `unnest(tags)`, Polars `pl.col('author').struct.field('nickname')`.
 *
 * - The shape comes from the sample (the first `sampleSize` records, `shapes.ts`): each field's values settle
 *   on the type lattice the flat layout's columns use (`src/column-kinds.ts` `joinKinds`: integers with doubles
 *   make DOUBLE, integers with bigints an exact INT64 `bigint` leaf, numbers with text VARCHAR of
 *   the digits, ISO instants TIMESTAMP only when all are). A field whose values are of kinds no
 *   widening joins (a string here, an object there) takes its commonest kind, the others going to
 *   `_extra`. A keyed collection (`{"0": …}`), or anything nested deeper than `maxDepth` objects and
 *   arrays (default `DEFAULT_NESTED_MAX_DEPTH`), is one value of JSON text in a string column.
 * - `null`, `[]` and `{}` type nothing: a field that held only those in the sample is no column
 *   until a real value adds it (`addField`, at the top level), and reads NULL.
 * - A top-level field first seen after the sample is added as a field (`addField`), NULL before.
 * - No value is lost: a field the shape lacks inside a struct (or any, when `columns` chose the
 *   fields), or a value of another kind than its column's, goes to the overflow column (`_extra`,
 *   a JSON object keyed by the dotted path, as in the flat layout) and reads NULL there; the file
 *   widens its shape by those values as it closes (`parquet-widening.ts`), so only what no widening
 *   holds stays there. A list is
 *   written whole or not at all: if any element does not fit (a new field in one of its objects,
 *   say), the whole list goes to `_extra`.
 * - An empty array is an empty list; an empty object is a struct whose fields are all NULL.
 *
 * Records are shredded straight into the row group's columns with Dremel's repetition and
 * definition levels (every group and leaf optional, lists in the three-level form the Parquet
 * specification names: `optional group f (LIST) { repeated group list { optional … element } }`).
 * Once records enough came, those of the shape as it is are shredded by code made for it
 * (`parquet-nested-compiled.ts`); any other, by the walk below, which decides everything above.
 */
/// <reference lib="es2024.string" />
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import { FastPath } from './fast-path.ts';
import { KeyIndex } from './key-index.ts';
import type { RowGroupCells } from './parquet-cells.ts';
import { compileShredder, type CompiledShredder, type ShredHost, type ShredNode as Node } from './parquet-nested-compiled.ts';
import type { PhysicalType } from './parquet-types.ts';
import { joinName, OVERFLOW_NAME, type PartRowOptions } from './rows.ts';
import { checkJsonValue, checkRecord, fits, isPlainObject, jsonValue, tooDeep, typedCell, type Cell, type PlainObject } from './values.ts';
import { timestampOf, type ColumnKind } from '../src/column-kinds.ts';
import { holdsNothing, JSON_SHAPE, observe, observeFields, seen, settle, type NestedField, type Seen, type Shape } from './shapes.ts';
import { stringifyExact } from '../src/exact-json.ts';
import { wellFormed, wellFormedJson, type Repairs } from './strings.ts';

/** Objects and arrays nested deeper than this (a record's own fields are at depth 1) are JSON text. */
export const DEFAULT_NESTED_MAX_DEPTH = 6;

/** Parquet physical type and converted type per leaf kind, for both layouts; a `bigint` leaf is an exact INT64 column. */
export const PARQUET_TYPE: Record<ColumnKind, { physical: PhysicalType; exact?: true; converted?: string }> = {
  integer: { physical: 'INT64' },
  bigint: { physical: 'INT64', exact: true },
  double: { physical: 'DOUBLE' },
  boolean: { physical: 'BOOLEAN' },
  string: { physical: 'BYTE_ARRAY', converted: 'UTF8' },
  timestamp: { physical: 'INT64', converted: 'TIMESTAMP_MILLIS' },
  json: { physical: 'BYTE_ARRAY', converted: 'UTF8' },
};

/** One leaf column: its path through the schema, its kind and levels. */
export interface NestedColumn {
  readonly path: readonly string[];
  readonly kind: ColumnKind;
  readonly maxDefinition: number;
  readonly maxRepetition: number;
}

/**
 * The nested layout of one file: fields planned from the sample, then every record shredded into
 * a row group's columns. The overflow column is the last.
 */
export class NestedLayout {
  /** The fields: the sample's (the first `sampled`), then those first seen later. */
  readonly fields: Array<{ readonly name: string; readonly shape: Shape }>;
  readonly overflowName: string;
  readonly columns: NestedColumn[] = [];
  private readonly root: Node;
  private readonly overflowColumn: number;
  private readonly sampled: number;
  private visit = 0;
  /** The record being shredded: what overflows, and where it goes. */
  private spilled: PlainObject | undefined;
  private group!: RowGroupCells;
  private repairs!: Repairs;
  /** The compiled shredding of records of the shape (`parquet-nested-compiled.ts`). */
  readonly fastPath = new FastPath<CompiledShredder>(() => compileShredder(this.root, this.host, this.held ? this.overflowName : undefined));
  private readonly host: ShredHost = {
    leafCell: (node, value) => this.leafCell(node.kind!, value, node.name!),
    write: (node, value, repetition, inList) => this.write(node, value, repetition, inList),
    repaired: (text) => wellFormed(text, this.repairs),
  };

  private constructor(
    fields: Array<{ name: string; shape: Shape }>,
    repairs: Repairs,
    /** Whether a top-level field first seen after the sample becomes a column (not when `columns` chose them). */
    private readonly evolves: boolean,
    private readonly maxDepth: number,
    /** Whether a record's field named like the overflow column holds values bound for it (`PartRowOptions.held`). */
    private readonly held = false,
  ) {
    let overflow = OVERFLOW_NAME;
    while (fields.some((field) => field.name === overflow)) overflow = '_' + overflow;
    this.overflowName = overflow;
    // Field names are the records' own keys, repaired (a lone surrogate cannot be written): counted once, here.
    this.fields = fields.map(({ name, shape }) => ({ name: wellFormed(name, repairs), shape: repairShape(shape, repairs) }));
    this.root = this.compile(undefined, undefined, { struct: fields }, 0, 0, []);
    this.overflowColumn = this.columns.length;
    this.columns.push({ path: [overflow], kind: 'json', maxDefinition: 1, maxRepetition: 0 });
    this.sampled = fields.length;
  }

  /**
   * Plans the layout from the sample: the fields the records have (or those `columns` names), and their
   * shapes; or takes `shapes` as they are (a dataset's recorded schema, so its parts type a field alike).
   */
  static plan(sample: readonly unknown[], options: PartRowOptions & { shapes?: readonly NestedField[] }, repairs: Repairs): NestedLayout {
    const maxDepth = options.maxDepth ?? DEFAULT_NESTED_MAX_DEPTH;
    if (options.shapes !== undefined) return new NestedLayout([...options.shapes], repairs, false, maxDepth, options.held);
    const fields = new Map<string, Seen>();
    for (const record of sample) {
      const object = checkRecord(record);
      observeFields(object, Object.keys(object), fields, undefined, 1, maxDepth);
    }
    // A field no sampled value typed is no column yet: its first real value adds it (`addField`).
    // One `columns` names is a column whatever the sample held (text, if nothing typed it).
    const planned = (options.columns ?? [...fields.keys()]).flatMap((name): Array<{ name: string; shape: Shape }> => {
      const shape = settle(fields.get(name) ?? seen());
      if (shape !== undefined) return [{ name, shape }];
      return options.columns === undefined ? [] : [{ name, shape: { kind: 'string' } }];
    });
    return new NestedLayout(planned, repairs, options.columns === undefined, maxDepth, options.held);
  }

  /** The schema elements (depth first) for the file's footer. */
  schema(): unknown[] {
    const elements: unknown[] = [new parquetTypes.SchemaElement({ name: 'root', num_children: this.fields.length + 1 })];
    // In the columns' order: the sample's fields, the overflow column, then fields added later.
    for (const { name, shape } of this.fields.slice(0, this.sampled)) schemaOf(name, shape, elements);
    schemaOf(this.overflowName, JSON_SHAPE, elements);
    for (const { name, shape } of this.fields.slice(this.sampled)) schemaOf(name, shape, elements);
    return elements;
  }

  /** The shape as `socialstream.columns` describes it. */
  describe(): { layout: 'nested'; fields: NestedLayout['fields']; overflow: string } {
    return { layout: 'nested', fields: this.fields, overflow: this.overflowName };
  }

  /**
   * Shreds one record into `group`'s columns as one row; a record that fails leaves none of it
   * behind. What overflowed is handed to `spilled` (the file's fix-up notes it: `parquet-widening.ts`).
   */
  shred(record: unknown, group: RowGroupCells, repairs: Repairs, spilled?: (values: PlainObject) => void): void {
    this.group = group;
    this.repairs = repairs;
    this.spilled = undefined;
    const object = checkRecord(record);
    group.beginRow();
    if (this.shreddedFast(object, group, repairs)) {
      group.push(this.overflowColumn, 0, 0);
      group.endRow();
      return;
    }
    try {
      this.writeStruct(this.root, object, 0, false);
      if (this.spilled === undefined) group.push(this.overflowColumn, 0, 0);
      else {
        group.push(this.overflowColumn, 1, 0, wellFormedJson(stringifyExact(this.spilled)!, repairs));
        spilled?.(this.spilled);
      }
    } catch (error) {
      group.dropRow();
      // `JSON.stringify` of a value nested thousands of levels deep overflows the stack.
      if (error instanceof RangeError) throw tooDeep();
      throw error;
    }
    group.endRow();
  }

  /**
   * Whether the compiled code shredded the record (the row is then all but its overflow entry);
   * if it refused it, nothing it did is left (entries, repairs, what spilled), for the walk.
   */
  private shreddedFast(record: PlainObject, group: RowGroupCells, repairs: Repairs): boolean {
    const compiled = this.fastPath.next();
    if (compiled === undefined) return false;
    const repaired = repairs.count;
    try {
      if (compiled(record, group) && this.spilled === undefined) return true;
    } catch {
      // The walk meets the same value and throws its own error, naming the field.
    }
    group.dropRow();
    group.beginRow();
    repairs.count = repaired;
    this.spilled = undefined;
    this.fastPath.refusedOne();
    return false;
  }

  private compile(key: string | undefined, name: string | undefined, shape: Shape, definition: number, repetition: number, path: string[]): Node {
    const first = this.columns.length;
    const node: Node = { key, name, definition, first, end: first, kind: null, fields: null, fieldList: [], ignored: [], stamp: 0, element: null, repetition: 0, map: false };
    if ('kind' in shape) {
      node.kind = shape.kind;
      this.columns.push({ path, kind: shape.kind, maxDefinition: definition, maxRepetition: repetition });
    } else if ('struct' in shape) {
      // Matched by the records' raw keys; named in the schema as repaired (`repairShape` counted those).
      node.fieldList = shape.struct.map((field) =>
        this.compile(field.name, joinName(name, field.name), field.shape, definition + 1, repetition, [...path, field.name.toWellFormed()]),
      );
      node.fields = new KeyIndex(shape.struct.map((field, i) => [field.name, node.fieldList[i]] as const));
    } else if ('map' in shape) {
      // The repeated group `key_value` adds a definition level; its `key` is required, its `value` optional.
      node.map = true;
      node.repetition = repetition + 1;
      this.columns.push({ path: [...path, 'key_value', 'key'], kind: 'string', maxDefinition: definition + 1, maxRepetition: repetition + 1 });
      node.element = this.compile(undefined, name, shape.map, definition + 2, repetition + 1, [...path, 'key_value', 'value']);
    } else {
      // The repeated group `list` and its optional `element` each add a definition level.
      node.repetition = repetition + 1;
      node.element = this.compile(undefined, name, shape.list, definition + 2, repetition + 1, [...path, 'list', 'element']);
    }
    node.end = this.columns.length;
    return node;
  }

  /** A node and everything under it NULL (or absent) at this entry. */
  private writeNull(node: Node, repetition: number): void {
    for (let c = node.first; c < node.end; c++) this.group.push(c, node.definition - 1, repetition);
  }

  private write(node: Node, value: unknown, repetition: number, inList: boolean): void {
    if (value === null || value === undefined) {
      this.writeNull(node, repetition);
      return;
    }
    const { kind } = node;
    if (kind !== null) {
      // A leaf is some record's field, never the record: it has a name.
      const cell = this.leafCell(kind, value, node.name!);
      if (cell === undefined) this.mismatch(node, value, repetition);
      else this.group.push(node.first, node.definition, repetition, cell);
    } else if (node.fields !== null) {
      if (isPlainObject(value)) this.writeStruct(node, value, repetition, inList);
      else this.mismatch(node, value, repetition);
    } else if (node.map) {
      if (!isPlainObject(value) || (!inList && !conforms(node, value))) this.mismatch(node, value, repetition);
      else this.writeMap(node, value, repetition);
    } else if (!Array.isArray(value) || (!inList && !conforms(node, value))) {
      this.mismatch(node, value, repetition);
    } else if (value.length === 0) {
      for (let c = node.first; c < node.end; c++) this.group.push(c, node.definition, repetition);
    } else {
      const element = node.element!;
      for (let i = 0; i < value.length; i++) this.write(element, jsonValue(value[i], String(i)), i === 0 ? repetition : node.repetition, true);
    }
  }

  /** A map's entries, one `key_value` each: the key (column `first`, required), then the value. */
  private writeMap(node: Node, object: PlainObject, repetition: number): void {
    let entries = 0;
    for (const key in object) {
      const value = jsonValue(object[key], key);
      if (value === undefined) continue;
      const at = entries++ === 0 ? repetition : node.repetition;
      this.group.push(node.first, node.definition + 1, at, wellFormed(key, this.repairs));
      this.write(node.element!, value, at, true);
    }
    // No entry: the map is there, empty.
    if (entries === 0) for (let c = node.first; c < node.end; c++) this.group.push(c, node.definition, repetition);
  }

  private writeStruct(node: Node, object: PlainObject, repetition: number, inList: boolean): void {
    const stamp = ++this.visit;
    const fields = node.fields!;
    let at = 0;
    for (const key in object) {
      const value = jsonValue(object[key], key);
      if (value === undefined) continue;
      if (this.held && node === this.root && key === this.overflowName && isPlainObject(value)) {
        for (const path in value) (this.spilled ??= {})[path] = jsonValue(value[path], path);
        continue;
      }
      let field = fields.find(key, at++);
      if (field === undefined && holdsNothing(value)) {
        this.fastPath.skipLater(node.ignored, key);
        continue;
      }
      if (field === undefined && node === this.root && this.evolves && key !== this.overflowName) field = this.addField(key, value);
      if (field === undefined) {
        // Only outside a list: a list with a field its shape lacks went to `_extra` whole (`conforms`).
        const name = joinName(node.name, key);
        if (value !== null) checkJsonValue(value, name);
        (this.spilled ??= {})[name] = value;
        continue;
      }
      field.stamp = stamp;
      this.write(field, value, repetition, inList);
    }
    const list = node.fieldList;
    for (let i = 0; i < list.length; i++) if (list[i].stamp !== stamp) this.writeNull(list[i], repetition);
  }

  /**
   * A top-level field first seen after the sample becomes a column (or a struct or list, by its
   * first value), NULL in the rows before: the footer, written last, declares it, and the row
   * groups written before get an all-NULL chunk for it (`parquet.ts`).
   */
  private addField(key: string, value: unknown): Node {
    const observed = seen();
    observe(value, observed, joinName(undefined, key), 1, this.maxDepth);
    // `holdsNothing` was false, so the value types the field.
    const shape = settle(observed)!;
    const first = this.columns.length;
    const node = this.compile(key, joinName(undefined, key), shape, 1, 0, [key.toWellFormed()]);
    this.fastPath.stale = true;
    this.fields.push({ name: wellFormed(key, this.repairs), shape: repairShape(shape, this.repairs) });
    this.root.fields!.set(key, node);
    this.root.fieldList.push(node);
    const added = this.columns.slice(first);
    this.group.addColumns(
      added.map(({ kind, maxRepetition }) => ({ physical: PARQUET_TYPE[kind].physical, exact: PARQUET_TYPE[kind].exact, repeated: maxRepetition > 0 })),
    );
    return node;
  }

  /** The cell of a leaf value, or undefined when the column cannot hold it. */
  private leafCell(kind: ColumnKind, value: unknown, name: string): Exclude<Cell, null> | undefined {
    if (kind === 'timestamp') return typeof value === 'string' ? timestampOf(value) : undefined;
    if (!fits(kind, value)) return undefined;
    if (kind === 'json') checkJsonValue(value, name);
    return typedCell(kind, value, this.repairs) as Exclude<Cell, null>;
  }

  /** A value of another kind than its node's goes to `_extra` whole; the node reads NULL. */
  private mismatch(node: Node, value: unknown, repetition: number): void {
    // The record itself is checked as a plain object before it is shredded: what mismatches is a field of it.
    const name = node.name!;
    checkJsonValue(value, name);
    (this.spilled ??= {})[name] = value;
    this.writeNull(node, repetition);
  }
}

/** Whether a list's value fits its shape all the way down: only then is it shredded (lists go whole or not at all). */
function conforms(node: Node, value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (node.kind !== null) {
    // As `leafCell` decides: a value it refuses within a list or MAP would go to `_extra` under the list's name, once per element.
    if (node.kind === 'timestamp') return typeof value === 'string' && timestampOf(value) !== undefined;
    return fits(node.kind, value);
  }
  if (node.fields !== null) {
    if (!isPlainObject(value)) return false;
    for (const key in value) {
      const field = node.fields.get(key);
      const item = jsonValue(value[key], key);
      if (field === undefined ? !holdsNothing(item) : !conforms(field, item)) return false;
    }
    return true;
  }
  if (node.map) {
    if (!isPlainObject(value)) return false;
    for (const key in value) if (!conforms(node.element!, jsonValue(value[key], key))) return false;
    return true;
  }
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!conforms(node.element!, jsonValue(value[i], String(i)))) return false;
  return true;
}

function repairShape(shape: Shape, repairs: Repairs): Shape {
  if ('kind' in shape) return shape;
  if ('map' in shape) return { map: repairShape(shape.map, repairs) };
  if ('list' in shape) return { list: repairShape(shape.list, repairs) };
  return { struct: shape.struct.map(({ name, shape: child }) => ({ name: wellFormed(name, repairs), shape: repairShape(child, repairs) })) };
}

const { FieldRepetitionType, ConvertedType, Type } = parquetTypes;

/** Appends the schema elements of one optional field, depth first (the flat layout's MAP columns too: `parquet.ts`). */
export function schemaOf(name: string, shape: Shape, elements: unknown[], repetition = FieldRepetitionType.OPTIONAL): void {
  if ('kind' in shape) {
    const { physical, converted } = PARQUET_TYPE[shape.kind];
    elements.push(
      new parquetTypes.SchemaElement({
        name,
        type: Type[physical],
        repetition_type: repetition,
        converted_type: converted === undefined ? undefined : ConvertedType[converted],
      }),
    );
  } else if ('struct' in shape) {
    elements.push(new parquetTypes.SchemaElement({ name, repetition_type: repetition, num_children: shape.struct.length }));
    for (const field of shape.struct) schemaOf(field.name, field.shape, elements);
  } else if ('map' in shape) {
    // The MAP form of the Parquet specification: `optional group f (MAP) { repeated group key_value { required binary key (UTF8); optional … value } }`.
    const logicalType = new parquetTypes.LogicalType({ MAP: new parquetTypes.MapType() });
    elements.push(new parquetTypes.SchemaElement({ name, repetition_type: repetition, num_children: 1, converted_type: ConvertedType.MAP, logicalType }));
    elements.push(new parquetTypes.SchemaElement({ name: 'key_value', repetition_type: FieldRepetitionType.REPEATED, num_children: 2 }));
    elements.push(new parquetTypes.SchemaElement({ name: 'key', type: Type.BYTE_ARRAY, repetition_type: FieldRepetitionType.REQUIRED, converted_type: ConvertedType.UTF8 }));
    schemaOf('value', shape.map, elements);
  } else {
    elements.push(new parquetTypes.SchemaElement({ name, repetition_type: repetition, num_children: 1, converted_type: ConvertedType.LIST }));
    elements.push(new parquetTypes.SchemaElement({ name: 'list', repetition_type: FieldRepetitionType.REPEATED, num_children: 1 }));
    schemaOf('element', shape.list, elements);
  }
}
