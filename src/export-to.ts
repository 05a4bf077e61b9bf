/**
 * The export API: `exportTo` and `toDataset`. It checks the options once, picks the destination (a
 * file, `src/export/file.ts`, or a dataset, `src/dataset/`) and hands it to the engine. It is the one
 * module that sees both, so imports run one way: CLI, queue and scripts → export API → dataset →
 * engine stages → sinks (docs/architecture.md, "Layers").
 */
import { createHash } from 'node:crypto';
import { datasetRoot, DatasetDestination } from './dataset/destination.ts';
import { LocalStorage } from './dataset/storage/local.ts';
import { parseLocation } from './dataset/storage/location.ts';
import { openStorage } from './dataset/storage/open.ts';
import { chooseDatasetLocks } from './dataset/lock-choice.ts';
import { refuseUnknownOptions } from './known-options.ts';
import { walkName } from './operations/walk-name.ts';
import { exportInto } from './export/engine.ts';
import { FileDestination, formatOf } from './export/file.ts';
import { checkOptions, checkOptionsFor, EXPORT_OPTIONS, type ExportSettings } from './export/options.ts';
import { exportRecord } from './export/output-record.ts';
import { walksOf, type ExportWalks } from './export/sources.ts';
import type { ExportOptions, ExportSummary } from './export/types.ts';

/**
 * Exports `source` (a client stream that has not been iterated, or an array of them: one operation,
 * several parameter sets) into `options.out` (a file) or `options.dataset` (a growing dataset), and
 * resolves with what it did. See docs/architecture.md, "One export, from argv to the published file".
 */
export async function exportTo(source: unknown, options: ExportOptions): Promise<ExportSummary> {
  const settings = checkOptions(options);
  const walks = walksOf(source, settings.shard);
  checkOptionsFor(walks.op, options);
  if (settings.out !== undefined) return exportInto(walks, fileDestination(settings.out, walks, settings), settings);
  const dataset = settings.dataset!;
  // Opened and checked before anything is bought: a bucket that cannot be used is refused here.
  const storage = parseLocation(dataset).kind === 'local' ? new LocalStorage(dataset) : await openStorage(dataset);
  // Decided before anything is bought: the engine's writer lock and the publishes take the same locks,
  // named by their paths under the folder that stands for the dataset (on a store, its working folder).
  const locks = await chooseDatasetLocks(storage, datasetRoot(dataset, storage, settings.work), settings.locks).catch(async (error: unknown) => {
    await storage.close();
    throw error;
  });
  const destination = new DatasetDestination(dataset, walks.op, {
    storage,
    work: settings.work,
    locks,
    format: settings.format,
    schema: settings.schema,
    shard: settings.shard,
    writer: settings.writer,
    runId: runOf(settings.runId, walks),
    handOff: settings.handOff,
    incremental: settings.incremental,
    maxDepth: settings.maxDepth,
    partition: settings.partition,
    layout: settings.bucketing,
    parquetLayout: settings.parquetLayout,
    walks: walks.params,
    since: settings.since,
    until: settings.until,
  });
  return exportInto(walks, destination, { ...settings, locks: locks.mechanism === 'folders' ? undefined : locks.locks });
}

/** A file as the output of the export `walks` is: its format, and the record a complete one carries. */
function fileDestination(out: string, walks: ExportWalks, settings: ExportSettings): FileDestination {
  const format = formatOf(out, settings.format);
  return new FileDestination(out, format, exportRecord(walks.op.id, walks.params, format), settings.escapeFormulae, settings.parquetLayout);
}

/**
 * A scheduler's run as a dataset records it: its `runId` and the walks it was given, so an id handed
 * out again with other parameters is another run, walked as such, never taken as done.
 */
function runOf(runId: string | undefined, walks: ExportWalks): string | undefined {
  if (runId === undefined) return undefined;
  const names = walks.params.map((params) => walkName(params)).sort();
  return `${runId}#${createHash('sha256').update(`${walks.op.id}\n${names.join('\n')}`).digest('hex').slice(0, 16)}`;
}

/** `exportTo(source, { dataset: dir, …options })`. */
export function toDataset(source: unknown, dir: string, options: Omit<ExportOptions, 'out' | 'dataset'> = {}): Promise<ExportSummary> {
  refuseUnknownOptions(options, EXPORT_OPTIONS, 'toDataset');
  return exportTo(source, { ...options, dataset: dir });
}
