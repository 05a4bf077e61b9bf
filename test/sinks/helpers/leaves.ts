/**
 * Leaf-by-leaf comparison of records with what came back from a file. Written independently of
 * sinks/rows.ts: it rebuilds a record from a row (column names split on unescaped dots, overflow
 * entries put back at their paths) and compares every leaf of the original with the rebuilt one.
 * A leaf is a scalar or an empty array or object; null leaves are left out, since NULL and an absent
 * field read the same in CSV and Parquet.
 */
export type Leaves = Map<string, unknown>;

/**
 * `structs`: an object whose fields are all null is the leaf `{}`, as in a nested Parquet file,
 * where `{}` is a struct whose fields are all NULL.
 */
export function leaves(value: unknown, options: { dropEmptyStrings?: boolean; structs?: boolean } = {}): Leaves {
  const out: Leaves = new Map();
  const visit = (v: unknown, path: Array<string | number>): void => {
    if (v === null || v === undefined) return;
    if (options.dropEmptyStrings && v === '') return;
    if (Array.isArray(v)) {
      if (v.length === 0) out.set(JSON.stringify(path), '[]');
      v.forEach((item, i) => visit(item, [...path, i]));
    } else if (typeof v === 'object') {
      const keys = Object.keys(v);
      const before = out.size;
      for (const key of keys) visit((v as Record<string, unknown>)[key], [...path, key]);
      if (keys.length === 0 || (options.structs && out.size === before)) out.set(JSON.stringify(path), '{}');
    } else out.set(JSON.stringify(path), v);
  };
  visit(value, []);
  return out;
}

/** The keys of a column name: dots separate, a backslash escapes the next character. */
export function keysOf(name: string): string[] {
  const keys: string[] = [''];
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '\\') keys[keys.length - 1] += name[++i];
    else if (name[i] === '.') keys.push('');
    else keys[keys.length - 1] += name[i];
  }
  return keys;
}

export function setPath(target: Record<string, unknown>, keys: string[], value: unknown): void {
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (node[key] === undefined || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

/**
 * Rebuilds a record from a row read back from a file. `decode` turns one cell into the value it
 * stands for (JSON text parsed, timestamps formatted); null/undefined cells are absent fields.
 */
export function rebuild(
  row: Record<string, unknown>,
  overflow: string,
  decode: (column: string, cell: unknown) => unknown,
  record: Record<string, unknown> = {},
): Record<string, unknown> {
  for (const [column, cell] of Object.entries(row)) {
    if (column === overflow || cell === null || cell === undefined) continue;
    setPath(record, keysOf(column), decode(column, cell));
  }
  const spilled = row[overflow];
  if (typeof spilled === 'string' && spilled !== '') {
    for (const [column, value] of Object.entries(JSON.parse(spilled) as Record<string, unknown>)) {
      setPath(record, keysOf(column), value);
    }
  }
  return record;
}

/** The leaves that differ, as readable lines; empty when every leaf came back. */
export function leafDifferences(expected: Leaves, actual: Leaves): string[] {
  const lines: string[] = [];
  for (const [path, value] of expected) {
    if (!actual.has(path)) lines.push(`missing ${path} = ${shown(value)}`);
    else if (!Object.is(actual.get(path), value)) lines.push(`${path}: expected ${shown(value)}, got ${shown(actual.get(path))}`);
  }
  for (const [path, value] of actual) if (!expected.has(path)) lines.push(`unexpected ${path} = ${shown(value)}`);
  return lines;
}

/** CSV is text: every scalar leaf compares as the text JSON would give it (strings as they are, a bigint as its digits). */
export function asText(leafMap: Leaves): Leaves {
  return new Map([...leafMap].map(([path, value]) => [path, typeof value === 'string' ? value : typeof value === 'bigint' ? String(value) : JSON.stringify(value)]));
}

/** A leaf in a message: a bigint with its `n`, so it cannot pass for a rounded number. */
function shown(value: unknown): string {
  return typeof value === 'bigint' ? `${value}n` : JSON.stringify(value);
}
