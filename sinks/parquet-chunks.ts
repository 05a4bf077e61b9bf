/**
 * One column's values in one row group, being encoded: each kind of column fills itself from its
 * cells (`CellColumn`) and appends its data page's values, with a dictionary page when it has one.
 *
 * Dictionaries: INT64, DOUBLE and BYTE_ARRAY columns start dictionary-encoded; every 1,024 values
 * (and at the end of a row group) the dictionary plus its indices are compared with what PLAIN
 * would take, and a column whose dictionary does not pay, or outgrows `MAX_DICTIONARY_BYTES`, turns
 * PLAIN (its row group so far is re-encoded from the dictionary), and stays PLAIN in the file's
 * later row groups (`PlainColumns`). So ids, URLs and free text cost a thousand lookups, not a
 * dictionary the size of the column. A PLAIN integer chunk whose values lie within ±2^51 is
 * DELTA_BINARY_PACKED; booleans are bit-packed.
 */
import parquetTypes from 'parquetjs-lite/gen-nodejs/parquet_types.js';
import { TextDictionary } from './parquet-dictionary.ts';
import { bitWidth, Bytes, MAX_DELTA_VALUE, viewOf, writeDeltaBinaryPacked, writeHybrid } from './parquet-encoding.ts';
import { BooleanStatistics, NumberStatistics, TextStatistics, type Statistics } from './parquet-statistics.ts';
import type { CellColumn, ColumnSpec } from './parquet-types.ts';

const { Encoding } = parquetTypes;

/** The largest dictionary page kept (parquet-mr's default): past it a column turns PLAIN. */
const MAX_DICTIONARY_BYTES = 1024 * 1024;
/** How often (in values) a dictionary is weighed against PLAIN. */
const DICTIONARY_CHECK_EVERY = 1024;

/** How a chunk's data page encodes its values, and its dictionary page when it has one. */
export interface ChunkValues {
  encoding: number;
  dictionary?: { values: number; data: Buffer };
}

export interface ValueChunk {
  readonly statistics: Statistics;
  /** Whether the chunk ended PLAIN: the dictionary was dropped, or it never had one. */
  readonly isPlain: boolean;
  /**
   * Appends the data page's values to `page` (which holds its levels): every entry of `cells` that
   * has a value (definition level `maxDefinition`); the others are counted as nulls.
   */
  write(cells: CellColumn, maxDefinition: number, page: Bytes): ChunkValues;
}

/** The chunk for a column of `spec` and its `cells`; `plain` when an earlier group dropped its dictionary. */
export function valueChunk(spec: ColumnSpec, cells: CellColumn, plain: boolean): ValueChunk {
  switch (spec.physical) {
    case 'BOOLEAN':
      return new BooleanChunk();
    case 'BYTE_ARRAY':
      return new TextChunk(cells, plain);
    default:
      return new NumberChunk(spec.physical, cells.entries, plain);
  }
}

/** Bit-packed booleans, PLAIN. */
class BooleanChunk implements ValueChunk {
  readonly statistics = new BooleanStatistics();
  readonly isPlain = true;

  write({ entries, defined, numbers }: CellColumn, maxDefinition: number, page: Bytes): ChunkValues {
    const start = page.length;
    page.reserve(Math.ceil(entries / 8));
    const bits = page.buffer;
    let count = 0;
    for (let at = 0; at < entries; at++) {
      if (defined[at] !== maxDefinition) {
        this.statistics.nulls++;
        continue;
      }
      const value = numbers![at] !== 0;
      if ((count & 7) === 0) bits[start + (count >> 3)] = 0;
      if (value) bits[start + (count >> 3)] |= 1 << (count & 7);
      count++;
      this.statistics.observe(value);
    }
    page.length = start + ((count + 7) >> 3);
    return { encoding: Encoding.PLAIN };
  }
}

/**
 * The dictionary bookkeeping number and text chunks share: indices, and whether the dictionary
 * pays. A PLAIN value is appended to the page as it comes; a dictionary that stops paying is
 * replayed into the page PLAIN.
 */
abstract class DictionaryChunk implements ValueChunk {
  abstract readonly statistics: Statistics;
  /** Non-null values so far. */
  protected count = 0;
  /** The data page, and where its values start (after the levels). */
  protected page!: Bytes;
  protected valuesStart = 0;
  /** Each value's dictionary index; undefined once the chunk is PLAIN. */
  protected indices: Uint32Array | undefined;
  /** Bytes the values so far would take PLAIN-encoded. */
  protected plainBytes = 0;

  /** `capacity`: the most values the chunk takes; `plain`: whether it starts PLAIN. */
  constructor(
    private readonly capacity: number,
    plain: boolean,
  ) {
    if (!plain) this.indices = new Uint32Array(Math.min(1024, capacity));
  }

  get isPlain(): boolean {
    return this.indices === undefined;
  }

  write(cells: CellColumn, maxDefinition: number, page: Bytes): ChunkValues {
    this.page = page;
    this.valuesStart = page.length;
    this.fill(cells, maxDefinition);
    if (this.indices !== undefined && this.count > 0 && !this.dictionaryPays()) this.dropDictionary();
    if (this.indices === undefined || this.count === 0) return this.finishPlain();
    page.length = this.valuesStart;
    const width = bitWidth(this.distinct() - 1);
    page.byte(width);
    writeHybrid(page, this.indices, this.count, width);
    return { encoding: Encoding.PLAIN_DICTIONARY, dictionary: { values: this.distinct(), data: this.dictionaryPage().view() } };
  }

  /** Takes every value of `cells` (PLAIN into the page, or as dictionary indices). */
  protected abstract fill(cells: CellColumn, maxDefinition: number): void;
  /** How many distinct values the dictionary holds. */
  protected abstract distinct(): number;
  /** The dictionary page's bytes. */
  protected abstract dictionaryPage(): Bytes;
  /** Appends the values so far to the page PLAIN, from the dictionary. */
  protected abstract replay(): void;

  /** Records the next value's dictionary index. */
  protected pushIndex(index: number): void {
    let indices = this.indices!;
    if (this.count === indices.length) {
      indices = new Uint32Array(Math.min(indices.length * 2, this.capacity));
      indices.set(this.indices!);
      this.indices = indices;
    }
    indices[this.count++] = index;
    if (this.count % DICTIONARY_CHECK_EVERY === 0 && !this.dictionaryPays()) this.dropDictionary();
  }

  /** Whether the dictionary page plus bit-packed indices beat PLAIN, and the page is not too big. */
  private dictionaryPays(): boolean {
    const page = this.dictionaryPage().length;
    const indexBytes = Math.ceil((this.count * bitWidth(this.distinct() - 1)) / 8);
    return page <= MAX_DICTIONARY_BYTES && page + indexBytes < this.plainBytes;
  }

  private dropDictionary(): void {
    this.replay();
    this.indices = undefined;
  }

  /** The values are in the page, PLAIN. */
  protected finishPlain(): ChunkValues {
    return { encoding: Encoding.PLAIN };
  }
}

/** INT64 (exact or not) and DOUBLE values. */
class NumberChunk extends DictionaryChunk {
  readonly statistics: NumberStatistics;
  /** Value (or `'-0'`) → index. */
  private dictionary = new Map<number | bigint | string, number>();
  /** The distinct values, PLAIN, in index order: the dictionary page. */
  private readonly entries = new Bytes();

  constructor(
    private readonly physical: 'INT64' | 'DOUBLE',
    capacity: number,
    plain: boolean,
  ) {
    super(capacity, plain);
    this.statistics = new NumberStatistics(physical);
  }

  protected fill({ entries, defined, numbers, integers }: CellColumn, maxDefinition: number): void {
    for (let at = 0; at < entries; at++) {
      if (defined[at] !== maxDefinition) this.statistics.nulls++;
      else this.push(integers === undefined ? numbers![at] : integers[at]);
    }
  }

  private push(value: number | bigint): void {
    this.plainBytes += 8;
    if (this.indices === undefined) {
      this.append(this.page, value);
      this.count++;
      return;
    }
    // A Map takes -0 for 0, but a DOUBLE column must give -0 back.
    const key = value === 0 && 1 / value < 0 ? '-0' : value;
    let index = this.dictionary.get(key);
    if (index === undefined) {
      index = this.dictionary.size;
      this.dictionary.set(key, index);
      this.append(this.entries, value);
    }
    this.pushIndex(index);
  }

  /** Appends a value PLAIN-encoded to `bytes`, and counts it in the statistics. */
  private append(bytes: Bytes, value: number | bigint): void {
    if (this.physical === 'INT64') bytes.int64(value);
    else bytes.double(value as number);
    this.statistics.observe(value);
  }

  protected distinct(): number {
    return this.dictionary.size;
  }

  protected dictionaryPage(): Bytes {
    return this.entries;
  }

  protected replay(): void {
    const indices = this.indices!;
    this.page.reserve(this.count * 8);
    for (let i = 0; i < this.count; i++) this.page.copy(this.entries.buffer, indices[i] * 8, indices[i] * 8 + 8);
    this.dictionary.clear();
  }

  protected override finishPlain(): ChunkValues {
    if (this.physical !== 'INT64' || this.count === 0 || !this.deltaFits()) return super.finishPlain();
    const values = this.plainIntegers();
    this.page.length = this.valuesStart;
    writeDeltaBinaryPacked(this.page, values, this.count);
    return { encoding: Encoding.DELTA_BINARY_PACKED };
  }

  /** Whether DELTA_BINARY_PACKED can take this chunk's integers exactly. */
  private deltaFits(): boolean {
    const { min, max } = this.statistics;
    return Number(min) >= -MAX_DELTA_VALUE && Number(max) <= MAX_DELTA_VALUE;
  }

  /** The PLAIN-encoded INT64 values read back from the page (into a buffer this thread reuses). */
  private plainIntegers(): Float64Array {
    if (integers.length < this.count) integers = new Float64Array(Math.max(this.count, integers.length * 2));
    const view = this.page.dataView;
    for (let i = 0, at = this.valuesStart; i < this.count; i++, at += 8) integers[i] = view.getInt32(at + 4, true) * 4294967296 + view.getUint32(at, true);
    return integers;
  }
}

/** UTF-8 values, each a range of the group's text buffer: PLAIN is a 4-byte length, then the bytes. */
class TextChunk extends DictionaryChunk {
  readonly statistics: TextStatistics;
  private readonly dictionary = new TextDictionary();
  private readonly text: Uint8Array;
  private readonly textView: DataView;
  /** The most bytes the values take PLAIN. */
  private readonly plainCapacity: number;

  constructor(cells: CellColumn, plain: boolean) {
    super(cells.entries, plain);
    // A column added after a group was written has no text there (`parquet.ts` completes such groups with NULLs).
    this.text = asBuffer(cells.text ?? new Uint8Array(0));
    this.textView = viewOf(this.text);
    this.plainCapacity = (cells.textBytes ?? 0) + cells.entries * 4;
    this.statistics = new TextStatistics(this.text, this.textView, cells.ascii !== false);
  }

  protected fill({ entries, defined, lengths }: CellColumn, maxDefinition: number): void {
    if (this.indices === undefined) this.page.reserve(this.plainCapacity);
    let start = 0;
    let value = 0;
    for (let at = 0; at < entries; at++) {
      if (defined[at] !== maxDefinition) {
        this.statistics.nulls++;
        continue;
      }
      const end = start + lengths![value++];
      this.push(start, end);
      start = end;
    }
  }

  private push(start: number, end: number): void {
    this.plainBytes += 4 + end - start;
    if (this.indices === undefined) {
      this.page.int32(end - start);
      this.page.copy(this.text, start, end, this.textView);
      this.statistics.observe(start, end);
      this.count++;
      return;
    }
    const distinct = this.dictionary.size;
    const index = this.dictionary.indexOf(this.text, this.textView, start, end);
    // The bounds of the distinct values are those of every value.
    if (this.dictionary.size > distinct) this.statistics.observe(start, end);
    this.pushIndex(index);
  }

  protected distinct(): number {
    return this.dictionary.size;
  }

  protected dictionaryPage(): Bytes {
    return this.dictionary.page;
  }

  protected replay(): void {
    const indices = this.indices!;
    this.page.reserve(this.plainCapacity);
    const page = this.dictionary.page.buffer;
    const view = viewOf(page);
    for (let i = 0; i < this.count; i++) {
      const start = this.dictionary.startOf(indices[i]);
      this.page.copy(page, start - 4, start + this.dictionary.lengthOf(indices[i]), view);
    }
  }
}

/** `NumberChunk.plainIntegers`'s values, reused by every chunk of this thread. */
let integers = new Float64Array(0);

/** The same bytes as a Buffer (cells posted to the worker arrive as Uint8Arrays), for native copies. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
