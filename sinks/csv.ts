/**
 * CSV (RFC 4180): a header row, CRLF line ends, and a field quoted when it holds a comma, a quote,
 * CR, LF or NUL. Nested values flatten per `rows.ts`; numbers and booleans are written as JSON writes
 * them, arrays and deep objects as JSON text, NULL as an empty field. CSV has one empty field for both
 * NULL and the empty string, so a reader cannot tell them apart.
 *
 * Fields are formatted here rather than by fast-csv's formatter, which deletes every NUL from a field
 * (`a\u0000b` became `ab`, without a word). A NUL is kept inside a quoted field, where python's csv
 * module and DuckDB read it back; and joining rows into ~64 KiB chunks, as the NDJSON sink does, costs
 * less than a stream transform per row.
 */
import type { AnyIterable } from '../src/operators/types.ts';
import type { Destination } from './atomic.ts';
import { checkRowOptions, ROW_OPTIONS, type PartRowOptions, type RowOptions } from './rows.ts';
import type { Cell } from './values.ts';
import { refuseUnknownOptions, type KnownOptions } from '../src/known-options.ts';
import { checkPath, checkSource, runSink, type RecordWriter, type SinkResult } from './run.ts';
import { tableWriter } from './table.ts';

export const CSV_EXTENSIONS = ['.csv'] as const;

/** Options of `toCsv`. */
export interface CsvOptions extends RowOptions {
  /**
   * Prefix `'` to a text field that starts with `=`, `+`, `-`, `@`, tab or CR, so a spreadsheet shows
   * it instead of evaluating it. This alters those values, so it is off by default.
   */
  escapeFormulae?: boolean;
}

const FORMULA_START = /^[=+\-@\t\r]/;
/** What makes a field quoted: the delimiter, the quote, a line break, or NUL (kept, not dropped). */
const NEEDS_QUOTES = /[",\r\n\0]/;
/** Rows are joined into one string per write: a syscall-sized chunk instead of a write per row. */
const CHUNK_CHARS = 64 * 1024;

/** One RFC 4180 field: quoted, its quotes doubled, when it holds a character that needs it. */
function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The names of `CsvOptions`: `toCsv` refuses any other. */
export const CSV_OPTIONS = { ...ROW_OPTIONS, escapeFormulae: true } as const satisfies KnownOptions<CsvOptions>;

/**
 * Writes every record of `source` to a CSV file at `path` (RFC 4180, a header row): nested objects
 * as dotted columns, arrays and deeper values as JSON text. Streams with backpressure and writes to a
 * temporary name, renamed when whole; resolves with what it wrote.
 */
export function toCsv(
  source: AnyIterable<unknown>,
  path: string,
  options: CsvOptions = {},
): Promise<SinkResult> {
  checkSource(source);
  checkPath(path, CSV_EXTENSIONS);
  refuseUnknownOptions(options, CSV_OPTIONS, 'toCsv');
  checkRowOptions(options);
  if (options.escapeFormulae !== undefined && typeof options.escapeFormulae !== 'boolean') {
    throw new TypeError(`escapeFormulae must be a boolean, got ${String(options.escapeFormulae)}`);
  }
  return runSink(source, path, (destination) => csvWriter(destination, options));
}

export function csvWriter(destination: Destination, options: CsvOptions & PartRowOptions): RecordWriter {
  const escapeFormulae = options.escapeFormulae ?? false;
  let pending = '';

  const toField = (cell: Cell): string => {
    if (cell === null) return '';
    if (typeof cell !== 'string') return String(cell);
    return csvField(escapeFormulae && FORMULA_START.test(cell) ? `'${cell}` : cell);
  };
  const line = (fields: string[]): Promise<void> | undefined => {
    pending += fields.join(',') + '\r\n';
    if (pending.length < CHUNK_CHARS) return undefined;
    const chunk = pending;
    pending = '';
    return destination.write(chunk);
  };

  return tableWriter(
    {
      async begin(_layout, names) {
        await line(names.map(csvField));
      },
      writeRow(row) {
        // An untyped layout plans no MAP column (`RowLayout.plan`): every cell is a `Cell`.
        return line((row as Cell[]).map(toField));
      },
      async end() {
        if (pending !== '') await destination.write(pending);
        pending = '';
      },
    },
    options,
    false,
  );
}
