/**
 * A record stream regrouped into its finished pages, each with the checkpoint taken right after it.
 * The export writes and vouches for whole pages only, so a checkpoint never points into a page whose
 * records are half in the spool. The stream's control is carried over, so `creditCap` still governs
 * the requests behind the pages.
 */
import type { Checkpoint, Client, RecordStream, StreamOptions } from '../index.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { derive } from '../operators/derive.ts';

export interface PageBatch {
  /** Which parameter set (walk) the page belongs to. */
  walk: number;
  records: unknown[];
  /** Where the walk stands once these records are written. */
  checkpoint: Checkpoint;
  /** The walk has nothing left to fetch. */
  last: boolean;
}

/** The stream of `op` with `params`, for an operation chosen at run time (by its id). */
export function streamOf(client: Client, op: OperationSpec, params: Record<string, string>, options: StreamOptions): RecordStream<unknown> {
  const groups = client as unknown as Record<string, Record<string, (params: unknown, options: StreamOptions) => RecordStream<unknown>>>;
  return groups[op.group][op.method](params, options);
}

export function pageBatches(stream: RecordStream<unknown>, walk: number): AsyncIterable<PageBatch> {
  return derive(stream, 'pageBatches', () => batches(stream, walk));
}

async function* batches(stream: RecordStream<unknown>, walk: number): AsyncGenerator<PageBatch> {
  let records: unknown[] = [];
  for await (const record of stream) {
    records.push(record);
    // `skip` is 0 exactly when the record just received was the last of its page.
    const checkpoint = stream.checkpoint();
    if (checkpoint.skip === 0) {
      yield { walk, records, checkpoint, last: false };
      records = [];
    }
  }
  const checkpoint = stream.checkpoint();
  yield { walk, records, checkpoint, last: checkpoint.pending === null };
}
