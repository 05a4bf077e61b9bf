/**
 * The store of an existing dataset, for what reads or tidies one that exports made (`dataset info`,
 * `dataset compact`): a local folder, or an `s3://bucket/prefix` opened with the AWS settings of
 * docs/storage.md (the SDK loaded only then). A local folder is not made when missing, as an
 * export's store is: a dataset that is not there is refused by what scans it (`scanOperations`).
 */
import { parseLocation } from './storage/location.ts';
import { LocalStorage } from './storage/local.ts';
import { openStorage } from './storage/open.ts';
import type { Storage } from './storage/types.ts';

/** Runs `fn` with the store of the dataset at `location` (`option` names it in a refusal), and lets the store go however `fn` ended. */
export async function withDatasetStore<T>(location: string, option: string, fn: (storage: Storage) => Promise<T>): Promise<T> {
  const parsed = parseLocation(location, option);
  const storage = parsed.kind === 'local' ? new LocalStorage(parsed.path) : await openStorage(parsed);
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}
