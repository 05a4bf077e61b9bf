/**
 * Opens a dataset's store from its location: a local folder (`local.ts`) or an S3 prefix (`s3.ts`).
 * The S3 module, and through it the AWS SDK, is imported only here and only for an `s3://`
 * location, so a local dataset never loads the SDK (nor needs it installed).
 */
import { refuseUnknownOptions, type KnownOptions } from '../../known-options.ts';
import { openLocalStorage } from './local.ts';
import { parseLocation, type Location } from './location.ts';
import type { S3StorageOptions } from './s3.ts';
import type { Storage } from './types.ts';

/** How a store is opened (`openStorage`). The S3 settings are ignored by a local folder. */
export type OpenStorageOptions = S3StorageOptions;

const KNOWN = { locks: true, env: true, multipartThreshold: true, partSize: true } as const satisfies KnownOptions<OpenStorageOptions>;

/**
 * Opens the store at `location` (a path, `s3://bucket/prefix`, or a parsed `Location`), checked
 * usable: a local folder is made when missing; a bucket is listed once (and probed for conditional
 * writes when `locks` is asked for). Every refusal is a typed error of one line.
 */
export async function openStorage(location: string | Location, options: OpenStorageOptions = {}): Promise<Storage> {
  refuseUnknownOptions(options, KNOWN, 'openStorage');
  const parsed = typeof location === 'string' ? parseLocation(location) : location;
  if (parsed.kind === 'local') return openLocalStorage(parsed.path);
  const { openS3Storage } = await import('./s3.ts');
  return openS3Storage(parsed, options);
}
