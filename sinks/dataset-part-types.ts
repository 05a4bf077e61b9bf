/**
 * Whether a dataset's part holds the types its schema records: a part written before a run widened
 * a column (or typed an untyped one, or added a field) holds the narrower shape, which the
 * documented reads widen but which `dataset compact` rewrites, so every part holds the one type
 * (docs/types.md). Read from the part's footer (`socialstream.columns`), not its rows.
 */
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';
import { nestedFields } from './dataset-nested.ts';
import { leavesOf } from './dataset-schema.ts';
import type { PartSchema } from './dataset-parts.ts';
import { COLUMNS_METADATA_KEY } from './parquet.ts';

/** True when the Parquet part at `path` was written with `schema`'s types (other formats are text: always). */
export async function partHoldsSchema(path: string, schema: PartSchema): Promise<boolean> {
  if (schema.format !== 'parquet') return true;
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path));
  const entry = metadata.key_value_metadata?.find(({ key }) => key === COLUMNS_METADATA_KEY);
  const described = JSON.parse(entry?.value ?? '{}') as { fields?: unknown; columns?: unknown };
  if (schema.parquetLayout === 'nested') return JSON.stringify(described.fields) === JSON.stringify(nestedFields(schema.columns));
  const leaves = leavesOf(schema.columns).flatMap(({ name, kind }) => (kind === 'untyped' ? [] : [{ name, kind }]));
  return JSON.stringify(described.columns) === JSON.stringify(leaves);
}
