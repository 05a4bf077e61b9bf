/**
 * Whether a dataset's part holds the types its schema records: a part written before a run widened
 * a column (or typed an untyped one, or added a field) holds the narrower shape, which the
 * documented reads widen but which the widening rewrite (`widen.ts`) and
 * `dataset compact` rewrite, so every part holds the one type (docs/types.md). Read from the part's
 * footer (`socialstream.columns`), not its rows: the part's last bytes, read through the store
 * (`part-footer.ts`), not the part.
 */
import { nestedFields } from './schema-nested.ts';
import type { NestedField } from '../../sinks/shapes.ts';
import { typedColumns, type PartSchema } from './parts.ts';
import { COLUMNS_METADATA_KEY } from '../../sinks/parquet.ts';
import { partMetadata } from './part-footer.ts';
import type { Storage } from './storage/types.ts';

interface Described {
  fields?: unknown;
  columns?: unknown;
}

/** A part of a dataset's store: its name, and its size in the listing it was found by. */
export interface StoredPart {
  readonly name: string;
  readonly bytes: number;
}

/** True when the Parquet part `part` of `storage` was written with `schema`'s types (other formats are text: always). */
export async function partHoldsSchema(storage: Storage, part: StoredPart, schema: PartSchema): Promise<boolean> {
  if (schema.format !== 'parquet') return true;
  const described = await describedColumns(storage, part);
  if (schema.parquetLayout === 'nested') return JSON.stringify(described.fields) === JSON.stringify(nestedFields(schema.columns));
  return JSON.stringify(described.columns) === JSON.stringify(typedColumns(schema.columns, schema.format));
}

/**
 * True when the Parquet part `part` of `storage` holds a column (or a nested field) of another type than
 * `schema` records: one a later run widened. A column the part lacks is not a type: the documented
 * reads give it as NULL, so a field added later does not make every part be rewritten.
 */
export async function partHoldsNarrowerType(storage: Storage, part: StoredPart, schema: PartSchema): Promise<boolean> {
  if (schema.format !== 'parquet') return false;
  const described = await describedColumns(storage, part);
  const [held, recorded] =
    schema.parquetLayout === 'nested'
      ? [leafKinds((described.fields ?? []) as NestedField[]), leafKinds(nestedFields(schema.columns))]
      : [flatKinds((described.columns ?? []) as FlatDescribed[]), flatKinds(typedColumns(schema.columns, schema.format))];
  for (const [path, kind] of held) if (recorded.has(path) && recorded.get(path) !== kind) return true;
  // A flat part's columns of an object the schema has since folded into a MAP (`foldKeyedColumns`).
  if (schema.parquetLayout !== 'nested') {
    const maps = [...recorded].flatMap(([name, kind]) => (kind.endsWith('{}') ? [name] : []));
    for (const name of held.keys()) if (maps.some((map) => name.startsWith(`${map}.`))) return true;
  }
  return false;
}

/** A flat part's column as its footer describes it. */
type FlatDescribed = { name: string; kind: string; map?: true };

/** Each flat column by name, with its kind: a MAP's as `<kind>{}`, as `leafKinds` names a map's value. */
function flatKinds(columns: readonly FlatDescribed[]): Map<string, string> {
  return new Map(columns.map(({ name, kind, map }) => [name, map === undefined ? kind : `${kind}{}`]));
}

async function describedColumns(storage: Storage, part: StoredPart): Promise<Described> {
  const metadata = await partMetadata(storage, part.name, part.bytes);
  const entry = metadata.key_value_metadata?.find(({ key }) => key === COLUMNS_METADATA_KEY);
  return JSON.parse(entry?.value ?? '{}') as Described;
}


/** Each scalar of nested fields by its path (`a.b`, a list's element as `a[]`, a map's value as `a{}`), with its kind. */
function leafKinds(fields: readonly NestedField[], prefix = ''): Map<string, string> {
  const kinds = new Map<string, string>();
  const walk = (path: string, shape: NestedField['shape']): void => {
    if ('struct' in shape) for (const [inner, kind] of leafKinds(shape.struct, `${path}.`)) kinds.set(inner, kind);
    else if ('list' in shape) walk(`${path}[]`, shape.list);
    else if ('map' in shape) walk(`${path}{}`, shape.map);
    else kinds.set(path, shape.kind);
  };
  for (const field of fields) walk(`${prefix}${field.name}`, field.shape);
  return kinds;
}
