/**
 * Serializes parquetjs-lite's generated thrift structures (page headers, the footer) in the compact
 * protocol. The structures' own `write(protocol)` drives this writer; parquetjs-lite's protocol
 * allocates through the deprecated `Buffer()` constructor and node-int64 for every field, which cost
 * about a sixth of the sink's time on sandbox posts.
 */
import { Bytes, writeZigzag } from './parquet-encoding.ts';

/** Thrift's type ids (as the generated code passes them) → the compact protocol's. */
const COMPACT_TYPE: Record<number, number> = { 2: 1, 3: 3, 4: 7, 6: 4, 8: 5, 10: 6, 11: 8, 12: 12, 13: 11, 14: 10, 15: 9 };
const BOOL = 2;
const COMPACT_TRUE = 1;
const COMPACT_FALSE = 2;

/** The protocol methods the generated `write` calls, for the field types parquet.thrift uses. */
class CompactWriter {
  readonly out = new Bytes(256);
  private lastField = 0;
  private readonly enclosing: number[] = [];
  /** A bool field's header waits for its value: the compact protocol folds the value into the type. */
  private boolField: number | undefined;

  writeStructBegin(): void {
    this.enclosing.push(this.lastField);
    this.lastField = 0;
  }

  writeStructEnd(): void {
    this.lastField = this.enclosing.pop()!;
  }

  writeFieldBegin(_name: string, type: number, id: number): void {
    if (type === BOOL) this.boolField = id;
    else this.fieldHeader(COMPACT_TYPE[type], id);
  }

  writeFieldEnd(): void {}

  writeFieldStop(): void {
    this.out.byte(0);
  }

  writeListBegin(type: number, size: number): void {
    if (size < 15) this.out.byte((size << 4) | COMPACT_TYPE[type]);
    else {
      this.out.byte(0xf0 | COMPACT_TYPE[type]);
      this.out.varint(size);
    }
  }

  writeListEnd(): void {}

  writeBool(value: boolean): void {
    const type = value ? COMPACT_TRUE : COMPACT_FALSE;
    if (this.boolField === undefined) this.out.byte(type);
    else this.fieldHeader(type, this.boolField);
    this.boolField = undefined;
  }

  writeByte(value: number): void {
    this.out.byte(value & 0xff);
  }

  writeI32(value: number): void {
    writeZigzag(this.out, value);
  }

  /** Sizes, offsets and counts: numbers, far inside the ±2^52 that `writeZigzag` takes. */
  writeI64(value: number): void {
    writeZigzag(this.out, value);
  }

  /** Strings and binary fields alike (min and max values are Buffers). */
  writeString(value: string | Buffer): void {
    const bytes = typeof value === 'string' ? Buffer.from(value) : value;
    this.out.varint(bytes.length);
    this.out.copy(bytes, 0, bytes.length);
  }

  private fieldHeader(type: number, id: number): void {
    const delta = id - this.lastField;
    if (delta > 0 && delta <= 15) this.out.byte((delta << 4) | type);
    else {
      this.out.byte(type);
      writeZigzag(this.out, id);
    }
    this.lastField = id;
  }
}

/** One thrift structure's compact-protocol bytes. */
export function serializeThrift(struct: unknown): Buffer {
  const writer = new CompactWriter();
  (struct as { write(protocol: CompactWriter): void }).write(writer);
  return Buffer.from(writer.out.view());
}
