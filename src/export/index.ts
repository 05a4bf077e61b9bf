/**
 * The export engine: every export, into a file or a growing dataset, with the same guarantees for
 * every caller (the CLI, a script, a notebook): one writer per output, pages staged durably as they
 * arrive, caps exact across crashes, resume without buying a page twice, typed errors.
 *
 * @module socialstream/export
 */
import { attachNotebookViews } from '../notebook/export-views.ts';

// The package's entry, not the engine: summaries, dataset infos and progress render as notebook views.
attachNotebookViews();

export { exportTo, toDataset } from '../export-to.ts';
export { describeSummary, type OptionNames } from './summary.ts';
export { describeProgress } from './progress.ts';
export { datasetInfo, describeDatasetInfo, type DatasetInfo, type DatasetInfoData, type ExtraCount, type MarkInfo, type OperationInfo, type PartitionInfo, type StagedInfo, type WriterInfo } from '../dataset/info.ts';
export { compactDataset, type CompactionSummary, type CompactOptions, type OperationCompaction } from '../dataset/compact.ts';
export type { DatasetChanges, ExportLocks, ExportOptions, HeldLocks, ExportProgress, ExportSummary, FileFormat, PublishFence, SchemaPolicy, StopReason, WideningRewrite } from './types.ts';
export {
  DatasetLayoutError,
  DiskFullError,
  ExportError,
  HeldStateError,
  LockedError,
  LockLostError,
  NotWritableError,
  OptionError,
  OtherExportError,
  type HeldExportFacts,
  SchemaDriftError,
  StateDamagedError,
  StreamUsedError,
  TransformError,
} from '../errors.ts';
export type { PartitionBy } from './partition-by.ts';
export type { DatasetFormat } from '../dataset/parts.ts';
export type { ColumnShape, DatasetKind, MapShape, SchemaColumn } from '../dataset/schema.ts';
export type { ColumnKind } from '../column-kinds.ts';
