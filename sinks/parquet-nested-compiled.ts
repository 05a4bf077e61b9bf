/**
 * The nested layout's fast path: the shredding of a record of the shape the layout knows, made
 * into code of its own (`compiled-code.ts` says why, and how no text of a record gets into it)
 * when the layout has shredded records enough, and again when the shape grows. On a million
 * generated posts it took about two fifths off the writer's thread's shredding (`bench/sinks.ts`).
 *
 * What a file holds does not depend on it. It takes only the records that fit the shape as they
 * are: every key one of its struct's fields (or one seen holding nothing, `ShredNode.ignored`),
 * every value of its column's kind, nothing bound for `_extra`. At the first thing it does not
 * take, it answers `false`; the layout then takes back the row's entries and the repairs it
 * counted, and shreds the record by its walk, which decides as it always has. So every test of the
 * nested layout checks it: a record either comes out as the walk would write it or is written by
 * the walk.
 */
import { GeneratedCode, hasToJson, leafCode, objectFunction, type FieldCode } from './compiled-code.ts';
import type { KeyIndex } from './key-index.ts';
import type { RowGroupCells } from './parquet-cells.ts';
import { isPlainObject, type Cell, type PlainObject } from './values.ts';
import type { ColumnKind } from '../src/column-kinds.ts';
import { holdsNothing } from './shapes.ts';

/**
 * A field of the nested layout's shape, as the layout keeps it for shredding: which columns it
 * spans and its levels. Every node has every property (unused ones null), so the walk's reads see
 * one object shape.
 */
export interface ShredNode {
  /** The record's own key of this field in its struct (undefined for the record itself, a list's element and a map's value). */
  readonly key: string | undefined;
  /** The escaped, dotted path: its name in `_extra`; undefined for the record itself (the root, a struct). */
  readonly name: string | undefined;
  /** Definition level of an entry whose value is present at this node. */
  readonly definition: number;
  /** Leaf columns under this node: `first` up to (not including) `end`. */
  readonly first: number;
  end: number;
  /** Leaves: the kind (its column is `first`); null for a struct or list. */
  kind: ColumnKind | null;
  /** Structs: fields by key, and the same in order. */
  fields: KeyIndex<ShredNode> | null;
  fieldList: ShredNode[];
  /** Structs: keys the struct lacks that were seen holding nothing (null, `[]`, `{}`), which the fast path skips too. */
  ignored: string[];
  /** The visit at which this field was last written (so the missing ones are written NULL). */
  stamp: number;
  /** Lists and maps: the element (a map's value; its key is column `first`), and the repetition level of an entry after the first. */
  element: ShredNode | null;
  repetition: number;
  map: boolean;
}

/** Shreds a record into the row begun in `group`, all but the overflow column; `false` when the record is not one it takes. */
export type CompiledShredder = (record: PlainObject, group: RowGroupCells) => boolean;

/** What the compiled code leaves to the layout: the kinds and nodes it has no code of its own for. */
export interface ShredHost {
  /** The cell of a leaf value (a `bigint` or JSON text column), or undefined when its column cannot hold it. */
  leafCell(node: ShredNode, value: unknown): Exclude<Cell, null> | undefined;
  /** Writes a MAP node's value by the layout's walk (which may send it to `_extra`: the layout then refuses the row). */
  write(node: ShredNode, value: unknown, repetition: number, inList: boolean): void;
  /** `text` with each lone surrogate made U+FFFD, counted. */
  repaired(text: string): string;
}

/** A shape with more leaf columns than this is left to the walk: its code would be large and its records rare. */
const MAX_COLUMNS = 4096;

/**
 * The compiled shredding of `root`'s records, or undefined where code cannot be made from text or
 * the shape is one it leaves to the walk. `held`: the record's field whose entries are bound for the
 * overflow column (a dataset's part), which the fast path leaves to the walk too.
 */
export function compileShredder(root: ShredNode, host: ShredHost, held: string | undefined): CompiledShredder | undefined {
  if (root.end - root.first > MAX_COLUMNS) return undefined;
  const code = new GeneratedCode();
  const shredRoot = struct(code, root, false);
  const entry = code.function('record, group', () =>
    [held === undefined ? '' : `if (${code.read('record', held)} !== undefined) return false;`, `return ${shredRoot}(record, 0, group);`].join('\n'),
  );
  return code.build<CompiledShredder>(entry, host, { isPlainObject, holdsNothing });
}

/**
 * The function (its name) that shreds an object of `node`'s struct at a repetition level: each
 * field read by its key and written, absent ones NULL; the object's keys counted, so one the struct
 * lacks refuses the record. A function a struct, not one for the whole record: V8 optimizes small
 * functions sooner and in less time, which short files feel.
 */
function struct(code: GeneratedCode, node: ShredNode, inList: boolean): string {
  const fields = node.fieldList.map(
    (field): FieldCode => ({
      key: field.key!,
      present: (value) => valueCode(code, field, value, 'repetition', inList),
      absent: nulls(code, field, 'repetition'),
    }),
  );
  // A key seen holding nothing may have become a field since (`NestedLayout.addField`): it is read once, as the field.
  const skipped = node.ignored.filter((key) => node.fields!.get(key) === undefined);
  return objectFunction(code, 'repetition, group', fields, { keys: skipped, nothing: (value) => `holdsNothing(${value})` });
}

/** `node` and everything under it NULL (or absent) at this entry. */
function nulls(code: GeneratedCode, node: ShredNode, repetition: string): string {
  return entries(code, node, node.definition - 1, repetition);
}

/** An entry without a value in each of `node`'s columns, at `definition`: one push, or a loop over the columns (less code to optimize). */
function entries(code: GeneratedCode, node: ShredNode, definition: number, repetition: string): string {
  if (node.end - node.first === 1) return `group.pushNull(${node.first}, ${definition}, ${repetition});`;
  const column = code.variable('n');
  return `for (let ${column} = ${node.first}; ${column} < ${node.end}; ${column}++) group.pushNull(${column}, ${definition}, ${repetition});`;
}

/** A value of `node` that is neither null nor undefined (held in the variable `value`). */
function valueCode(code: GeneratedCode, node: ShredNode, value: string, repetition: string, inList: boolean): string {
  if (node.kind !== null) {
    const store = (cell: string, as: string): string => `group.push${as}(${node.first}, ${node.definition}, ${repetition}, ${cell});`;
    return leafCode(code, node.kind, value, store, `host.leafCell(${code.value(node)}, ${value})`);
  }
  if (node.fields !== null) {
    return `if (!isPlainObject(${value}) || ${hasToJson(value)} || !${struct(code, node, inList)}(${value}, ${repetition}, group)) return false;`;
  }
  if (node.map) {
    return `if (!isPlainObject(${value}) || ${hasToJson(value)}) return false; host.write(${code.value(node)}, ${value}, ${repetition}, ${inList});`;
  }
  const element = node.element!;
  const [length, index, item, at] = ['l', 'i', 'e', 'r'].map((prefix) => code.variable(prefix));
  return `if (!Array.isArray(${value}) || ${hasToJson(value)}) return false;
    const ${length} = ${value}.length;
    if (${length} === 0) { ${entries(code, node, node.definition, repetition)} }
    for (let ${index} = 0; ${index} < ${length}; ${index}++) {
      const ${item} = ${value}[${index}];
      const ${at} = ${index} === 0 ? ${repetition} : ${node.repetition};
      if (${item} === null || ${item} === undefined) { ${nulls(code, element, at)} }
      else { ${valueCode(code, element, item, at, true)} }
    }`;
}
