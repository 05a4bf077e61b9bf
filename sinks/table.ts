/**
 * The sampling step CSV and Parquet share: buffer the first `sampleSize` records, plan the columns
 * from them, then stream every row. Only the sample is ever held; with explicit untyped `columns`
 * nothing is.
 */
import { checkJsonRecord, DEFAULT_SAMPLE_SIZE, RowLayout, type PartRowOptions, type RowCell } from './rows.ts';
import { isPlainObject, type PlainObject } from './values.ts';
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
      sample.push(sampleCopy(record));
      return sample.length >= sampleSize ? start() : undefined;
    },
    async close() {
      if (writeRecord === undefined) await start();
      await format.end();
    },
  };
}

/**
 * A copy of a record for the sample to hold (`detached` says why not the record itself). A record of
 * plain JSON values (what `fromNdjson` gives, and most callers build) is copied through JSON text:
 * writing the sample's rows from such copies, then every later record, took 3–8% less time than from
 * copies built key by key on the posts of `bench/sinks.ts` and about 2% less on its videos, in both
 * layouts (interleaved pairs of runs; the objects `JSON.parse` makes are laid out otherwise than those
 * built key by key, and the code that writes every row first meets the sample's). A record holding
 * any value JSON text would not give back as it is (a bigint, NaN, -0, a `Date` or another object
 * with `toJSON`, a class's instance, a hole in an array) is copied key by key.
 */
function sampleCopy(record: unknown): unknown {
  return isPlainJson(record) ? JSON.parse(JSON.stringify(record)) : detached(record);
}

/** Whether `JSON.parse(JSON.stringify(value))` is `value` again, value for value (a record already checked not too deep). */
function isPlainJson(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      // NaN and the infinities would come back null, -0 as 0; every other number as itself.
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isPlainJson(value[i])) return false;
    return true;
  }
  if (!isPlainObject(value) || typeof value.toJSON === 'function') return false;
  for (const key in value) if (!isPlainJson(value[key])) return false;
  return true;
}

/**
 * A copy of a record's plain objects and arrays, for the sample to hold; every other value (a
 * `Date`, a class's instance, a string) is the record's own.
 *
 * Why not hold the caller's records: V8 decides, per place in the caller's code that makes an object
 * (`{…}`, `[…]`), whether the objects made there live long, by how many of them a young-generation
 * collection finds alive. One that ran while the sample held the caller's first records told it they
 * do, and from then on every record the caller made went straight to the old generation, to die
 * there. Writing 1,000,000 generated posts to Parquet (`bench/sinks.ts`), that happened in 6 runs of
 * 9: the collector then freed about 1.1 GB of old generation in 15 full collections, against
 * 40–70 MB in 2–7 with the sample copied (9 runs of 9). The copies are made here, where no record of
 * the caller's is made.
 */
function detached(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(detached);
  if (!isPlainObject(value)) return value;
  const copy: PlainObject = Object.getPrototypeOf(value) === null ? (Object.create(null) as PlainObject) : {};
  for (const key of Object.keys(value)) {
    // A key `__proto__` (JSON.parse makes one) must stay a key, not set the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: detached(value[key]), enumerable: true, writable: true, configurable: true });
    else copy[key] = detached(value[key]);
  }
  return copy;
}
