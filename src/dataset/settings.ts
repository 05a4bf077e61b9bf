/**
 * A dataset operation's settings (format, Parquet layout, partitioning, bucketing, lock mechanism)
 * fixed once, before anything is published (docs/datasets.md). They live where every run reads them, the
 * schema file: the first writer about to buy a page creates it, with no columns yet, by linking a
 * file written whole into place, which fails when the name exists. Of writers starting together
 * exactly one binds the dataset; every other finds its settings there before its first request, and
 * takes them or is refused (`DatasetDestination.bind`). A run that ended having bought nothing
 * withdraws its binding (a key refused with 401 fixes nothing), unless a publish has replaced it.
 *
 * This is the one write of the schema object that does not go through the dataset's `Storage`:
 * binding needs a create that fails when the object exists, which `Storage` does not offer yet, so
 * it is made on the file itself (`DatasetPaths.file`). Every read of the schema goes through the store.
 */
import { link, open, rm, stat, unlink } from 'node:fs/promises';
import type { RecordedSchema } from './scan.ts';
import type { DatasetPaths } from './store.ts';
import { OPEN, temporaryName } from '../export/durable.ts';

/** A binding this run made: the schema file it linked into place, known by its inode (a publish renames another in). */
export interface Binding {
  readonly ino: number;
}

/**
 * Records `settings` (a schema without columns) as the operation's, if nobody has: the binding made,
 * or undefined when a schema file was there (another writer's binding or publish, to be read).
 */
export async function bindSettings(paths: DatasetPaths, settings: RecordedSchema): Promise<Binding | undefined> {
  const schema = paths.file(paths.names.schema);
  const draft = temporaryName(schema);
  const handle = await open(draft, OPEN.create, 0o644);
  try {
    await handle.writeFile(JSON.stringify(settings, null, 1));
    await handle.sync();
    const { ino } = await handle.stat();
    await handle.close();
    await link(draft, schema);
    return { ino };
  } catch (error) {
    await handle.close().catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  } finally {
    await rm(draft, { force: true });
  }
}

/**
 * Removes the schema file `binding` made while it is still that file: a publish that took pages
 * since renamed another into place, which stays. The caller holds the meta lock, under which passes
 * write the schema.
 */
export async function withdrawSettings(paths: DatasetPaths, binding: Binding): Promise<void> {
  const schema = paths.file(paths.names.schema);
  const now = await stat(schema).catch(() => undefined);
  if (now?.ino === binding.ino) await unlink(schema).catch(() => undefined);
}
