/** One request, one page: profiles, transcripts, location search and other unpaged operations. */
import type { ListRecords, Strategy } from './strategy.ts';
import { isObject } from './strategy.ts';

type SingleState = Record<string, never>;

export function singlePage(records: ListRecords): Strategy<SingleState> {
  return {
    start: () => ({}),
    query: () => ({}),
    spends: () => undefined,
    read: (body) => ({ records: records(body), next: null }),
    isState: (value): value is SingleState => isObject(value) && Object.keys(value).length === 0,
  };
}
