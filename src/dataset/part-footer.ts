/**
 * A part's Parquet footer read through the dataset's store (`Storage.readTail`): the last bytes
 * only, one GET for a footer of ours (a few KiB), a second when a footer is larger than the first
 * read. What the checks on open (`checkParts`), `part-types.ts` and `dataset info`'s row counts read,
 * so that none of them downloads a part from a bucket to look at its end.
 */
import { parquetMetadataAsync, type FileMetaData } from 'hyparquet';
import { StateDamagedError } from '../errors.ts';
import { objectPlace } from './objects.ts';
import type { Storage } from './storage/types.ts';

/** Bytes read from a part's end at first: a footer of ours is a few KiB; more is read when it is larger. */
export const FOOTER_FETCH = 16 * 1024;

/** The shortest Parquet file: magic, footer length, magic. */
const PARQUET_MIN_BYTES = 12;

/** What the footer of a part holds, or why it cannot be read. */
export type PartFooter = { readonly metadata: FileMetaData } | { readonly problem: string };

/**
 * The footer of the Parquet part `name` (`listedSize`: its size in the listing it was found by), or
 * undefined when the part is gone (a compaction removed it meanwhile). A footer that does not parse
 * is a `problem`; a store that fails is its error, not a problem of the part.
 */
export async function readPartFooter(storage: Storage, name: string, listedSize?: number): Promise<PartFooter | undefined> {
  const end = await storage.readTail(name, FOOTER_FETCH, listedSize);
  if (end === undefined) return undefined;
  const { size } = end;
  // Fewer bytes cannot be Parquet, and hyparquet would fail on them without saying so.
  if (size < PARQUET_MIN_BYTES) return { problem: `it is ${size} bytes long, too short for Parquet` };
  const tailStart = size - end.bytes.byteLength;
  // A store's failure while hyparquet reads is the store's error, not a problem of the part.
  let failure: Error | undefined;
  const slice = async (start: number, stop = size): Promise<ArrayBuffer> => {
    if (start >= tailStart) return copyOf(end.bytes.subarray(start - tailStart, stop - tailStart));
    // A footer larger than the first read: its beginning, read once more from the end.
    const more = await storage.readTail(name, size - start, size).catch((error: unknown) => {
      failure = error instanceof Error ? error : new Error(String(error));
      throw failure;
    });
    if (more === undefined) throw Object.assign(new Error(`${name} is gone`), { code: 'ENOENT' });
    return copyOf(more.bytes.subarray(0, stop - start));
  };
  try {
    return { metadata: await parquetMetadataAsync({ byteLength: size, slice }, { initialFetchSize: FOOTER_FETCH }) };
  } catch (error) {
    if (failure !== undefined) throw failure;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

/** The footer's metadata, or the part's problem as an error (for callers that only read a part known whole). */
export async function partMetadata(storage: Storage, name: string, listedSize?: number): Promise<FileMetaData> {
  const footer = await readPartFooter(storage, name, listedSize);
  if (footer === undefined) throw Object.assign(new Error(`${name} is not in ${storage.location}`), { code: 'ENOENT' });
  if ('problem' in footer) throw new StateDamagedError(`the part file ${objectPlace(storage, name)} cannot be read (${footer.problem})`, objectPlace(storage, name));
  return footer.metadata;
}

/** Bytes in an `ArrayBuffer` of their own (hyparquet reads the whole buffer it is given). */
function copyOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer;
}
