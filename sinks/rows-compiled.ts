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
import { countKeys, GeneratedCode, hasToJson, leafCode } from './compiled-code.ts';
import type { KeyIndex } from './key-index.ts';
import { isPlainObject, type Cell, type ColumnKind, type PlainObject } from './values.ts';

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
  const code = new GeneratedCode();
  const fillRoot = object(code, root, columns, ignored, true);
  const entry = code.function('record, row', () =>
    [
      held === undefined ? '' : `if (${code.read('record', held)} !== undefined) return false;`,
      // Null is every cell's value where the record has none.
      `row.fill(null);`,
      `return ${fillRoot}(record, row);`,
    ].join('\n'),
  );
  return code.build<CompiledRowFiller>(entry, host, { isPlainObject });
}

/**
 * The function (its name) that fills the cells of an object at one level of the column names:
 * each key read and its value put in its column or descended into; the object's keys counted, so
 * one without a column refuses the record.
 */
function object(
  code: GeneratedCode,
  children: KeyIndex<PathNode>,
  columns: readonly FilledColumn[],
  ignored: ReadonlyMap<KeyIndex<PathNode>, readonly string[]>,
  record = false,
): string {
  return code.function('object, row', () => {
    const keys = countKeys(code, 'object');
    // An empty object below the record is a value, not columns: the walk sends it to `_extra` (or its own column's).
    const lines = [keys.text, record ? '' : `if (${keys.name} === 0) return false;`];
    for (const [key, node] of children.entries()) {
      const value = code.variable('v');
      lines.push(
        `{ const ${value} = ${code.read('object', key)};`,
        // NULL and an absent field read the same: a null leaves its cells null.
        `if (${value} !== undefined) { ${keys.name}--; if (${value} !== null) { ${valueCode(code, node, value, columns, ignored)} } } }`,
      );
    }
    for (const key of ignored.get(children) ?? []) {
      const value = code.variable('v');
      lines.push(`{ const ${value} = ${code.read('object', key)}; if (${value} !== undefined) { ${keys.name}--; if (${value} !== null) return false; } }`);
    }
    lines.push(`return ${keys.name} === 0;`);
    return lines.join('\n');
  });
}

/** A value (neither null nor undefined, in the variable `value`) at `node`: a column's cell, or an object descended into. */
function valueCode(code: GeneratedCode, node: PathNode, value: string, columns: readonly FilledColumn[], ignored: ReadonlyMap<KeyIndex<PathNode>, readonly string[]>): string {
  const nested = `isPlainObject(${value}) && !(${hasToJson(value)})`;
  if (node.children === undefined) return leaf(code, node.index!, value, columns);
  // Only an object with keys is descended into (an empty one is a value: of the column at this name, if there is one).
  const descend = `${object(code, node.children, columns, ignored)}(${value}, row)`;
  if (node.index === undefined) return `if (!(${nested}) || !${descend}) return false;`;
  const empty = code.variable('y');
  return `let ${empty} = true; if (${nested}) for (const _ in ${value}) { ${empty} = false; break; }
    if (!${empty}) { if (!${descend}) return false; } else { ${leaf(code, node.index, value, columns)} }`;
}

/** A value of column `index`: its cell, if the column holds it as it is. */
function leaf(code: GeneratedCode, index: number, value: string, columns: readonly FilledColumn[]): string {
  const column = columns[index];
  // A column nothing in the sample typed sends every value to `_extra` (where the file's fix-up sees it): the walk's.
  if (column.untyped === true) return 'return false;';
  return leafCode(code, column.kind!, value, (cell) => `row[${index}] = ${cell};`, `host.leafCell(${index}, ${value})`);
}
