/**
 * A dataset's objects read by location, for the code that looks at a dataset without exporting into
 * it (the queue: a run's recorded layout when it is enqueued, a walk's commit and its published run
 * when a worker looks). A local folder is a `LocalStorage` on it; an `s3://` location is opened once
 * (`openStorage`: one LIST, checked usable) and kept until `close`, since a worker looks often.
 */
import { LocalStorage } from './storage/local.ts';
import { parseLocation } from './storage/location.ts';
import { openStorage } from './storage/open.ts';
import type { Storage } from './storage/types.ts';
import { DatasetPaths } from './store.ts';

/** The stores of the datasets a caller looks into, by location, each opened once until `close`. */
export class DatasetStores {
  readonly #opened = new Map<string, Promise<Storage>>();

  /** The paths of `writer`'s share of `operation` in the dataset at `location`, its store opened once. */
  async paths(location: string, operation: string, writer: string): Promise<DatasetPaths> {
    let storage = this.#opened.get(location);
    if (storage === undefined) {
      storage = parseLocation(location).kind === 'local' ? Promise.resolve(new LocalStorage(location)) : openStorage(location);
      // A store that could not be opened is tried afresh next time.
      storage.catch(() => this.#opened.delete(location));
      this.#opened.set(location, storage);
    }
    return new DatasetPaths(location, operation, writer, await storage);
  }

  /** Closes every store opened. */
  async close(): Promise<void> {
    const opened = [...this.#opened.values()];
    this.#opened.clear();
    await Promise.all(opened.map((storage) => storage.then((each) => each.close(), () => undefined)));
  }
}

/** Runs `fn` with the paths of `writer`'s share of `operation` in the dataset at `location`, its store closed after. */
export async function withDatasetPaths<T>(location: string, operation: string, writer: string, fn: (paths: DatasetPaths) => Promise<T>): Promise<T> {
  const stores = new DatasetStores();
  try {
    return await fn(await stores.paths(location, operation, writer));
  } finally {
    await stores.close();
  }
}
