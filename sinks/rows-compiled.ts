/**
 * The flat layout's fast path (typed layouts: Parquet): a record of the columns the layout knows,
 * mapped to its row by code made for them (`compiled-code.ts` says why, and how no text of a
 * record gets into it).
 *
 * What a row holds does not depend on it. It takes only the records whose every key leads to a
 * column, with every value of its column's kind and nothing bound for `_extra`; at the first thing
 * it does not take it answers `false`, and the layout maps the record by its walk (`RowLayout.walk`),
 * which decides as it always has, after putting back the repairs the fast path counted.
 */
import { GeneratedCode, hasToJson, leafCode, objectFunction, type FieldCode } from './compiled-code.ts';
import type { KeyIndex } from './key-index.ts';
import { hasKeys, isPlainObject, type Cell, type PlainObject } from './values.ts';
import type { ColumnKind } from '../src/column-kinds.ts';

/** One key of a column name: the column it ends (if any) and the keys that continue it (`rows.ts`). */
export interface PathNode {
  /** The escaped, dotted name up to and including this key. */
  name: string;
  index?: number;
  children?: KeyIndex<PathNode>;
}

/** Fills `row` (every cell but the overflow one, null where the record has nothing) from `record`; `false` when the record is not one it takes. */
export type CompiledRowFiller = (record: PlainObject, row: unknown[]) => boolean;

/** What the compiled code reads of a layout's column (`rows.ts` `Column`). */
export interface FilledColumn {
  readonly kind: ColumnKind | undefined;
  readonly untyped?: boolean;
  readonly map?: true;
}

/** What the compiled code leaves to the layout. */
export interface RowHost {
  /** The cell of a value in column `index` (a `bigint` or JSON text column), or undefined when it cannot hold it. */
  leafCell(index: number, value: unknown): Cell | undefined;
  /** `text` with each lone surrogate made U+FFFD, counted. */
  repaired(text: string): string;
}

/** A layout with more columns than this is left to the walk: its code would be large. */
const MAX_COLUMNS = 4096;

/**
 * The compiled row filling of a typed layout's records, or undefined where code cannot be made from
 * text or the layout is one it leaves to the walk (one with a MAP column). `held`: the
 * record's field whose entries are bound for the overflow column (a dataset's part), left to the walk.
 */
export function compileRowFiller(
  root: KeyIndex<PathNode>,
  columns: readonly FilledColumn[],
  host: RowHost,
  held: string | undefined,
  /** Per level, keys without a column seen holding null (which the walk skips). */
  ignored: ReadonlyMap<KeyIndex<PathNode>, readonly string[]>,
): CompiledRowFiller | undefined {
  if (columns.length > MAX_COLUMNS || columns.some((column) => column.map !== undefined || column.kind === undefined)) return undefined;
  const layout: Layout = { code: new GeneratedCode(), columns, ignored };
  const { code } = layout;
  const fillRoot = object(layout, root, true);
  const entry = code.function('record, row', () =>
    [
      held === undefined ? '' : `if (${code.read('record', held)} !== undefined) return false;`,
      // Null is every cell's value where the record has none.
      `row.fill(null);`,
      `return ${fillRoot}(record, row);`,
    ].join('\n'),
  );
  return code.build<CompiledRowFiller>(entry, host, { isPlainObject, hasKeys });
}

/** What the code for one layout is made from. */
interface Layout {
  readonly code: GeneratedCode;
  readonly columns: readonly FilledColumn[];
  /** Per level, keys without a column seen holding null (which the walk skips). */
  readonly ignored: ReadonlyMap<KeyIndex<PathNode>, readonly string[]>;
}

/**
 * The function (its name) that fills the cells of an object at one level of the column names:
 * each key read and its value put in its column or descended into; a key without a column refuses
 * the record, but one the walk saw holding null, when null here too.
 */
function object(layout: Layout, children: KeyIndex<PathNode>, record = false): string {
  const fields = [...children.entries()].map(
    // NULL and an absent field read the same: a null leaves its cells null.
    ([key, node]): FieldCode => ({ key, present: (value) => valueCode(layout, node, value), absent: '' }),
  );
  const skipped = { keys: layout.ignored.get(children) ?? [], nothing: () => 'false' };
  // An empty object below the record is a value, not columns: the walk sends it to `_extra` (or its own column's).
  return objectFunction(layout.code, 'row', fields, skipped, (keys) => (record ? '' : `if (${keys} === 0) return false;`));
}

/** A value (neither null nor undefined, in the variable `value`) at `node`: a column's cell, or an object descended into. */
function valueCode(layout: Layout, node: PathNode, value: string): string {
  if (node.children === undefined) return leaf(layout, node.index!, value);
  const nested = `isPlainObject(${value}) && !(${hasToJson(value)})`;
  // Only an object with keys is descended into (an empty one is a value: of the column at this name, if there is one).
  const descend = `${object(layout, node.children)}(${value}, row)`;
  if (node.index === undefined) return `if (!(${nested}) || !${descend}) return false;`;
  return `if (${nested} && hasKeys(${value})) { if (!${descend}) return false; } else { ${leaf(layout, node.index, value)} }`;
}

/** A value of column `index`: its cell, if the column holds it as it is. */
function leaf({ code, columns }: Layout, index: number, value: string): string {
  const column = columns[index];
  // A column nothing in the sample typed sends every value to `_extra` (where the file's fix-up sees it): the walk's.
  if (column.untyped === true) return 'return false;';
  return leafCode(code, column.kind!, value, (cell) => `row[${index}] = ${cell};`, `host.leafCell(${index}, ${value})`);
}
