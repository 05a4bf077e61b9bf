/**
 * CSV (RFC 4180) through fast-csv: a header row, CRLF line ends, and a field quoted when it holds a
 * comma, a quote, CR or LF. Nested values flatten per `rows.ts`; numbers and booleans are written as
 * JSON writes them, arrays and deep objects as JSON text, NULL as an empty field. CSV has one empty
 * field for both NULL and the empty string, so a reader cannot tell them apart.
 */
import { format, type CsvFormatterStream } from 'fast-csv';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import type { AnyIterable } from '../src/operators/types.ts';
import type { Destination } from './atomic.ts';
import { checkRowOptions, type Cell, type RowOptions } from './rows.ts';
import { checkPath, checkSource, runSink, type RecordWriter, type SinkResult } from './run.ts';
import { tableWriter } from './table.ts';

export const CSV_EXTENSIONS = ['.csv'] as const;

export interface CsvOptions extends RowOptions {
  /**
   * Prefix `'` to a text field that starts with `=`, `+`, `-`, `@`, tab or CR, so a spreadsheet shows
   * it instead of evaluating it. This alters those values, so it is off by default.
   */
  escapeFormulae?: boolean;
}

const FORMULA_START = /^[=+\-@\t\r]/;

export function toCsv(
  source: AnyIterable<unknown>,
  path: string,
  options: CsvOptions = {},
): Promise<SinkResult> {
  checkSource(source);
  checkPath(path, CSV_EXTENSIONS);
  checkRowOptions(options);
  if (options.escapeFormulae !== undefined && typeof options.escapeFormulae !== 'boolean') {
    throw new TypeError(`escapeFormulae must be a boolean, got ${String(options.escapeFormulae)}`);
  }
  return runSink(source, path, (destination) => csvWriter(destination, options));
}

export function csvWriter(destination: Destination, options: CsvOptions): RecordWriter {
  const escapeFormulae = options.escapeFormulae ?? false;
  let csv: CsvFormatterStream<string[], string[]> | undefined;
  let piped: Promise<void> | undefined;

  const toText = (cell: Cell): string => {
    if (cell === null) return '';
    const text = String(cell);
    return escapeFormulae && typeof cell === 'string' && FORMULA_START.test(text) ? `'${text}` : text;
  };

  return tableWriter(
    {
      async begin(layout) {
        csv = format<string[], string[]>({ headers: layout.names, rowDelimiter: '\r\n', includeEndRowDelimiter: true, alwaysWriteHeaders: true });
        piped = pipeline(csv, destination.stream, { end: false });
        piped.catch(() => undefined);
      },
      writeRow(row) {
        return csv!.write(row.map(toText)) ? undefined : once(csv!, 'drain').then(() => undefined);
      },
      async end() {
        csv!.end();
        await piped;
      },
    },
    options,
    false,
  );
}
