/**
 * A Parquet dataset's layout (docs/datasets.md "Parquet layout"): `nested` (records keep their shape,
 * objects as STRUCT and arrays as LIST, `schema-nested.ts`) or `flat` (dotted leaf columns).
 * The first run records it in the schema file (`parquetLayout`; new datasets are nested), and every
 * later run, migration and compaction keeps it: a dataset recorded before layouts has none and is
 * flat. Only a compaction asked for another layout converts one (`convertedSchema`); a run asked
 * for another is refused before any request.
 */
import { DatasetLayoutError } from '../errors.ts';
import { readStoredPart, type DatasetFormat } from './parts.ts';
import type { Storage } from './storage/types.ts';
import { NestedSchemaTracker } from './schema-nested.ts';
import { mergeFlatSchemas, mergeSchemas, SchemaTracker, type DatasetSchemaTracker, type SchemaColumn } from './schema.ts';
import { joinName, splitColumnName } from '../../sinks/rows.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import type { RecordedSchema, ScannedPart } from './scan.ts';
import { heldNames } from './columns.ts';
import { LEGACY_PARTITIONING, type DatasetPaths } from './store.ts';
import { objectPlace } from './objects.ts';

/** The layout a new Parquet dataset records. */
export const DEFAULT_DATASET_LAYOUT: ParquetLayout = 'nested';

/** The layout of a recorded dataset's Parquet parts; undefined for NDJSON and CSV parts, which have none. */
export function recordedLayout(schema: Pick<RecordedSchema, 'format' | 'parquetLayout'>): ParquetLayout | undefined {
  return schema.format === 'parquet' ? (schema.parquetLayout ?? 'flat') : undefined;
}

/**
 * The layout a run writes: the recorded one, or for a new dataset the one asked (nested by
 * default). A run that asks for another than the recorded one is refused, naming the remedy.
 */
export function layoutForRun(schema: RecordedSchema | undefined, format: DatasetFormat, asked: ParquetLayout | undefined, paths: DatasetPaths): ParquetLayout | undefined {
  if (format !== 'parquet') {
    if (asked === undefined) return undefined;
    throw new DatasetLayoutError(
      `${paths.place} holds ${paths.operation} as ${format} part files, which have no Parquet layout: run without layout (--layout), or export into another directory for Parquet parts`,
      paths.place,
      undefined,
      asked,
    );
  }
  if (schema === undefined) return asked ?? DEFAULT_DATASET_LAYOUT;
  const recorded = recordedLayout(schema)!;
  if (asked === undefined || asked === recorded) return recorded;
  throw new DatasetLayoutError(
    `${paths.place} holds ${paths.operation} in the ${recorded} Parquet layout (recorded in ${objectPlace(paths.storage, paths.names.schema)}), and a run keeps it: ` +
      `run without layout (--layout) to add ${recorded} parts, or convert the dataset first with \`socialstream dataset compact ${paths.place} --layout ${asked}\` ` +
      `(compactDataset(dir, { layout: '${asked}' })). Nothing was requested.`,
    paths.place,
    recorded,
    asked,
  );
}

/**
 * How a run's records change the schema of a dataset of `layout` (flat for NDJSON and CSV): a flat Parquet dataset's
 * objects keyed by data become MAP columns, which only Parquet parts hold.
 */
export function schemaTracker(columns: readonly SchemaColumn[], layout: ParquetLayout | undefined): DatasetSchemaTracker {
  return layout === 'nested' ? new NestedSchemaTracker(columns) : new SchemaTracker(columns, layout === 'flat');
}

/** `run`'s columns merged into `recorded`'s, in a dataset of `layout`: a flat Parquet one folds objects keyed by data into MAPs (`mergeFlatSchemas`). */
export function mergeColumns(recorded: readonly SchemaColumn[], run: readonly SchemaColumn[], layout: ParquetLayout | undefined): SchemaColumn[] {
  return layout === 'flat' ? mergeFlatSchemas(recorded, run) : mergeSchemas(recorded, run);
}

/**
 * The schema of `parts` written again in `target`: their rows (every version of them) observed
 * afresh, since one layout's columns do not say the other's (a flat dataset holds arrays as JSON
 * text, which a nested one lists). Reads every part once before a conversion writes any.
 */
export async function convertedSchema(storage: Storage, schema: RecordedSchema, parts: readonly ScannedPart[], target: ParquetLayout): Promise<RecordedSchema> {
  const tracker = schemaTracker([], target);
  for (const part of parts) {
    let chunk: Record<string, unknown>[] = [];
    for await (const row of readStoredPart(storage, part.name, schema.format, heldNames(schema.partitioning ?? LEGACY_PARTITIONING))) {
      chunk.push(row);
      if (chunk.length >= 1_000) {
        tracker.observe(chunk);
        chunk = [];
      }
    }
    tracker.observe(chunk);
  }
  // A column the schema records but no row fills (a field always null so far) is kept, as `target` holds it: readers still see it, as NULL.
  const recorded = inLayout(schema.columns, recordedLayout(schema) ?? 'flat', target);
  return { ...schema, columns: inOrderOf(mergeColumns(tracker.columns(), recorded, target), recorded), parquetLayout: target };
}

/**
 * Recorded columns as `to` holds them: a nested dataset's structs as dotted leaves, its lists as
 * JSON text and its maps as MAPs of leaves in a flat one; a flat dataset's dotted leaves as structs of leaves in a nested one
 * (a leaf that a shorter one already holds as a leaf is left to what the rows say).
 */
function inLayout(columns: readonly SchemaColumn[], from: ParquetLayout, to: ParquetLayout): SchemaColumn[] {
  if (from === to) return [...columns];
  if (to === 'flat') return flattened(columns, undefined);
  const root: SchemaColumn[] = [];
  for (const column of columns) {
    if (column.kind === 'struct' || column.kind === 'list' || column.kind === 'map') continue;
    const keys = splitColumnName(column.name);
    let fields: SchemaColumn[] | undefined = root;
    for (const key of keys.slice(0, -1)) {
      let struct: SchemaColumn | undefined = fields.find((field) => field.name === key);
      if (struct === undefined) fields.push((struct = { name: key, kind: 'struct', fields: [] }));
      fields = struct.kind === 'struct' ? struct.fields : undefined;
      if (fields === undefined) break;
    }
    const name = keys[keys.length - 1];
    if (fields !== undefined && !fields.some((field) => field.name === name)) fields.push({ name, kind: column.kind });
  }
  return root;
}

function flattened(columns: readonly SchemaColumn[], prefix: string | undefined): SchemaColumn[] {
  return columns.flatMap((column): SchemaColumn[] => {
    const name = joinName(prefix, column.name);
    if (column.kind === 'struct') return flattened(column.fields, name);
    // A flat dataset keeps lists as JSON text, and a map as a MAP of leaves (its values' objects and lists JSON text).
    if (column.kind === 'map') return [{ name, kind: 'map', value: { kind: column.value.kind === 'struct' || column.value.kind === 'list' || column.value.kind === 'map' ? 'json' : column.value.kind } }];
    return [{ name, kind: column.kind === 'list' ? 'json' : column.kind }];
  });
}

/** `columns` (and the fields of their structs) in the order `recorded` gives them; those it lacks after, as they came. */
function inOrderOf(columns: readonly SchemaColumn[], recorded: readonly SchemaColumn[]): SchemaColumn[] {
  const rank = new Map(recorded.map((column, i) => [column.name, i]));
  const ordered = [...columns].sort((a, b) => (rank.get(a.name) ?? recorded.length) - (rank.get(b.name) ?? recorded.length));
  return ordered.map((column) => {
    const was = recorded[rank.get(column.name) ?? -1];
    return column.kind === 'struct' && was?.kind === 'struct' ? { ...column, fields: inOrderOf(column.fields, was.fields) } : column;
  });
}
