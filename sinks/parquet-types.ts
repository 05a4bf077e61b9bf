/**
 * What the Parquet writer's parts hand one another: a column's spec, and a row group's cells as
 * the writer's thread gathers them (`parquet-cells.ts`) and the encoder lays them out
 * (`parquet-columns.ts`, maybe in the encoder's worker: `parquet-encoder.ts`). Plain data only,
 * so both sides can hold it and a worker can be posted it; no module here imports another sink's.
 */

/** The physical types the sinks use. */
export type PhysicalType = 'INT64' | 'DOUBLE' | 'BOOLEAN' | 'BYTE_ARRAY';

export interface ColumnSpec {
  /** The column's path in the schema: one name in the flat layout, the fields down to the leaf in the nested one. */
  readonly path: readonly string[];
  readonly physical: PhysicalType;
  /** The definition level of an entry that has a value (1 in the flat layout). */
  readonly maxDefinition: number;
  /** The greatest repetition level: how many lists the column lies inside (0 in the flat layout). */
  readonly maxRepetition: number;
  /** An INT64 column whose cells are kept as bigints (`RowGroupCells`), so integers past 2^53 stay exact. */
  readonly exact?: boolean;
  /** Parquet compression name: `SNAPPY`, `GZIP`, `UNCOMPRESSED`. */
  readonly compression: string;
}

/**
 * Per column of a file, whether an earlier row group found its dictionary did not pay: that column
 * starts PLAIN in the next group instead of trying again.
 */
export type PlainColumns = boolean[];

/**
 * One column of a row group's cells. A column holds one entry per row in the flat layout; in the
 * nested layout a list column holds one per element (an empty or NULL list, one), as Parquet's
 * repetition and definition levels count them. Its arrays may lie on SharedArrayBuffers, so the
 * encoder's worker reads them where the writer wrote them.
 */
export interface CellColumn {
  /** How many entries (levels) the column holds. */
  entries: number;
  /** Each entry's definition level: the column's greatest where it has a value, less where it (or a parent) is NULL. */
  defined: Uint8Array;
  /** Each entry's repetition level (columns inside a list only). */
  repeated?: Uint8Array;
  /** INT64, DOUBLE and BOOLEAN (1 or 0) columns: each entry's value. */
  numbers?: Float64Array;
  /** Exact INT64 columns (`ColumnSpec.exact`): each entry's value, past 2^53 too. */
  integers?: BigInt64Array;
  /** The same memory as `integers`, as 32-bit words: a safe integer is stored in two halves, without making a `bigint`. */
  integerWords?: Int32Array;
  /** BYTE_ARRAY columns: each value's length in UTF-8 bytes, one per entry that has a value, in order… */
  lengths?: Uint32Array;
  /** …the values' UTF-8 bytes, one after another… */
  text?: Uint8Array;
  /** …how many bytes of `text` they take… */
  textBytes?: number;
  /** …and whether every one is ASCII (then signed and unsigned byte order agree: `parquet-statistics.ts`). */
  ascii?: boolean;
}

/** One row group's cells, by column. */
export interface CellColumns {
  rows: number;
  columns: CellColumn[];
}

/** What a column holds: its physical type, whether it lies inside a list (so it needs repetition levels), whether it is exact. */
export interface CellColumnType {
  physical: PhysicalType;
  repeated: boolean;
  /** An exact INT64 column (`ColumnSpec.exact`): its values are kept as bigints. */
  exact?: boolean;
}
