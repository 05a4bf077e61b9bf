/**
 * Page compression by codec. It runs wherever the row group is encoded: in the encoder's worker
 * thread for full row groups (`parquet-encoder.ts`), so snappyjs (pure JavaScript) does not share
 * the writer's thread. GZIP uses zlib's own thread pool; UNCOMPRESSED is the page itself.
 */
import { gzip } from 'node:zlib';
import snappy from 'snappyjs';

/** Compresses one page with the column chunk's codec. */
export type CompressPage = (page: Buffer) => Promise<Uint8Array>;

/** Parquet codec name (`SNAPPY`, `GZIP`, `UNCOMPRESSED`) → how its pages are compressed. */
export function pageCompressor(codec: string): CompressPage {
  switch (codec) {
    case 'SNAPPY':
      // Handed a Buffer, snappyjs zero-fills a worst-case buffer and returns a view of it; handed a
      // Uint8Array, it returns an exact copy. The view kept (and posted back from the worker) the
      // whole worst-case buffer of every page.
      return (page) => Promise.resolve(snappy.compress(new Uint8Array(page.buffer, page.byteOffset, page.byteLength)));
    case 'GZIP':
      return (page) =>
        new Promise((resolve, reject) => {
          gzip(page, (error, compressed) => (error === null ? resolve(compressed) : reject(error)));
        });
    case 'UNCOMPRESSED':
      return (page) => Promise.resolve(page);
    default:
      throw new TypeError(`unknown Parquet codec ${codec}`);
  }
}
