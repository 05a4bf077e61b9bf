/** The parts of parquetjs-lite (which ships no types) that sinks/parquet.ts and parquet-columns.ts use. */
declare module 'parquetjs-lite' {
  import type { Writable } from 'node:stream';

  interface FieldDefinition {
    type: string;
    optional?: boolean;
    compression?: string;
    statistics?: boolean;
  }

  class ParquetSchema {
    constructor(fields: Record<string, FieldDefinition>);
  }

  interface EnvelopeOptions {
    pageSize?: number;
    useDataPageV2?: boolean;
    pageIndex?: boolean;
  }

  /** A row group already laid out as pages, keyed by column name. */
  interface EncodedRowGroup {
    rowCount: number;
    pages: Record<string, Array<{ page: Buffer; first_row_index: number; num_values: number; distinct_values: Set<unknown> }>>;
  }

  class ParquetEnvelopeWriter {
    static openStream(schema: ParquetSchema, stream: Writable, options?: EnvelopeOptions): Promise<ParquetEnvelopeWriter>;
    writeHeader(): Promise<void>;
    writeRowGroup(group: EncodedRowGroup): Promise<void>;
    writeFooter(metadata: Record<string, string>): Promise<void>;
    close(): Promise<void>;
  }

  /** A row as read back: flat columns by name; NULL cells are absent; INT64 comes back as bigint. */
  type ParquetRow = Record<string, string | number | boolean | bigint | Date | Buffer>;

  class ParquetCursor {
    next(): Promise<ParquetRow | null>;
  }

  class ParquetReader {
    static openFile(path: string): Promise<ParquetReader>;
    getCursor(): ParquetCursor;
    /** The footer's key-value metadata. */
    getMetadata(): Record<string, string>;
    close(): Promise<void>;
  }

  const parquet: {
    ParquetSchema: typeof ParquetSchema;
    ParquetEnvelopeWriter: typeof ParquetEnvelopeWriter;
    ParquetReader: typeof ParquetReader;
  };
  export default parquet;
  export type { FieldDefinition, EnvelopeOptions, EncodedRowGroup, ParquetSchema, ParquetEnvelopeWriter, ParquetReader, ParquetRow };
}

declare module 'parquetjs-lite/gen-nodejs/parquet_types.js' {
  /** Thrift structs from parquet.thrift; only the fields set by sinks/parquet-columns.ts are typed. */
  const types: {
    PageType: { DATA_PAGE: number };
    Encoding: { PLAIN: number; RLE: number };
    PageHeader: new (args: {
      type: number;
      uncompressed_page_size: number;
      compressed_page_size: number;
      data_page_header: unknown;
    }) => unknown;
    DataPageHeader: new (args: {
      num_values: number;
      encoding: number;
      definition_level_encoding: number;
      repetition_level_encoding: number;
    }) => unknown;
  };
  export default types;
}

declare module 'parquetjs-lite/lib/util.js' {
  const util: { serializeThrift(struct: unknown): Buffer };
  export default util;
}

declare module 'parquetjs-lite/lib/compression.js' {
  const compression: { deflate(method: string, data: Buffer): Buffer };
  export default compression;
}
