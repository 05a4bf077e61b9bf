/**
 * Code made from text for one shape of records: what both Parquet layouts' fast paths
 * (`parquet-nested-compiled.ts`, `rows-compiled.ts`) share.
 *
 * Why: a walk that meets the objects of every shape at one place in the code reads their fields
 * the slow way, for objects of many shapes, and asks each value's column for its kind at run time.
 * A function made for the shape reads each field at a place of its own, for objects of one shape,
 * with each column's kind settled when it is made.
 *
 * The text holds no text of the records: a key is read from an array the function closes over
 * (`object[k3]`), never written into the code, and everything else written is a number or a name
 * chosen here. Where code cannot be made from text (`node --disallow-code-generation-from-strings`,
 * a page's content security policy) `build` answers undefined, and the layout's walk does the work.
 */
import { timestampOf, type ColumnKind } from '../src/column-kinds.ts';

/** The text of one fast path, and the keys and values it names by number. */
export class GeneratedCode {
  /** The keys read, by their names in the text (`k<n>`, n their place). */
  private readonly keys = new Map<string, string>();
  /** Other values the text names (`n<n>`): the layout's nodes it hands back. */
  private readonly values = new Map<unknown, string>();
  /** The functions' text: one for each object of the shape, and the one `build` returns. */
  private readonly functions: string[] = [];
  private variables = 0;

  /** The name of `key` in the text. */
  key(key: string): string {
    let name = this.keys.get(key);
    if (name === undefined) this.keys.set(key, (name = `k${this.keys.size}`));
    return name;
  }

  /**
   * The text that reads an object's own field `key`, undefined where it has none. A key that
   * `Object.prototype` has (`__proto__`, `constructor`, `toString`…) is read only where the object
   * has it as its own: read plainly, an object without it gives the prototype's (for `__proto__`,
   * `Object.prototype` itself, an object that would pass for an empty struct).
   */
  read(object: string, key: string): string {
    const name = this.key(key);
    return key in Object.prototype ? `(Object.hasOwn(${object}, ${name}) ? ${object}[${name}] : undefined)` : `${object}[${name}]`;
  }

  /** The name of `value` in the text. */
  value(value: unknown): string {
    let name = this.values.get(value);
    if (name === undefined) this.values.set(value, (name = `n${this.values.size}`));
    return name;
  }

  /** A name for a new variable. */
  variable(prefix: string): string {
    return `${prefix}${this.variables++}`;
  }

  /**
   * Adds a function of `parameters` whose statements `body` gives (it may add functions of its own:
   * the place is taken first). Returns its name.
   */
  function(parameters: string, body: () => string): string {
    const at = this.functions.push('') - 1;
    this.functions[at] = `function f${at}(${parameters}) {\n${body()}\n}`;
    return `f${at}`;
  }

  /**
   * The function named `entry`, made with `helpers` (functions the text calls by name) and `host`
   * (the layout's methods for what the text leaves to it); undefined where code cannot be made from text.
   */
  build<F>(entry: string, host: object, helpers: Record<string, unknown>): F | undefined {
    const named = { ...helpers, timestampOf };
    const names = Object.keys(named);
    const source = `'use strict';
const { ${names.join(', ')} } = helpers;
${[...this.keys.values()].map((name, i) => `const ${name} = keys[${i}];`).join('\n')}
${[...this.values.values()].map((name, i) => `const ${name} = values[${i}];`).join('\n')}
${this.functions.join('\n')}
return ${entry};`;
    let factory: (keys: readonly string[], values: readonly unknown[], host: object, helpers: Record<string, unknown>) => F;
    try {
      // The text is built from numbers and names chosen here only (see above): nothing of a record's is evaluated.
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      factory = new Function('keys', 'values', 'host', 'helpers', source) as typeof factory;
    } catch (error) {
      if (error instanceof EvalError) return undefined;
      throw error;
    }
    return factory([...this.keys.keys()], [...this.values.keys()], host, named);
  }
}

/** How a fast path stores a leaf's cell: `store(cell, as)`, `as` naming the kind of cell (`Text`, `Number`, or any: ''). */
export type StoreCell = (cell: string, as: 'Text' | 'Number' | '') => string;

/**
 * A leaf value's code (the value, neither null nor undefined, in the variable `value`): stored by
 * `store` if its column of `kind` holds it as it is, else `return false` (the layout's walk then
 * writes the record). Kinds without code of their own (`bigint`, `json`) ask `hostCell`, an
 * expression of the cell or undefined.
 */
export function leafCode(code: GeneratedCode, kind: ColumnKind, value: string, store: StoreCell, hostCell: string): string {
  switch (kind) {
    case 'string':
      // A string column holds numbers and bigints as their digits (`values.ts` `typedCell`).
      return `if (typeof ${value} === 'string') ${store(`${value}.isWellFormed() ? ${value} : host.repaired(${value})`, 'Text')}
        else if (typeof ${value} === 'number' || typeof ${value} === 'bigint') ${store(`String(${value})`, 'Text')} else return false;`;
    case 'integer':
      return `if (Number.isSafeInteger(${value})) ${store(value, 'Number')} else return false;`;
    case 'double':
      return `if (typeof ${value} === 'number') ${store(value, 'Number')} else return false;`;
    case 'boolean':
      return `if (typeof ${value} === 'boolean') ${store(value, 'Number')} else return false;`;
    case 'timestamp': {
      const instant = code.variable('t');
      return `if (typeof ${value} !== 'string') return false; const ${instant} = timestampOf(${value}); if (${instant} === undefined) return false; ${store(instant, 'Number')}`;
    }
    case 'bigint':
    case 'json': {
      const cell = code.variable('x');
      // An object's `toJSON` (JSON's view of it, `values.ts` `jsonValue`) changes the value: the walk takes those.
      return `if (typeof ${value} === 'object' && ${hasToJson(value)}) return false; const ${cell} = ${hostCell}; if (${cell} === undefined) return false; ${store(cell, '')}`;
    }
  }
}

/** Whether an object (held in the variable `value`) has a `toJSON` method: then JSON sees something else, and the walk writes it. */
export function hasToJson(value: string): string {
  return `typeof ${value}.toJSON === 'function'`;
}

/** A field of an object's code (`objectFunction`): its key, and its code where the object holds a value for it and where it does not. */
export interface FieldCode {
  readonly key: string;
  /** Statements for a value neither null nor undefined (in the variable `value`); `return false` refuses the record. */
  present(value: string): string;
  /** Statements for a field the object lacks or holds null in. */
  readonly absent: string;
}

/**
 * The function (its name) for an object of a shape, taking `object` then `parameters`: each field
 * read by its key and its code run; then the keys the shape lacks that the walk saw holding nothing
 * (`skipped`), which the object may have when `nothing(value)` (an expression) holds for a value
 * other than null. The object's own keys are counted against those it has of both, so a key more
 * refuses the record without a lookup per key. `opening(keys)`: statements after the count.
 */
export function objectFunction(
  code: GeneratedCode,
  parameters: string,
  fields: readonly FieldCode[],
  skipped: { readonly keys: readonly string[]; nothing(value: string): string },
  opening: (keys: string) => string = () => '',
): string {
  return code.function(`object, ${parameters}`, () => {
    const keys = code.variable('c');
    const lines = [`let ${keys} = 0;`, `for (const _ in object) ${keys}++;`, opening(keys)];
    for (const field of fields) {
      const value = code.variable('v');
      lines.push(
        `{ const ${value} = ${code.read('object', field.key)};`,
        `if (${value} === undefined || ${value} === null) { if (${value} === null) ${keys}--; ${field.absent} }`,
        `else { ${keys}--; ${field.present(value)} } }`,
      );
    }
    for (const key of skipped.keys) {
      const value = code.variable('v');
      lines.push(`{ const ${value} = ${code.read('object', key)}; if (${value} !== undefined) { ${keys}--; if (${value} !== null && !(${skipped.nothing(value)})) return false; } }`);
    }
    lines.push(`return ${keys} === 0;`);
    return lines.join('\n');
  });
}
