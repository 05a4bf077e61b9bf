/**
 * socialstream: every operation of the Social Data Extraction API as a stream of typed records.
 *
 * @module socialstream
 */
import { attachNotebookViews } from './notebook/export-views.ts';

// The package's entry: export summaries and dataset infos render as notebook views (src/notebook/export-views.ts).
attachNotebookViews();

export { createClient } from './client.ts';
export { BaseUrlError } from './client-options.ts';
export type { Client, OperationGroups, OperationStream } from './client.ts';
export type { ClientOptions } from './client-options.ts';
export { RecordStream } from './stream.ts';
export type { LookaheadMode, PageBatch, StreamOptions } from './stream.ts';
export type { Checkpoint } from './checkpoint.ts';
export type { ClientEvent, ClientStats } from './metering.ts';
export type { RetryOptions } from './retry.ts';
export { OPERATIONS as operations, findOperation } from './operations/table.ts';
export type { Operation, OperationId } from './operations/table.ts';
export type { ParamsOf, ParamValue } from './operations/params.ts';
export type {
  ContinuationSpec,
  NewestFirstSpec,
  OperationSpec,
  ParamDependency,
  ParamSpec,
  ParamType,
  RecordsSpec,
  RecordTimeSpec,
  StableKeySpec,
  TimeUnit,
} from './operations/spec.ts';
export type * from './records/index.ts';
export * from './errors.ts';
export { stringify } from './exact-json.ts';
export { STREAM_CONTROL, controlOf } from './control.ts';
export type { Controlled, OperatorEvent, RequestGate, StreamControl } from './control.ts';
export * from './operators/index.ts';
export * from './notebook/index.ts';
