/**
 * Columnar row groups for a flat, all-optional Parquet schema, handed to parquetjs-lite's envelope
 * writer (which writes the header, row groups, footer and metadata).
 *
 * Why not `ParquetWriter.appendRow`: its general Dremel shredding allocates per field per row and
 * measured about 10,000 rows/s on sandbox-shaped records, under a tenth of DuckDB's conversion. Our
 * rows are flat (no repetition, definition level 0 or 1), so each column is just a list of values
 * plus a null bitmap, encoded here as one PLAIN data page (v1) per column per row group.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import parquetUtil from 'parquetjs-lite/lib/util.js';
import parquetCompression from 'parquetjs-lite/lib/compression.js';
import type { EncodedRowGroup } from 'parquetjs-lite';
import type { Cell } from './rows.ts';

/** The physical types the sinks use. */
export type PhysicalType = 'INT64' | 'DOUBLE' | 'BOOLEAN' | 'BYTE_ARRAY';

export interface ColumnSpec {
  /** The column's name in the schema. */
  readonly name: string;
  readonly physical: PhysicalType;
  /** Parquet compression name: `SNAPPY`, `GZIP`, `UNCOMPRESSED`. */
  readonly compression: string;
}

/** One row group's worth of one column: the non-null values and which rows have one. */
class ColumnBuffer {
  values: Cell[] = [];
  defined: Uint8Array;
  constructor(capacity: number) {
    this.defined = new Uint8Array(capacity);
  }
}

export class RowGroupBuffer {
  rows = 0;
  private buffers: ColumnBuffer[];

  constructor(
    private readonly specs: readonly ColumnSpec[],
    readonly capacity: number,
  ) {
    this.buffers = this.emptyBuffers();
  }

  private emptyBuffers(): ColumnBuffer[] {
    return this.specs.map(() => new ColumnBuffer(this.capacity));
  }

  get full(): boolean {
    return this.rows >= this.capacity;
  }

  add(row: readonly Cell[]): void {
    for (let i = 0; i < this.buffers.length; i++) {
      const cell = row[i];
      if (cell !== null) {
        this.buffers[i].values.push(cell);
        this.buffers[i].defined[this.rows] = 1;
      }
    }
    this.rows++;
  }

  /** The buffered rows in the shape `ParquetEnvelopeWriter.writeRowGroup` takes; the buffer is then empty again. */
  take(): EncodedRowGroup {
    const pages: EncodedRowGroup['pages'] = {};
    this.specs.forEach((spec, i) => {
      const buffer = this.buffers[i];
      pages[spec.name] = [
        {
          page: encodeDataPage(spec, buffer.values, buffer.defined.subarray(0, this.rows)),
          first_row_index: 0,
          num_values: this.rows,
          distinct_values: new Set(),
        },
      ];
    });
    const group = { rowCount: this.rows, pages };
    this.buffers = this.emptyBuffers();
    this.rows = 0;
    return group;
  }
}

function encodeDataPage(spec: ColumnSpec, values: Cell[], defined: Uint8Array): Buffer {
  const body = Buffer.concat([encodeDefinitionLevels(defined), encodePlain(spec.physical, values)]);
  const compressed: Buffer = parquetCompression.deflate(spec.compression, body);
  const header = new parquetTypes.PageHeader({
    type: parquetTypes.PageType.DATA_PAGE,
    uncompressed_page_size: body.length,
    compressed_page_size: compressed.length,
    data_page_header: new parquetTypes.DataPageHeader({
      num_values: defined.length,
      encoding: parquetTypes.Encoding.PLAIN,
      definition_level_encoding: parquetTypes.Encoding.RLE,
      repetition_level_encoding: parquetTypes.Encoding.RLE,
    }),
  });
  return Buffer.concat([parquetUtil.serializeThrift(header), compressed]);
}

/**
 * Definition levels (bit width 1) in the RLE/bit-packed hybrid, behind the 4-byte length a v1 page
 * wants: one repeated run when every row agrees, else one bit-packed run.
 */
function encodeDefinitionLevels(defined: Uint8Array): Buffer {
  const n = defined.length;
  let run: Buffer;
  if (n > 0 && defined.every((level) => level === defined[0])) {
    run = Buffer.concat([varint(n << 1), Buffer.from([defined[0]])]);
  } else {
    const groups = Math.ceil(n / 8);
    const bits = Buffer.alloc(groups);
    for (let i = 0; i < n; i++) if (defined[i]) bits[i >> 3] |= 1 << (i & 7);
    run = Buffer.concat([varint((groups << 1) | 1), bits]);
  }
  const length = Buffer.alloc(4);
  length.writeUInt32LE(run.length);
  return Buffer.concat([length, run]);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

const TWO_32 = 4294967296;

function encodePlain(physical: PhysicalType, values: Cell[]): Buffer {
  switch (physical) {
    case 'INT64': {
      const buf = Buffer.alloc(values.length * 8);
      for (let i = 0; i < values.length; i++) {
        // Safe integers only (rows.ts guarantees it): split into two 32-bit words without BigInt.
        const v = values[i] as number;
        const high = Math.floor(v / TWO_32);
        buf.writeUInt32LE(v - high * TWO_32, i * 8);
        buf.writeInt32LE(high, i * 8 + 4);
      }
      return buf;
    }
    case 'DOUBLE': {
      const buf = Buffer.alloc(values.length * 8);
      for (let i = 0; i < values.length; i++) buf.writeDoubleLE(values[i] as number, i * 8);
      return buf;
    }
    case 'BOOLEAN': {
      const buf = Buffer.alloc(Math.ceil(values.length / 8));
      for (let i = 0; i < values.length; i++) if (values[i]) buf[i >> 3] |= 1 << (i & 7);
      return buf;
    }
    case 'BYTE_ARRAY': {
      let size = 0;
      for (const value of values) size += 4 + Buffer.byteLength(value as string);
      const buf = Buffer.allocUnsafe(size);
      let offset = 0;
      for (const value of values) {
        const length = buf.write(value as string, offset + 4);
        buf.writeUInt32LE(length, offset);
        offset += 4 + length;
      }
      return buf;
    }
  }
}
