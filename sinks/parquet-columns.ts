/**
 * Columnar row groups encoded into column chunks with statistics, framed with parquetjs-lite's
 * thrift structures. The work is in three steps, so the middle one can run in a worker thread
 * (`parquet-encoder.ts`): `RowGroupCells` (`parquet-cells.ts`) gathers rows by column on the
 * writer's thread; `encodeRowGroup` lays the cells out (`parquet-chunks.ts`), compresses the pages
 * (`parquet-compression.ts`) and writes them with their headers into one buffer, from plain data
 * to plain data; `placeRowGroup` tells where the chunks lie once the group's file offset is known.
 *
 * Why not `ParquetWriter.appendRow`: its general Dremel shredding allocates per field per row and
 * measured about 10,000 rows/s on sandbox-shaped records, under a tenth of DuckDB's conversion. Our
 * rows arrive already shredded (`RowGroupCells`: flat rows, or records shredded by
 * `parquet-nested.ts`), so each column is a list of values plus its levels. A chunk is a dictionary
 * page (when the column is dictionary-encoded) and one data page (v1).
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import { valueChunk } from './parquet-chunks.ts';
import { pageCompressor } from './parquet-compression.ts';
import { bitWidth, Bytes, writeHybrid } from './parquet-encoding.ts';
import type { StatisticsFields } from './parquet-statistics.ts';
import { serializeThrift } from './parquet-thrift.ts';
import type { CellColumn, CellColumns, ColumnSpec, PlainColumns } from './parquet-types.ts';

const { Encoding, PageType } = parquetTypes;

/** A page as written: what its header says, and how many bytes header and compressed page take in the group's body. */
interface WrittenPage {
  dictionary: boolean;
  headerBytes: number;
  uncompressedBytes: number;
  compressedBytes: number;
}

/** One column's chunk of a row group: a dictionary page (when it has one), then its data page. */
interface WrittenChunk {
  spec: ColumnSpec;
  /** Entries (levels) in the chunk: its rows, or more in a list column. */
  entries: number;
  encoding: number;
  pages: WrittenPage[];
  statistics: StatisticsFields;
}

/** A row group encoded and compressed, as plain data (it may come from a worker): ready to be placed at its file offset. */
export interface CompressedRowGroup {
  rows: number;
  /** Every chunk's pages, each behind its header, in file order (in the encoder's worker, on shared memory: `parquet-encoder-worker.ts`). */
  body: Uint8Array;
  chunks: WrittenChunk[];
  /** The file's `PlainColumns` after this group, for the groups after it. */
  plain: PlainColumns;
}

/** A row group's bytes and its thrift `RowGroup` for the footer. */
export interface EncodedRowGroup {
  body: Buffer;
  metadata: unknown;
}

/** Room for a group's body at first. */
const FIRST_BODY_BYTES = 64 * 1024;

/**
 * Lays one row group's cells out into column chunks, compresses their pages and writes them into
 * one buffer. Plain data in and out, and the same result wherever it runs: in the encoder's worker
 * or on the writer's thread. One page is laid out at a time, so only the compressed bytes pile up.
 * `allocate` gives the body's memory (Node's own by default).
 */
export async function encodeRowGroup(
  specs: readonly ColumnSpec[],
  cells: CellColumns,
  plain: PlainColumns,
  allocate?: (bytes: number) => Buffer,
): Promise<CompressedRowGroup> {
  // Sized like the last group's body: doubling up to it allocated (and made V8 count) twice as much.
  const body = new Bytes(Math.max(FIRST_BODY_BYTES, Math.ceil(lastBodyBytes * 1.25)), allocate);
  const page = spare.pop() ?? new Bytes();
  try {
    const group = await encodeInto(body, page, specs, cells, plain);
    lastBodyBytes = body.length;
    return group;
  } finally {
    spare.push(page);
  }
}

/**
 * Page buffers this thread reuses (one per group being encoded at once: groups compressed with
 * gzip can interleave): a page is laid out, compressed and copied into the body before the next.
 */
const spare: Bytes[] = [];
let lastBodyBytes = 0;

async function encodeInto(body: Bytes, page: Bytes, specs: readonly ColumnSpec[], cells: CellColumns, plain: PlainColumns): Promise<CompressedRowGroup> {
  const chunks: WrittenChunk[] = [];
  const plainAfter: PlainColumns = [];
  for (let c = 0; c < specs.length; c++) {
    const spec = specs[c];
    const column = cells.columns[c];
    const values = valueChunk(spec, column, plain[c] ?? false);
    page.length = 0;
    writeLevels(page, spec, column);
    const { encoding, dictionary } = values.write(column, spec.maxDefinition, page);
    const compress = pageCompressor(spec.compression);
    const pages: WrittenPage[] = [];
    if (dictionary !== undefined) pages.push(await writePage(body, { dictionary: true, values: dictionary.values, encoding }, dictionary.data, compress));
    pages.push(await writePage(body, { dictionary: false, values: column.entries, encoding }, page.view(), compress));
    chunks.push({ spec, entries: column.entries, encoding, pages, statistics: values.statistics.encode() });
    plainAfter.push(values.isPlain);
  }
  return { rows: cells.rows, body: body.view(), chunks, plain: plainAfter };
}

/** The column's repetition levels (inside a list) and definition levels. */
function writeLevels(page: Bytes, spec: ColumnSpec, column: CellColumn): void {
  if (spec.maxRepetition > 0) encodeLevels(page, column.repeated!, column.entries, bitWidth(spec.maxRepetition));
  encodeLevels(page, column.defined, column.entries, bitWidth(spec.maxDefinition));
}

/** Compresses a page and appends its header and its bytes to `body`. */
async function writePage(
  body: Bytes,
  header: { dictionary: boolean; values: number; encoding: number },
  data: Buffer,
  compress: ReturnType<typeof pageCompressor>,
): Promise<WrittenPage> {
  const compressed = await compress(data);
  const head = serializeThrift(thriftPageHeader({ ...header, uncompressedBytes: data.length, compressedBytes: compressed.length }));
  body.copy(head, 0, head.length);
  body.copy(compressed, 0, compressed.length);
  return { dictionary: header.dictionary, headerBytes: head.length, uncompressedBytes: data.length, compressedBytes: compressed.length };
}

function thriftPageHeader(page: { dictionary: boolean; values: number; encoding: number; uncompressedBytes: number; compressedBytes: number }): unknown {
  const sizes = { uncompressed_page_size: page.uncompressedBytes, compressed_page_size: page.compressedBytes };
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

/** The same bytes as a Buffer: a row group from a worker holds Uint8Arrays. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function thriftStatistics({ null_count, min_value, max_value, min, max }: StatisticsFields): unknown {
  const buffer = (bytes: Uint8Array | undefined): Buffer | undefined => (bytes === undefined ? undefined : asBuffer(bytes));
  return new parquetTypes.Statistics({ null_count, min_value: buffer(min_value), max_value: buffer(max_value), min: buffer(min), max: buffer(max) });
}

/** The row group's bytes and its footer entry, for a group that starts at file offset `offset`. */
export function placeRowGroup(group: CompressedRowGroup, offset: number): EncodedRowGroup {
  const columns: unknown[] = [];
  let at = offset;
  let totalUncompressed = 0;
  for (const chunk of group.chunks) {
    const start = at;
    let uncompressed = 0;
    let dictionaryPageBytes = 0;
    for (const page of chunk.pages) {
      at += page.headerBytes + page.compressedBytes;
      uncompressed += page.headerBytes + page.uncompressedBytes;
      if (page.dictionary) dictionaryPageBytes = page.headerBytes + page.compressedBytes;
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
  return { body: asBuffer(group.body), metadata };
}

/** Repetition or definition levels in the RLE/bit-packed hybrid, behind the 4-byte length a v1 page wants. */
function encodeLevels(out: Bytes, levels: Uint8Array, entries: number, width: number): void {
  const lengthAt = out.length;
  out.reserve(4);
  out.length += 4;
  writeHybrid(out, levels, entries, width);
  out.buffer.writeUInt32LE(out.length - lengthAt - 4, lengthAt);
}
