/** The part of snappyjs (which ships no types) the tests use: its decompressor reads back what `parquet-snappy.ts` writes. */
declare module 'snappyjs' {
  const snappy: { compress(input: Uint8Array): Uint8Array; uncompress(input: Uint8Array): Uint8Array };
  export default snappy;
}
