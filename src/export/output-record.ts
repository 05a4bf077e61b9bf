/**
 * What a finished `--out` file says about the export that made it: its operation, its walks'
 * parameters and its format. A resume reads it to tell the export it would continue from a file
 * another export (or a version before this record, or something else) left there, which it must not
 * take as its own finished work.
 *
 * Parquet keeps it inside the file, in the key-value metadata `socialstream.export`. NDJSON and CSV
 * stay plain records byte for byte (for `cat`, DuckDB, a csv reader), so theirs is a side file beside
 * the output, `<out>.export.json`, which also holds the output's size: an output replaced or edited
 * since is not taken for the one it describes. Only a complete output gets a record; a partial one
 * is described by its checkpoint. It holds no key: the parameters are the operation's query parameters.
 */
import { createHash } from 'node:crypto';
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';
import { StateDamagedError } from '../errors.ts';
import { walkName } from '../operations/walk-name.ts';
import { fileSize, readJsonFile, writeJsonAtomic } from './durable.ts';
import type { FileFormat } from './types.ts';

/** The Parquet footer's key-value metadata key that holds the record. */
const EXPORT_METADATA_KEY = 'socialstream.export';

/** Parameter sets listed in a record: a wide export's million are told apart by `digest`, not listed. */
const LISTED = 20;

export interface ExportRecord {
  version: 1;
  /** Operation id, e.g. `forum/subforum`. */
  operation: string;
  format: FileFormat;
  /** How many parameter sets (walks) the export has. */
  walks: number;
  /** SHA-256 over the walks' names, sorted: the same walks in any order give the same digest. */
  digest: string;
  /** The first parameter sets, as given. */
  params: Record<string, string>[];
}

/** A finished output's record, with how many records the output holds. */
export interface HeldExport extends ExportRecord {
  records: number;
}

/** The side file's contents: the record, and what the output it describes looked like. */
interface SideRecord extends HeldExport {
  bytes: number;
}

export function exportRecord(operation: string, params: readonly Record<string, string>[], format: FileFormat): ExportRecord {
  const names = params.map((set) => walkName(set)).sort();
  const digest = createHash('sha256').update(names.join('\n')).digest('hex');
  return { version: 1, operation, format, walks: params.length, digest, params: params.slice(0, LISTED).map((set) => ({ ...set })) };
}

/** Whether `held` was made by the export `asked` describes (its walks in any order). */
export function sameExport(held: ExportRecord, asked: ExportRecord): boolean {
  return held.operation === asked.operation && held.format === asked.format && held.walks === asked.walks && held.digest === asked.digest;
}

/** The export in words, as the CLI takes it: `forum/subforum subforum=node-n300`, or its first sets and how many. */
export function describeExport(record: Pick<ExportRecord, 'operation' | 'walks' | 'params'>): string {
  const sets = record.params.map((set) => Object.entries(set).map(([name, value]) => `${name}=${value}`).join(' '));
  if (record.walks === 1) return `${record.operation} ${sets[0]}`.trimEnd();
  return `${record.operation} with ${record.walks} parameter sets (${sets.slice(0, 3).join('; ')}${record.walks > 3 ? '; …' : ''})`;
}

/** The record a finished Parquet output carries in its footer. */
export function parquetMetadata(record: ExportRecord): Record<string, string> {
  return { [EXPORT_METADATA_KEY]: JSON.stringify(record) };
}

/** Writes the side file describing `output` (NDJSON, CSV), just written whole with `records` records. */
export async function writeSideRecord(path: string, record: ExportRecord, output: string, records: number): Promise<void> {
  const bytes = await fileSize(output);
  if (bytes === undefined) return;
  await writeJsonAtomic(path, { ...record, records, bytes } satisfies SideRecord);
}

/**
 * The record of the export that made `output`, or undefined when it has none that can be trusted: a
 * file written before records were kept, by something else, or changed since its side file was written.
 */
export async function readExportRecord(output: string, format: FileFormat, sidePath: string): Promise<HeldExport | undefined> {
  if (format === 'parquet') return parquetRecord(output);
  // A side file cut short, edited into something else or planted as a link vouches for nothing.
  const side = await readJsonFile(sidePath, '').catch((error: unknown) => {
    if (error instanceof StateDamagedError) return undefined;
    throw error;
  });
  if (!isSideRecord(side) || side.format !== format || side.bytes !== (await fileSize(output))) return undefined;
  const { bytes: _, ...held } = side;
  return held;
}

async function parquetRecord(output: string): Promise<HeldExport | undefined> {
  let metadata;
  try {
    metadata = await parquetMetadataAsync(await asyncBufferFromFile(output));
  } catch {
    // Not a Parquet file at all: it records nothing.
    return undefined;
  }
  const entry = metadata.key_value_metadata?.find(({ key }) => key === EXPORT_METADATA_KEY);
  if (entry?.value === undefined) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(entry.value);
  } catch {
    return undefined;
  }
  return isRecord(record) && record.format === 'parquet' ? { ...record, records: Number(metadata.num_rows) } : undefined;
}

function isRecord(value: unknown): value is ExportRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<ExportRecord>;
  return (
    record.version === 1 &&
    typeof record.operation === 'string' &&
    typeof record.format === 'string' &&
    Number.isSafeInteger(record.walks) &&
    typeof record.digest === 'string' &&
    Array.isArray(record.params) &&
    record.params.every((set) => typeof set === 'object' && set !== null && Object.values(set).every((v) => typeof v === 'string'))
  );
}

function isSideRecord(value: unknown): value is SideRecord {
  const side = value as Partial<SideRecord>;
  return isRecord(value) && Number.isSafeInteger(side.records) && Number.isSafeInteger(side.bytes);
}
