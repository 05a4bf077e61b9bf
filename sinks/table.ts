/**
 * The sampling step CSV and Parquet share: buffer the first `sampleSize` records, plan the columns
 * from them, then stream every row. Only the sample is ever held; with explicit untyped `columns`
 * nothing is.
 */
import { checkJsonRecord, DEFAULT_SAMPLE_SIZE, RowLayout, type Cell, type RowOptions } from './rows.ts';
import type { RecordWriter } from './run.ts';
import { Repairs, wellFormed } from './strings.ts';

/** A table format: told its columns once, then fed rows in order. */
export interface TableFormat {
  /** `names`: the layout's column names as the file must hold them (well-formed: `strings.ts`). */
  begin(layout: RowLayout, names: string[]): Promise<void>;
  /** Takes one row; a promise only when it had to wait (see `RecordWriter.write`). */
  writeRow(row: Cell[]): Promise<void> | undefined;
  end(): Promise<void>;
}

export function tableWriter(format: TableFormat, options: RowOptions, typed: boolean): RecordWriter {
  const sampleSize = options.columns && !typed ? 0 : (options.sampleSize ?? DEFAULT_SAMPLE_SIZE);
  let sample: unknown[] = [];
  let layout: RowLayout | undefined;
  const repairs = new Repairs();

  const start = async (): Promise<void> => {
    const planned = RowLayout.plan(sample, options, typed);
    layout = planned;
    // A key with a lone surrogate names its column once, in the header: repaired (and counted) there.
    await format.begin(planned, planned.names.map((name) => wellFormed(name, repairs)));
    const buffered = sample;
    sample = [];
    for (const record of buffered) await format.writeRow(planned.toRow(record, repairs));
  };

  return {
    get repaired() {
      return repairs.count;
    },
    write(record) {
      if (layout !== undefined) return format.writeRow(layout.toRow(record, repairs));
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
