/**
 * `preview(source, { rows })`: the first rows of a stream as a `RecordTable`. It reads as a `for await`
 * loop with a `break` would: a client stream buys only the pages those rows need and is left partly
 * read, so iterating it afterwards continues with the next record.
 */
import { assertInteger, assertIterable, asyncIteratorOf } from '../operators/derive.ts';
import type { AnyIterable } from '../operators/types.ts';
import { RecordTable } from './record-table.ts';

export interface PreviewOptions {
  /** Records to read at most. Default 20. */
  rows?: number;
}

export const DEFAULT_PREVIEW_ROWS = 20;

export async function preview<R>(source: AnyIterable<R>, options: PreviewOptions = {}): Promise<RecordTable<R>> {
  assertIterable(source, 'preview');
  const { rows = DEFAULT_PREVIEW_ROWS } = options;
  assertInteger(rows, 'preview: rows', 1);
  const iterator = asyncIteratorOf(source);
  const records: R[] = [];
  while (records.length < rows) {
    // A failing `next()` has ended the iteration already (the protocol `for await` follows), so no `return()` then.
    const result = await iterator.next();
    if (result.done === true) return new RecordTable(records, true);
    records.push(result.value);
  }
  // Never one `next()` more than the rows: that could buy a page nobody asked to see.
  await iterator.return?.();
  return new RecordTable(records, false);
}
