/**
 * The sampling step CSV and Parquet share: buffer the first `sampleSize` records, plan the columns
 * from them, then stream every row. Only the sample is ever held; with explicit untyped `columns`
 * nothing is.
 */
import { checkJsonRecord, DEFAULT_SAMPLE_SIZE, RowLayout, type Cell, type RowOptions } from './rows.ts';
import type { RecordWriter } from './run.ts';

/** A table format: told its columns once, then fed rows in order. */
export interface TableFormat {
  begin(layout: RowLayout): Promise<void>;
  /** Takes one row; a promise only when it had to wait (see `RecordWriter.write`). */
  writeRow(row: Cell[]): Promise<void> | undefined;
  end(): Promise<void>;
}

export function tableWriter(format: TableFormat, options: RowOptions, typed: boolean): RecordWriter {
  const sampleSize = options.columns && !typed ? 0 : (options.sampleSize ?? DEFAULT_SAMPLE_SIZE);
  let sample: unknown[] = [];
  let layout: RowLayout | undefined;

  const start = async (): Promise<void> => {
    const planned = RowLayout.plan(sample, options, typed);
    layout = planned;
    await format.begin(planned);
    const buffered = sample;
    sample = [];
    for (const record of buffered) await format.writeRow(planned.toRow(record));
  };

  return {
    write(record) {
      if (layout !== undefined) return format.writeRow(layout.toRow(record));
      checkJsonRecord(record);
      sample.push(record);
      return sample.length >= sampleSize ? start() : undefined;
    },
    async close() {
      if (layout === undefined) await start();
      await format.end();
    },
  };
}
