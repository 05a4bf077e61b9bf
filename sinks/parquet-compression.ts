/**
 * Page compression by codec. It runs wherever the row group is encoded: in the encoder's worker
 * thread for full row groups (`parquet-encoder.ts`), so snappy (`parquet-snappy.ts`, JavaScript)
 * does not share the writer's thread. GZIP uses zlib's own thread pool; UNCOMPRESSED is the page
 * itself.
 */
import { gzip } from 'node:zlib';
import { maxCompressedLength, snappyCompress } from './parquet-snappy.ts';

/** Compresses one page with the column chunk's codec; the bytes are valid until the next page is compressed. */
export type CompressPage = (page: Buffer) => Promise<Uint8Array>;

/** Where snappy writes each page, reused: the caller copies the page out before the next. */
let scratch = Buffer.allocUnsafe(0);

/** Parquet codec name (`SNAPPY`, `GZIP`, `UNCOMPRESSED`) → how its pages are compressed. */
export function pageCompressor(codec: string): CompressPage {
  switch (codec) {
    case 'SNAPPY':
      return (page) => {
        const room = maxCompressedLength(page.length);
        if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, scratch.length * 2));
        return Promise.resolve(scratch.subarray(0, snappyCompress(page, 0, page.length, scratch, 0)));
      };
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
