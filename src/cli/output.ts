/**
 * Turning the spool into the file the user asked for. NDJSON is the spool itself (renamed, or copied
 * while a later `--resume` still needs the spool); CSV and Parquet are written from it by the sinks,
 * which write to a temporary name and rename, so the output path only ever holds a whole file.
 */
import { copyFile, rename, rm, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { fromNdjson, toCsv, toParquet } from '../../sinks/index.ts';
import { UsageError } from './args.ts';

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
 * Writes `out` from the spool; with `keepSpool`, leaves the spool in place for `--resume`. Returns the
 * output's size. `escapeFormulae` is the CSV sink's option (`--csv-escape-formulae`).
 */
export async function publishOutput(
  spoolPath: string,
  out: string,
  format: OutputFormat,
  options: { keepSpool: boolean; escapeFormulae?: boolean },
): Promise<{ bytes: number }> {
  if (format === 'ndjson') {
    if (options.keepSpool) {
      await copyFile(spoolPath, `${out}.tmp`);
      await rename(`${out}.tmp`, out);
    } else {
      await rename(spoolPath, out);
    }
    return { bytes: (await stat(out)).size };
  }
  const records = fromNdjson(spoolPath);
  const result = format === 'csv' ? await toCsv(records, out, { escapeFormulae: options.escapeFormulae }) : await toParquet(records, out);
  if (!options.keepSpool) await rm(spoolPath, { force: true });
  return { bytes: result.bytes };
}
