/**
 * A dataset operation's settings (format, Parquet layout, partitioning, bucketing, lock mechanism)
 * fixed once, before anything is published (docs/datasets.md). They live where every run reads them, the
 * schema object: the first writer about to buy a page creates it, with no columns yet, by the
 * store's `create`, which fails when the object exists. Of writers starting together exactly one
 * binds the dataset; every other finds its settings there before its first request, and takes them
 * or is refused (`DatasetDestination.bind`). A run that ended having bought nothing withdraws its
 * binding (a key refused with 401 fixes nothing), unless a publish has replaced it.
 *
 * `create` is one writer's alone only on a store that honours conditional writes: a local folder,
 * or a bucket checked to (store leases). Writers locked in Redis do not have their store probed, so
 * they bind holding the meta lock (`DatasetDestination.bind`), where a create is never raced.
 */
import type { RecordedSchema } from './scan.ts';
import type { DatasetPaths } from './store.ts';

/** A binding this run made: the schema object it created, known by its version (a publish replaces it with another). */
export interface Binding {
  readonly version: string;
}

/**
 * Records `settings` (a schema without columns) as the operation's, if nobody has: the binding made,
 * or undefined when a schema object was there (another writer's binding or publish, to be read).
 */
export async function bindSettings(paths: DatasetPaths, settings: RecordedSchema): Promise<Binding | undefined> {
  const version = await paths.storage.create(paths.names.schema, new TextEncoder().encode(JSON.stringify(settings, null, 1)));
  return version === undefined ? undefined : { version };
}

/**
 * Removes the schema object `binding` made while it is still that object: a publish that took pages
 * since replaced it, and its schema stays. The caller holds the meta lock, under which passes
 * write the schema, so nothing replaces it between the look and the removal.
 */
export async function withdrawSettings(paths: DatasetPaths, binding: Binding): Promise<void> {
  if ((await paths.storage.version(paths.names.schema)) === binding.version) await paths.storage.remove(paths.names.schema);
}
