/**
 * Turning the spool into the file the user asked for. NDJSON is the spool itself (renamed, or copied
 * while a later `--resume` still needs the spool); CSV and Parquet are written from it by the sinks,
 * which write to a temporary name and rename, so the output path only ever holds a whole file.
 */
import { constants, copyFile, rename, rm, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { fromNdjson, toCsv, toParquet } from '../../sinks/index.ts';
import { UsageError } from './args.ts';
import { temporaryName } from '../../sinks/durable.ts';

export type OutputFormat = 'ndjson' | 'csv' | 'parquet';

export function formatOf(path: string): OutputFormat {
  switch (extname(path).toLowerCase()) {
    case '.ndjson':
    case '.jsonl':
      return 'ndjson';
    case '.csv':
      return 'csv';
    case '.parquet':
      return 'parquet';
    default:
      throw new UsageError(`--out ${path}: the file name must end in .ndjson, .jsonl, .csv or .parquet`);
  }
}

/**
 * Writes `out` from the spool, replacing whatever `out` was (a link included: it is replaced, never
 * written through). NDJSON without `keepSpool` takes the spool's place; otherwise the spool stays,
 * for `--resume` or for the caller to drop once the checkpoint is gone. Returns the output's size.
 * `escapeFormulae` is the CSV sink's option (`--csv-escape-formulae`).
 */
export async function publishOutput(
  spoolPath: string,
  out: string,
  format: OutputFormat,
  options: { keepSpool: boolean; escapeFormulae?: boolean },
): Promise<{ bytes: number }> {
  if (format === 'ndjson') {
    if (options.keepSpool) {
      const temporary = temporaryName(out);
      try {
        await copyFile(spoolPath, temporary, constants.COPYFILE_EXCL);
        await rename(temporary, out);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    } else {
      await rename(spoolPath, out);
    }
    return { bytes: (await stat(out)).size };
  }
  const records = fromNdjson(spoolPath);
  const result = format === 'csv' ? await toCsv(records, out, { escapeFormulae: options.escapeFormulae }) : await toParquet(records, out);
  return { bytes: result.bytes };
}
