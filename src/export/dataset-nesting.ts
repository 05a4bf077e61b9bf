/**
 * A Parquet dataset's layout (docs/datasets.md "Parquet layout"): `nested` (records keep their shape,
 * objects as STRUCT and arrays as LIST, `sinks/dataset-nested.ts`) or `flat` (dotted leaf columns).
 * The first run records it in the schema file (`parquetLayout`; new datasets are nested), and every
 * later run, migration and compaction keeps it: a dataset recorded before layouts has none and is
 * flat. Only a compaction asked for another layout converts one (`convertedSchema`); a run asked
 * for another is refused before any request.
 */
import { DatasetLayoutError } from '../errors.ts';
import { readPart, type DatasetFormat } from '../../sinks/dataset-parts.ts';
import { NestedSchemaTracker } from '../../sinks/dataset-nested.ts';
import { SchemaTracker, type DatasetSchemaTracker, type SchemaColumn } from '../../sinks/dataset-schema.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import type { RecordedSchema, ScannedPart } from './dataset-scan.ts';
import type { DatasetPaths } from './dataset-store.ts';

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
      `${paths.dir} holds ${paths.operation} as ${format} part files, which have no Parquet layout: run without layout (--layout), or export into another directory for Parquet parts`,
      paths.dir,
      undefined,
      asked,
    );
  }
  if (schema === undefined) return asked ?? DEFAULT_DATASET_LAYOUT;
  const recorded = recordedLayout(schema)!;
  if (asked === undefined || asked === recorded) return recorded;
  throw new DatasetLayoutError(
    `${paths.dir} holds ${paths.operation} in the ${recorded} Parquet layout (recorded in ${paths.schema}), and a run keeps it: ` +
      `run without layout (--layout) to add ${recorded} parts, or convert the dataset first with \`socialstream dataset compact ${paths.dir} --layout ${asked}\` ` +
      `(compactDataset(dir, { layout: '${asked}' })). Nothing was requested.`,
    paths.dir,
    recorded,
    asked,
  );
}

/** How a run's records change the schema of a dataset of `layout` (flat for NDJSON and CSV). */
export function schemaTracker(columns: readonly SchemaColumn[], layout: ParquetLayout | undefined): DatasetSchemaTracker {
  return layout === 'nested' ? new NestedSchemaTracker(columns) : new SchemaTracker(columns);
}

/**
 * The schema of `parts` written again in `target`: their rows (every version of them) observed
 * afresh, since one layout's columns do not say the other's (a flat dataset holds arrays as JSON
 * text, which a nested one lists). Reads every part once before a conversion writes any.
 */
export async function convertedSchema(schema: RecordedSchema, parts: readonly ScannedPart[], target: ParquetLayout): Promise<RecordedSchema> {
  const tracker = schemaTracker([], target);
  for (const part of parts) {
    let chunk: Record<string, unknown>[] = [];
    for await (const row of readPart(part.path, schema.format)) {
      chunk.push(row);
      if (chunk.length >= 1_000) {
        tracker.observe(chunk);
        chunk = [];
      }
    }
    tracker.observe(chunk);
  }
  return { ...schema, columns: tracker.columns(), parquetLayout: target };
}
