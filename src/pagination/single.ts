/**
 * One request, one page: profiles, transcripts, location search and other unpaged operations. A
 * payload that offers a continuation all the same (a `cursor`, `has_more: true`) is reported: the
 * service may have started paging an operation this table reads as one page.
 */
import { flagOf, valueAt } from '../operations/extract.ts';
import type { ListRecords, Strategy } from './strategy.ts';
import { described, isCursor, isObject } from './strategy.ts';

type SingleState = Record<string, never>;

/** Where the service puts continuations on the operations it pages. */
const CURSOR_FIELDS = ['cursor', 'next_cursor', 'max_cursor', 'after', 'continuationToken', 'next_page_id'];
const MORE_FLAGS = ['has_more', 'has_next_page', 'pagination.has_more'];

export function singlePage(records: ListRecords): Strategy<SingleState> {
  return {
    start: () => ({}),
    query: () => ({}),
    spends: () => undefined,
    read: (payload) => ({ records: records(payload) ?? [], next: null, ignored: strayContinuation(payload) }),
    isState: (value): value is SingleState => isObject(value) && Object.keys(value).length === 0,
  };
}

function strayContinuation(payload: unknown): string | undefined {
  for (const field of CURSOR_FIELDS) {
    const value = valueAt(payload, field);
    if (isCursor(value)) return described(field, value);
  }
  for (const field of MORE_FLAGS) {
    if (flagOf(valueAt(payload, field)) === true) return described(field, true);
  }
  return undefined;
}
