/** The parts of parquetjs-lite (which ships no types) that the sinks use: thrift structures and codecs. */
declare module 'parquetjs-lite/gen-nodejs/parquet_types.js' {
  /** A thrift struct from parquet.thrift, built from its fields by name. */
  type Struct = new (fields?: Record<string, unknown>) => unknown;

  const types: {
    Type: Record<'BOOLEAN' | 'INT64' | 'DOUBLE' | 'BYTE_ARRAY', number>;
    ConvertedType: Record<string, number>;
    FieldRepetitionType: { REQUIRED: number; OPTIONAL: number; REPEATED: number };
    Encoding: { PLAIN: number; PLAIN_DICTIONARY: number; RLE: number; DELTA_BINARY_PACKED: number };
    CompressionCodec: Record<string, number>;
    PageType: { DATA_PAGE: number; DICTIONARY_PAGE: number };
    PageHeader: Struct;
    DataPageHeader: Struct;
    DictionaryPageHeader: Struct;
    Statistics: Struct;
    ColumnMetaData: Struct;
    ColumnChunk: Struct;
    RowGroup: Struct;
    SchemaElement: Struct;
    LogicalType: Struct;
    MapType: Struct;
    KeyValue: Struct;
    ColumnOrder: Struct;
    TypeDefinedOrder: Struct;
    FileMetaData: Struct;
  };
  export default types;
}

declare module 'parquetjs-lite/lib/compression.js' {
  const compression: { deflate(method: string, data: Buffer): Buffer };
  export default compression;
}
