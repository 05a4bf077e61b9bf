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

const TWO_32 = 4294967296;

/**
 * One row group's worth of one column: its non-null values already PLAIN-encoded, and which rows
 * have one. Encoding as the values arrive keeps no JS string or number alive until the group is
 * flushed, so a 10,000-row group is a few buffers for the garbage collector, not 10,000 × columns
 * objects to carry into the old generation.
 */
class ColumnBuffer {
  private bytes: Buffer;
  private length = 0;
  /** Non-null values so far (BOOLEAN values are bit-packed in that order). */
  private count = 0;
  readonly defined: Uint8Array;

  constructor(
    private readonly physical: PhysicalType,
    capacity: number,
  ) {
    this.defined = new Uint8Array(capacity);
    this.bytes = Buffer.allocUnsafe(physical === 'BOOLEAN' ? Math.ceil(capacity / 8) : 64 * 1024);
    if (physical === 'BOOLEAN') this.bytes.fill(0);
  }

  push(row: number, cell: Exclude<Cell, null>): void {
    this.defined[row] = 1;
    switch (this.physical) {
      case 'INT64': {
        // Safe integers only (rows.ts guarantees it): split into two 32-bit words without BigInt.
        const v = cell as number;
        const high = Math.floor(v / TWO_32);
        this.reserve(8);
        this.bytes.writeUInt32LE(v - high * TWO_32, this.length);
        this.bytes.writeInt32LE(high, this.length + 4);
        this.length += 8;
        break;
      }
      case 'DOUBLE':
        this.reserve(8);
        this.bytes.writeDoubleLE(cell as number, this.length);
        this.length += 8;
        break;
      case 'BOOLEAN':
        if (cell) this.bytes[this.count >> 3] |= 1 << (this.count & 7);
        this.length = (this.count >> 3) + 1;
        break;
      case 'BYTE_ARRAY': {
        const text = cell as string;
        // UTF-8 takes at most 3 bytes per UTF-16 unit.
        this.reserve(4 + text.length * 3);
        const written = this.bytes.write(text, this.length + 4);
        this.bytes.writeUInt32LE(written, this.length);
        this.length += 4 + written;
        break;
      }
    }
    this.count++;
  }

  /** The PLAIN-encoded values. */
  plain(): Buffer {
    return this.bytes.subarray(0, this.length);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + extra));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
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
    return this.specs.map((spec) => new ColumnBuffer(spec.physical, this.capacity));
  }

  get full(): boolean {
    return this.rows >= this.capacity;
  }

  add(row: readonly Cell[]): void {
    for (let i = 0; i < this.buffers.length; i++) {
      const cell = row[i];
      if (cell !== null) this.buffers[i].push(this.rows, cell);
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
          page: encodeDataPage(spec, buffer.plain(), buffer.defined.subarray(0, this.rows)),
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

function encodeDataPage(spec: ColumnSpec, plain: Buffer, defined: Uint8Array): Buffer {
  const body = Buffer.concat([encodeDefinitionLevels(defined), plain]);
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
