/** The part of snappyjs (which ships no types) the Parquet sink uses: a Buffer in gives a Buffer out. */
declare module 'snappyjs' {
  const snappy: { compress(input: Uint8Array): Uint8Array };
  export default snappy;
}
