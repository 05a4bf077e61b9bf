/**
 * The widening rewrite (docs/datasets.md "Stable schema", docs/types.md): when a publish widens a
 * column, the parts written before hold the narrower type. The pass that records the wider schema
 * leaves `widening.json` (`DatasetNames.widening`, in its journal's carrying out), and the writer
 * whose publish it was, after its publish and before it reports, rewrites those parts one
 * partition at a time: each under the publish lock with no pass at work (`exclusively`) and the
 * partition's lock, through the compaction journal (`rewriteIntoBuckets` with `only`), so a kill -9
 * mid-partition is finished by the next writer's open or pass, like any compaction. Between two
 * partitions it publishes the commits left meanwhile, so no writer waits longer than one
 * partition's rewrite. Another writer finding the widen lock held leaves the rewrite to its holder;
 * a writer killed midway leaves `widening.json`, and the next writer's publish goes on with it.
 */
import type { OperationSpec } from '../operations/spec.ts';
import { partHoldsNarrowerType } from './part-types.ts';
import type { GroupCommit } from './commit.ts';
import type { DatasetLocks } from './locks.ts';
import { recordedLayout } from './nesting.ts';
import { groupsOf, rewriteIntoBuckets } from './rewrite.ts';
import { scanParts, type ScannedOperation } from './scan.ts';
import { readSchemaFile, readWideningFile } from './state.ts';
import { LEGACY_PARTITIONING, type DatasetPaths } from './store.ts';
import type { WideningRewrite } from '../export/types.ts';

/**
 * Rewrites the parts of a narrower type than the schema records, one partition at a time, when a
 * widening waits; undefined when none waits or another writer is at it (it holds the widen lock).
 */
export async function widenParts(spec: OperationSpec, paths: DatasetPaths, group: GroupCommit): Promise<WideningRewrite | undefined> {
  const pending = await readWideningFile(paths);
  if (pending === undefined) return undefined;
  const started = performance.now();
  const done = await group.locks.tryRun(paths.widenLock, async () => {
    let partitions = 0;
    for (const partition of await narrowerPartitions(paths)) {
      if (await group.exclusive(() => widenPartition(spec, paths, group.locks, partition))) partitions++;
      await group.publishWaiting();
    }
    // A pass published meanwhile may have widened again: its sign (another id) stays for the next writer.
    await group.locks.run(paths.metaLock, async () => {
      if ((await readWideningFile(paths))?.id === pending.id) await paths.storage.remove(paths.names.widening);
    });
    return partitions;
  });
  return done === undefined ? undefined : { partitions: done.value, seconds: (performance.now() - started) / 1000 };
}

/** The operation as its schema records it now, or undefined before its first publish. */
async function recordedOperation(paths: DatasetPaths): Promise<ScannedOperation | undefined> {
  const schema = await readSchemaFile(paths);
  if (schema === undefined) return undefined;
  return { operation: paths.operation, schema, format: schema.format, partitioning: schema.partitioning ?? LEGACY_PARTITIONING, paths };
}

/**
 * The partitions (of the recorded partitioning) that hold a part of a narrower type than recorded, in order. `only` looks at
 * that partition's folder alone: a pass scans the dataset once to list them, then one folder before each partition's rewrite.
 */
async function narrowerPartitions(paths: DatasetPaths, only?: string): Promise<string[]> {
  const operation = await recordedOperation(paths);
  if (operation?.schema === undefined) return [];
  const schema = { format: operation.format, columns: operation.schema.columns, parquetLayout: recordedLayout(operation.schema) };
  const narrower: string[] = [];
  for (const [partition, parts] of groupsOf(await scanParts(paths.dir, operation, only), operation.partitioning.by)) {
    if (only !== undefined && partition !== only) continue;
    for (const part of parts) {
      if (!(await partHoldsNarrowerType(paths.storage, part, schema))) continue;
      narrower.push(partition);
      break;
    }
  }
  return narrower.sort();
}

/**
 * Rewrites one partition's parts to the recorded types, holding its lock (the caller holds the
 * publish lock, no pass at work); false when a pass rewrote it since it was listed.
 */
async function widenPartition(spec: OperationSpec, paths: DatasetPaths, locks: DatasetLocks, partition: string): Promise<boolean> {
  const held = await locks.hold(paths.partitionLock(partition));
  try {
    const operation = await recordedOperation(paths);
    if (operation === undefined || (await narrowerPartitions(paths, partition)).length === 0) return false;
    await rewriteIntoBuckets(spec, operation, operation.partitioning.by, true, undefined, partition);
    return true;
  } finally {
    await held.release();
  }
}
