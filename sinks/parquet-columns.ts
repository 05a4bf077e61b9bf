/**
 * Columnar row groups for a flat, all-optional Parquet schema, encoded into column chunks with
 * statistics, using parquetjs-lite's thrift structures; pages are compressed by `parquet-compression.ts`.
 * The work is in three steps, so the middle one can run in a worker thread (`parquet-encoder.ts`):
 * `RowGroupCells` (`parquet-cells.ts`) gathers rows by column on the writer's thread;
 * `encodeRowGroup` lays the cells out and compresses the pages, from plain data to plain data;
 * `placeRowGroup` frames the result at its file offset in thrift.
 *
 * Why not `ParquetWriter.appendRow`: its general Dremel shredding allocates per field per row and
 * measured about 10,000 rows/s on sandbox-shaped records, under a tenth of DuckDB's conversion. Our
 * rows arrive already shredded (`RowGroupCells`: flat rows, or records shredded by
 * `parquet-nested.ts`), so each column is a list of values plus its levels. A chunk is a dictionary page (when the column is dictionary-encoded) and one
 * data page (v1); a PLAIN integer chunk whose values lie within ±2^51 is DELTA_BINARY_PACKED.
 *
 * Dictionaries: INT64, DOUBLE and BYTE_ARRAY columns start dictionary-encoded; every 1,024 values
 * (and at the end of a row group) the dictionary plus its indices are compared with what PLAIN
 * would take, and a column whose dictionary does not pay, or outgrows `MAX_DICTIONARY_BYTES`, turns
 * PLAIN (its row group so far is re-encoded from the dictionary), and stays PLAIN in the file's
 * later row groups (`PlainColumns`). So ids, URLs and free text cost a thousand lookups, not a
 * dictionary the size of the column.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import { pageCompressor } from './parquet-compression.ts';
import { bitWidth, Bytes, MAX_DELTA_VALUE, writeDeltaBinaryPacked, writeHybrid } from './parquet-encoding.ts';
import { TextValues, type CellColumn, type CellColumns } from './parquet-cells.ts';
import { BooleanStatistics, NumberStatistics, StringStatistics, type Statistics, type StatisticsFields } from './parquet-statistics.ts';
import { serializeThrift } from './parquet-thrift.ts';
import type { Cell } from './rows.ts';

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

/** The largest dictionary page kept (parquet-mr's default): past it a column turns PLAIN. */
const MAX_DICTIONARY_BYTES = 1024 * 1024;
/** How often (in values) a dictionary is weighed against PLAIN. */
const DICTIONARY_CHECK_EVERY = 1024;

const { Encoding, PageType } = parquetTypes;

/**
 * Per column of a file, whether an earlier row group found its dictionary did not pay: that column
 * starts PLAIN in the next group instead of trying again.
 */
export type PlainColumns = boolean[];

/**
 * Room for a column's PLAIN values at first. A column still trying its dictionary writes none until
 * it drops it, so it starts small and grows: its buffer is made anew for every row group.
 */
function plainCapacity(physical: PhysicalType, rows: number, plain: boolean): number {
  if (physical === 'BOOLEAN') return Math.ceil(rows / 8);
  if (!plain) return 1024;
  return physical === 'BYTE_ARRAY' ? 16 * 1024 : rows * 8;
}

/** Feeds a column's cells to its encoder, entry by entry. */
function pushCells(column: ColumnBuffer, cells: CellColumn, spec: ColumnSpec): void {
  const { entries, defined, numbers, integers, lengths } = cells;
  const { physical, maxDefinition } = spec;
  if (lengths === undefined) {
    for (let at = 0; at < entries; at++) {
      if (defined[at] !== maxDefinition) column.pushNull();
      else if (physical === 'BOOLEAN') column.push(numbers![at] !== 0);
      else column.push(integers === undefined ? numbers![at] : integers[at]);
    }
    return;
  }
  const texts = new TextValues(cells);
  for (let at = 0; at < entries; at++) {
    if (defined[at] !== maxDefinition) column.pushNull();
    else column.push(texts.next(lengths[at]));
  }
}

/** A row group's bytes, in file order, and its thrift `RowGroup` for the footer. */
export interface EncodedRowGroup {
  chunks: Buffer[];
  metadata: unknown;
}

/**
 * One column of one row group, being encoded: a null bitmap, and the non-null values either as
 * dictionary indices or PLAIN-encoded.
 */
class ColumnBuffer {
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
    private readonly capacity: number,
    plain: boolean,
  ) {
    this.plain = new Bytes(plainCapacity(spec.physical, capacity, plain));
    if (spec.physical === 'BOOLEAN') this.plain.buffer.fill(0);
    else if (!plain) this.dictionary = new Map();
    if (spec.physical === 'BYTE_ARRAY') this.statistics = new StringStatistics();
    else if (spec.physical === 'BOOLEAN') this.statistics = new BooleanStatistics();
    else this.statistics = new NumberStatistics(spec.physical);
  }

  /** Whether the column ended PLAIN: the dictionary was dropped, or it never had one. */
  get isPlain(): boolean {
    return this.dictionary === undefined;
  }

  push(cell: Exclude<Cell, null>): void {
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
        bytes.int64(cell as number | bigint);
        break;
      default:
        bytes.double(cell as number);
    }
    (this.statistics as NumberStatistics).observe(cell as number | bigint);
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
      const grown = new Uint32Array(Math.min(this.indices.length * 2, this.capacity));
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

  /** This row group's column chunk, its pages not yet compressed. */
  finish(cells: CellColumn): LaidOutChunk {
    if (this.dictionary !== undefined && this.count > 0 && !this.dictionaryPays()) this.dropDictionary();
    const { physical, maxDefinition, maxRepetition } = this.spec;
    const entries = cells.entries;
    const body = new Bytes(this.plain.length + entries / 2 + 64);
    if (maxRepetition > 0) encodeLevels(body, cells.repeated!, entries, bitWidth(maxRepetition));
    encodeLevels(body, cells.defined, entries, bitWidth(maxDefinition));
    const pages: LaidOutPage[] = [];
    let encoding = Encoding.PLAIN;
    if (this.dictionary !== undefined && this.count > 0) {
      encoding = Encoding.PLAIN_DICTIONARY;
      pages.push({ dictionary: true, values: this.entryStarts.length, encoding, data: this.entries.view() });
      const width = bitWidth(this.entryStarts.length - 1);
      body.byte(width);
      writeHybrid(body, this.indices, this.count, width);
    } else if (physical === 'INT64' && this.count > 0 && this.deltaFits()) {
      encoding = Encoding.DELTA_BINARY_PACKED;
      writeDeltaBinaryPacked(body, this.plainIntegers(), this.count);
    } else {
      body.copy(this.plain.buffer, 0, this.plain.length);
    }
    pages.push({ dictionary: false, values: entries, encoding, data: body.view() });
    return { spec: this.spec, entries, encoding, pages, statistics: this.statistics.encode() };
  }

  /** Whether DELTA_BINARY_PACKED can take this chunk's integers exactly. */
  private deltaFits(): boolean {
    const { min, max } = this.statistics as NumberStatistics;
    return Number(min) >= -MAX_DELTA_VALUE && Number(max) <= MAX_DELTA_VALUE;
  }

  /** The PLAIN-encoded INT64 values read back. */
  private plainIntegers(): Float64Array {
    const values = new Float64Array(this.count);
    const buffer = this.plain.buffer;
    for (let i = 0; i < this.count; i++) values[i] = buffer.readInt32LE(i * 8 + 4) * 4294967296 + buffer.readUInt32LE(i * 8);
    return values;
  }
}

/** A page as laid out: what its header says but the sizes, and its uncompressed bytes. */
interface LaidOutPage {
  /** A dictionary page, or else the data page. */
  dictionary: boolean;
  values: number;
  encoding: number;
  data: Buffer;
}

/** One column's chunk of a row group: a dictionary page (when it has one), then its data page. */
interface LaidOutChunk {
  spec: ColumnSpec;
  /** Entries (levels) in the chunk: its rows, or more in a list column. */
  entries: number;
  encoding: number;
  pages: LaidOutPage[];
  statistics: StatisticsFields;
}

/** A compressed page: its header's fields, and its bytes as they go into the file. */
interface CompressedPage {
  dictionary: boolean;
  values: number;
  encoding: number;
  uncompressedBytes: number;
  data: Uint8Array;
}

/** A row group encoded and compressed, as plain data (it may come from a worker): ready to be placed at its file offset. */
export interface CompressedRowGroup {
  rows: number;
  chunks: Array<Omit<LaidOutChunk, 'pages'> & { pages: CompressedPage[] }>;
  /** The file's `PlainColumns` after this group, for the groups after it. */
  plain: PlainColumns;
}

/**
 * Lays one row group's cells out into column chunks and compresses their pages. Plain data in and
 * out, and the same result wherever it runs: in the encoder's worker or on the writer's thread.
 */
export async function encodeRowGroup(specs: readonly ColumnSpec[], cells: CellColumns, plain: PlainColumns): Promise<CompressedRowGroup> {
  const { rows, columns } = cells;
  const laidOut = specs.map((spec, c) => {
    const column = new ColumnBuffer(spec, columns[c].entries, plain[c] ?? false);
    pushCells(column, columns[c], spec);
    return { chunk: column.finish(columns[c]), plain: column.isPlain };
  });
  const chunks = await Promise.all(
    laidOut.map(async ({ chunk }) => {
      const compress = pageCompressor(chunk.spec.compression);
      const pages = await Promise.all(
        chunk.pages.map(async ({ data, ...page }) => ({ ...page, uncompressedBytes: data.length, data: await compress(data) })),
      );
      return { ...chunk, pages };
    }),
  );
  return { rows, chunks, plain: laidOut.map((column) => column.plain) };
}

/** The same bytes as a Buffer: a row group from a worker holds Uint8Arrays. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function thriftStatistics({ null_count, min_value, max_value, min, max }: StatisticsFields): unknown {
  const buffer = (bytes: Uint8Array | undefined): Buffer | undefined => (bytes === undefined ? undefined : asBuffer(bytes));
  return new parquetTypes.Statistics({ null_count, min_value: buffer(min_value), max_value: buffer(max_value), min: buffer(min), max: buffer(max) });
}

function thriftPageHeader(page: CompressedPage): unknown {
  const sizes = { uncompressed_page_size: page.uncompressedBytes, compressed_page_size: page.data.length };
  if (page.dictionary) {
    return new parquetTypes.PageHeader({
      type: PageType.DICTIONARY_PAGE,
      dictionary_page_header: new parquetTypes.DictionaryPageHeader({ num_values: page.values, encoding: page.encoding }),
      ...sizes,
    });
  }
  return new parquetTypes.PageHeader({
    type: PageType.DATA_PAGE,
    data_page_header: new parquetTypes.DataPageHeader({
      num_values: page.values,
      encoding: page.encoding,
      definition_level_encoding: Encoding.RLE,
      repetition_level_encoding: Encoding.RLE,
    }),
    ...sizes,
  });
}

/** The row group's bytes in file order and its footer entry, for a group that starts at file offset `offset`. */
export function placeRowGroup(group: CompressedRowGroup, offset: number): EncodedRowGroup {
  const chunks: Buffer[] = [];
  const columns: unknown[] = [];
  let at = offset;
  let totalUncompressed = 0;
  for (const chunk of group.chunks) {
    const start = at;
    let uncompressed = 0;
    let dictionaryPageBytes = 0;
    for (const page of chunk.pages) {
      const head = serializeThrift(thriftPageHeader(page));
      const data = asBuffer(page.data);
      chunks.push(head, data);
      at += head.length + data.length;
      uncompressed += head.length + page.uncompressedBytes;
      if (page.dictionary) dictionaryPageBytes = head.length + data.length;
    }
    totalUncompressed += uncompressed;
    const { physical, path, compression } = chunk.spec;
    columns.push(
      new parquetTypes.ColumnChunk({
        file_offset: start,
        meta_data: new parquetTypes.ColumnMetaData({
          type: parquetTypes.Type[physical],
          encodings: [Encoding.RLE, chunk.encoding],
          path_in_schema: path,
          codec: parquetTypes.CompressionCodec[compression],
          num_values: chunk.entries,
          total_uncompressed_size: uncompressed,
          total_compressed_size: at - start,
          data_page_offset: start + dictionaryPageBytes,
          dictionary_page_offset: dictionaryPageBytes === 0 ? undefined : start,
          statistics: thriftStatistics(chunk.statistics),
        }),
      }),
    );
  }
  const metadata = new parquetTypes.RowGroup({ columns, total_byte_size: totalUncompressed, num_rows: group.rows });
  return { chunks, metadata };
}

/** Repetition or definition levels in the RLE/bit-packed hybrid, behind the 4-byte length a v1 page wants. */
function encodeLevels(out: Bytes, levels: Uint8Array, entries: number, width: number): void {
  const lengthAt = out.length;
  out.reserve(4);
  out.length += 4;
  writeHybrid(out, levels, entries, width);
  out.buffer.writeUInt32LE(out.length - lengthAt - 4, lengthAt);
}
