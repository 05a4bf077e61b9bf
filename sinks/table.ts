/**
 * The sampling step CSV and Parquet share: buffer the first `sampleSize` records, plan the columns
 * from them, then stream every row. Only the sample is ever held; with explicit untyped `columns`
 * nothing is.
 */
import { checkJsonRecord, DEFAULT_SAMPLE_SIZE, RowLayout, type PartRowOptions, type PlainObject, type RowCell } from './rows.ts';
import type { RecordWriter } from './run.ts';
import { Repairs, wellFormed } from './strings.ts';

/** A table format: told its columns once, then fed rows in order. */
export interface TableFormat {
  /** `names`: the layout's column names as the file must hold them (well-formed: `strings.ts`). */
  begin(layout: RowLayout, names: string[]): Promise<void>;
  /** Takes one row; a promise only when it had to wait (see `RecordWriter.write`). */
  writeRow(row: RowCell[]): Promise<void> | undefined;
  /** Told what each record sent to `_extra`, if it asks (Parquet's fix-up: `parquet-widening.ts`). */
  readonly spilled?: (values: PlainObject) => void;
  end(): Promise<void>;
}

/** A format that plans from the sample itself (Parquet's nested layout), then takes records. */
export interface SampledFormat {
  /** Plans from the sample (every record the source gave, if fewer); returns how each record is then written. */
  begin(sample: readonly unknown[], repairs: Repairs): Promise<(record: unknown) => Promise<void> | undefined>;
  end(): Promise<void>;
}

/** The flat layout: one cell per dotted column (`rows.ts`). */
export function tableWriter(format: TableFormat, options: PartRowOptions, typed: boolean): RecordWriter {
  const sampleSize = options.columns && !typed ? 0 : (options.sampleSize ?? DEFAULT_SAMPLE_SIZE);
  return sampledWriter(
    {
      async begin(sample, repairs) {
        const layout = RowLayout.plan(sample, options, typed);
        // A key with a lone surrogate names its column once, in the header: repaired (and counted) there.
        await format.begin(layout, layout.names.map((name) => wellFormed(name, repairs)));
        return (record) => format.writeRow(layout.toRow(record, repairs, format.spilled));
      },
      end: () => format.end(),
    },
    sampleSize,
  );
}

/** Buffers the first `sampleSize` records, has `format` plan from them, then writes every record. */
export function sampledWriter(format: SampledFormat, sampleSize: number): RecordWriter {
  let sample: unknown[] = [];
  let writeRecord: ((record: unknown) => Promise<void> | undefined) | undefined;
  const repairs = new Repairs();

  const start = async (): Promise<void> => {
    const write = await format.begin(sample, repairs);
    writeRecord = write;
    const buffered = sample;
    sample = [];
    for (const record of buffered) await write(record);
  };

  return {
    get repaired() {
      return repairs.count;
    },
    write(record) {
      if (writeRecord !== undefined) return writeRecord(record);
      checkJsonRecord(record);
      sample.push(record);
      return sample.length >= sampleSize ? start() : undefined;
    },
    async close() {
      if (writeRecord === undefined) await start();
      await format.end();
    },
  };
}
