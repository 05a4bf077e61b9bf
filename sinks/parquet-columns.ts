/**
 * Columnar row groups for a flat, all-optional Parquet schema, encoded into column chunks with
 * statistics, using parquetjs-lite's thrift structures; pages are compressed by `parquet-compression.ts`.
 *
 * Why not `ParquetWriter.appendRow`: its general Dremel shredding allocates per field per row and
 * measured about 10,000 rows/s on sandbox-shaped records, under a tenth of DuckDB's conversion. Our
 * rows are flat (no repetition, definition level 0 or 1), so each column is just a list of values
 * plus a null bitmap. A chunk is a dictionary page (when the column is dictionary-encoded) and one
 * data page (v1); a PLAIN integer chunk whose values lie within ±2^51 is DELTA_BINARY_PACKED.
 *
 * Dictionaries: INT64, DOUBLE and BYTE_ARRAY columns start dictionary-encoded; every 1,024 values
 * (and at the end of a row group) the dictionary plus its indices are compared with what PLAIN
 * would take, and a column whose dictionary does not pay, or outgrows `MAX_DICTIONARY_BYTES`, turns
 * PLAIN for the rest of the file (its row group so far is re-encoded from the dictionary). So ids,
 * URLs and free text cost a thousand lookups, not a dictionary the size of the column.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import type { CompressPage } from './parquet-compression.ts';
import { bitWidth, Bytes, MAX_DELTA_VALUE, writeDeltaBinaryPacked, writeHybrid } from './parquet-encoding.ts';
import { BooleanStatistics, NumberStatistics, StringStatistics, type Statistics } from './parquet-statistics.ts';
import { serializeThrift } from './parquet-thrift.ts';
import type { Cell } from './rows.ts';

/** The physical types the sinks use. */
export type PhysicalType = 'INT64' | 'DOUBLE' | 'BOOLEAN' | 'BYTE_ARRAY';

export interface ColumnSpec {
  /** The column's name in the schema. */
  readonly name: string;
  readonly physical: PhysicalType;
  /** Parquet compression name: `SNAPPY`, `GZIP`, `UNCOMPRESSED`. */
  readonly compression: string;
  /** Whether a PLAIN integer chunk may be DELTA_BINARY_PACKED (not where parquetjs-lite reads the file back). */
  readonly delta: boolean;
}

/** The largest dictionary page kept (parquet-mr's default): past it a column turns PLAIN. */
const MAX_DICTIONARY_BYTES = 1024 * 1024;
/** How often (in values) a dictionary is weighed against PLAIN. */
const DICTIONARY_CHECK_EVERY = 1024;

const { Encoding, PageType } = parquetTypes;

/** A row group's bytes, in file order, and its thrift `RowGroup` for the footer. */
export interface EncodedRowGroup {
  chunks: Buffer[];
  metadata: unknown;
}

/**
 * One column's values for the row group being filled: a null bitmap, and the non-null values either
 * as dictionary indices or already PLAIN-encoded. Encoding as the values arrive keeps no JS string
 * alive until the group is flushed (a dictionary keeps one per distinct value, at most
 * `MAX_DICTIONARY_BYTES` of them), so a 10,000-row group is a few buffers for the garbage collector.
 */
class ColumnBuffer {
  private defined: Uint8Array;
  private plain: Bytes;
  /** Non-null values so far (BOOLEAN values are bit-packed in that order). */
  private count = 0;
  /** Value (or `'-0'`) → index; undefined once the column is PLAIN. */
  private dictionary: Map<unknown, number> | undefined;
  /** The dictionary page's PLAIN values, and where each BYTE_ARRAY entry starts in it. */
  private entries = new Bytes();
  private entryStarts: number[] = [];
  private indices = new Uint32Array(1024);
  /** Bytes the values so far would take PLAIN-encoded. */
  private plainBytes = 0;
  private readonly statistics: Statistics;

  constructor(
    private readonly spec: ColumnSpec,
    capacity: number,
  ) {
    this.defined = new Uint8Array(capacity);
    this.plain = new Bytes(spec.physical === 'BOOLEAN' ? Math.ceil(capacity / 8) : 64 * 1024);
    if (spec.physical !== 'BOOLEAN') this.dictionary = new Map();
    if (spec.physical === 'BYTE_ARRAY') this.statistics = new StringStatistics();
    else if (spec.physical === 'BOOLEAN') this.statistics = new BooleanStatistics();
    else this.statistics = new NumberStatistics(spec.physical);
    this.reset();
  }

  push(row: number, cell: Exclude<Cell, null>): void {
    this.defined[row] = 1;
    if (this.dictionary === undefined) {
      this.pushPlain(cell);
      this.count++;
      return;
    }
    this.pushIndex(cell);
    this.count++;
    if (this.count % DICTIONARY_CHECK_EVERY === 0 && !this.dictionaryPays()) this.dropDictionary();
  }

  pushNull(): void {
    this.statistics.nulls++;
  }

  private pushPlain(cell: Exclude<Cell, null>): void {
    if (this.spec.physical !== 'BOOLEAN') {
      this.append(this.plain, cell);
      return;
    }
    if (cell) this.plain.buffer[this.count >> 3] |= 1 << (this.count & 7);
    this.plain.length = (this.count >> 3) + 1;
    (this.statistics as BooleanStatistics).observe(cell as boolean);
  }

  /** Appends a number or string PLAIN-encoded to `bytes`, and counts it in the statistics. */
  private append(bytes: Bytes, cell: Exclude<Cell, null>): void {
    switch (this.spec.physical) {
      case 'BYTE_ARRAY': {
        const start = bytes.length + 4;
        bytes.byteArray(cell as string);
        (this.statistics as StringStatistics).observe(cell as string, bytes.buffer, start, bytes.length);
        return;
      }
      case 'INT64':
        bytes.int64(cell as number);
        break;
      default:
        bytes.double(cell as number);
    }
    (this.statistics as NumberStatistics).observe(cell as number);
  }

  private pushIndex(cell: Exclude<Cell, null>): void {
    // A Map takes -0 for 0, but a DOUBLE column must give -0 back.
    const key = cell === 0 && 1 / cell < 0 ? '-0' : cell;
    let index = this.dictionary!.get(key);
    if (index === undefined) {
      index = this.entryStarts.length;
      this.dictionary!.set(key, index);
      this.addEntry(cell);
    }
    if (this.count === this.indices.length) {
      const grown = new Uint32Array(Math.min(this.indices.length * 2, this.defined.length));
      grown.set(this.indices);
      this.indices = grown;
    }
    this.indices[this.count] = index;
    this.plainBytes += this.spec.physical === 'BYTE_ARRAY' ? this.entryEnd(index) - this.entryStarts[index] : 8;
  }

  private addEntry(cell: Exclude<Cell, null>): void {
    this.entryStarts.push(this.entries.length);
    this.append(this.entries, cell);
  }

  private entryEnd(index: number): number {
    return index + 1 < this.entryStarts.length ? this.entryStarts[index + 1] : this.entries.length;
  }

  /** Whether the dictionary page plus bit-packed indices beat PLAIN, and the page is not too big. */
  private dictionaryPays(): boolean {
    const indexBytes = Math.ceil((this.count * bitWidth(this.entryStarts.length - 1)) / 8);
    return this.entries.length <= MAX_DICTIONARY_BYTES && this.entries.length + indexBytes < this.plainBytes;
  }

  /** Turns the column PLAIN for good, re-encoding this row group's values from the dictionary. */
  private dropDictionary(): void {
    this.dictionary = undefined;
    for (let i = 0; i < this.count; i++) {
      const index = this.indices[i];
      this.plain.copy(this.entries.buffer, this.entryStarts[index], this.entryEnd(index));
    }
    this.indices = new Uint32Array(0);
    this.entries = new Bytes(0);
    this.entryStarts = [];
  }

  /** This row group's column chunk, its pages not yet compressed; then the column is empty for the next group. */
  take(rows: number): LaidOutChunk {
    if (this.dictionary !== undefined && this.count > 0 && !this.dictionaryPays()) this.dropDictionary();
    const { physical } = this.spec;
    const body = new Bytes(this.plain.length + rows / 4 + 64);
    encodeDefinitionLevels(body, this.defined, rows);
    const pages: LaidOutPage[] = [];
    let encoding = Encoding.PLAIN;
    if (this.dictionary !== undefined && this.count > 0) {
      encoding = Encoding.PLAIN_DICTIONARY;
      pages.push({
        header: {
          type: PageType.DICTIONARY_PAGE,
          dictionary_page_header: new parquetTypes.DictionaryPageHeader({ num_values: this.entryStarts.length, encoding }),
        },
        // A copy: the entries buffer is refilled by the next row group while this page waits to be
        // compressed and written.
        data: Buffer.from(this.entries.view()),
      });
      const width = bitWidth(this.entryStarts.length - 1);
      body.byte(width);
      writeHybrid(body, this.indices, this.count, width);
    } else if (physical === 'INT64' && this.spec.delta && this.count > 0 && this.deltaFits()) {
      encoding = Encoding.DELTA_BINARY_PACKED;
      writeDeltaBinaryPacked(body, this.plainIntegers(), this.count);
    } else {
      body.copy(this.plain.buffer, 0, this.plain.length);
    }
    pages.push({
      header: {
        type: PageType.DATA_PAGE,
        data_page_header: new parquetTypes.DataPageHeader({
          num_values: rows,
          encoding,
          definition_level_encoding: Encoding.RLE,
          repetition_level_encoding: Encoding.RLE,
        }),
      },
      data: body.view(),
    });
    const chunk: LaidOutChunk = { spec: this.spec, rows, encoding, pages, statistics: this.statistics.encode() };
    this.reset();
    return chunk;
  }

  /** Whether DELTA_BINARY_PACKED can take this chunk's integers exactly. */
  private deltaFits(): boolean {
    const { min, max } = this.statistics as NumberStatistics;
    return min >= -MAX_DELTA_VALUE && max <= MAX_DELTA_VALUE;
  }

  /** The PLAIN-encoded INT64 values read back. */
  private plainIntegers(): Float64Array {
    const values = new Float64Array(this.count);
    const buffer = this.plain.buffer;
    for (let i = 0; i < this.count; i++) values[i] = buffer.readInt32LE(i * 8 + 4) * 4294967296 + buffer.readUInt32LE(i * 8);
    return values;
  }

  private reset(): void {
    this.defined.fill(0);
    this.plain.length = 0;
    if (this.spec.physical === 'BOOLEAN') this.plain.buffer.fill(0, 0, Math.ceil(this.defined.length / 8));
    this.count = 0;
    this.statistics.reset();
    if (this.dictionary !== undefined) {
      this.dictionary.clear();
      this.entries.length = 0;
      this.entryStarts = [];
      this.plainBytes = 0;
    }
  }
}

export class RowGroupBuffer {
  rows = 0;
  private readonly columns: ColumnBuffer[];

  constructor(
    specs: readonly ColumnSpec[],
    readonly capacity: number,
  ) {
    this.columns = specs.map((spec) => new ColumnBuffer(spec, capacity));
  }

  get full(): boolean {
    return this.rows >= this.capacity;
  }

  add(row: readonly Cell[]): void {
    for (let i = 0; i < this.columns.length; i++) {
      const cell = row[i];
      if (cell !== null) this.columns[i].push(this.rows, cell);
      else this.columns[i].pushNull();
    }
    this.rows++;
  }

  /** The buffered rows as column chunks, their pages not yet compressed; the buffer is then empty again. */
  take(): LaidOutRowGroup {
    const chunks = this.columns.map((column) => column.take(this.rows));
    const group = { rows: this.rows, chunks };
    this.rows = 0;
    return group;
  }
}

/** A page as laid out: its header's fields but the sizes, and its uncompressed bytes. */
interface LaidOutPage {
  header: Record<string, unknown>;
  data: Buffer;
}

/** One column's chunk of a row group, laid out: a dictionary page (when it has one), then its data page. */
interface LaidOutChunk {
  spec: ColumnSpec;
  rows: number;
  encoding: number;
  pages: LaidOutPage[];
  statistics: unknown;
}

/** A row group taken from the buffer, before compression. */
export interface LaidOutRowGroup {
  rows: number;
  chunks: LaidOutChunk[];
}

/** A row group whose pages are compressed: ready to be placed at its file offset. */
export interface CompressedRowGroup {
  rows: number;
  chunks: Array<{ chunk: LaidOutChunk; compressed: Buffer[] }>;
}

/**
 * Compresses every page of `group` at once (`compress` may do it off this thread), so the writer
 * can lay out the next row group meanwhile.
 */
export async function compressRowGroup(group: LaidOutRowGroup, compress: CompressPage): Promise<CompressedRowGroup> {
  const chunks = await Promise.all(
    group.chunks.map(async (chunk) => ({ chunk, compressed: await Promise.all(chunk.pages.map((page) => compress(page.data))) })),
  );
  return { rows: group.rows, chunks };
}

/** The row group's bytes in file order and its footer entry, for a group that starts at file offset `offset`. */
export function placeRowGroup(group: CompressedRowGroup, offset: number): EncodedRowGroup {
  const chunks: Buffer[] = [];
  const columns: unknown[] = [];
  let at = offset;
  let totalUncompressed = 0;
  for (const { chunk, compressed } of group.chunks) {
    const start = at;
    let uncompressed = 0;
    let dictionaryPageBytes = 0;
    chunk.pages.forEach((page, i) => {
      const head = serializeThrift(
        new parquetTypes.PageHeader({ ...page.header, uncompressed_page_size: page.data.length, compressed_page_size: compressed[i].length }),
      );
      chunks.push(head, compressed[i]);
      at += head.length + compressed[i].length;
      uncompressed += head.length + page.data.length;
      if (page.header.type === PageType.DICTIONARY_PAGE) dictionaryPageBytes = head.length + compressed[i].length;
    });
    totalUncompressed += uncompressed;
    const { physical, name, compression } = chunk.spec;
    columns.push(
      new parquetTypes.ColumnChunk({
        file_offset: start,
        meta_data: new parquetTypes.ColumnMetaData({
          type: parquetTypes.Type[physical],
          encodings: [Encoding.RLE, chunk.encoding],
          path_in_schema: [name],
          codec: parquetTypes.CompressionCodec[compression],
          num_values: chunk.rows,
          total_uncompressed_size: uncompressed,
          total_compressed_size: at - start,
          data_page_offset: start + dictionaryPageBytes,
          dictionary_page_offset: dictionaryPageBytes === 0 ? undefined : start,
          statistics: chunk.statistics,
        }),
      }),
    );
  }
  const metadata = new parquetTypes.RowGroup({ columns, total_byte_size: totalUncompressed, num_rows: group.rows });
  return { chunks, metadata };
}

/** Definition levels (bit width 1) in the RLE/bit-packed hybrid, behind the 4-byte length a v1 page wants. */
function encodeDefinitionLevels(out: Bytes, defined: Uint8Array, rows: number): void {
  const lengthAt = out.length;
  out.reserve(4);
  out.length += 4;
  writeHybrid(out, defined, rows, 1);
  out.buffer.writeUInt32LE(out.length - lengthAt - 4, lengthAt);
}
