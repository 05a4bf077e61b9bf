/**
 * Page numbers: `page` + 1 while the `while` flag says yes (E4 `pagination.has_more`), never past
 * `max` (E26 web search: 11), and never after an empty page. A body without the flag (trimmed) goes
 * on while pages have records. The first page is the caller's `page` parameter, or 1.
 */
import { flagOf, valueAt } from '../operations/extract.ts';
import type { ListRecords, Strategy } from './strategy.ts';
import { isObject } from './strategy.ts';

interface PageState {
  page: number;
}

export interface PageRule {
  param: string;
  while?: string;
  max?: number;
}

export function pageNumberWalk(rule: PageRule, records: ListRecords): Strategy<PageState> {
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  return {
    start: (query) => ({ page: query[rule.param] === undefined ? 1 : Number(query[rule.param]) }),
    query: (state) => ({ [rule.param]: String(state.page) }),
    spends: (state) => String(state.page),
    read(payload, state) {
      const found = records(payload);
      const stop = rule.while !== undefined && flagOf(valueAt(payload, rule.while)) === false;
      return { records: found, next: !stop && found.length > 0 && state.page < max ? { page: state.page + 1 } : null };
    },
    isState: (value): value is PageState =>
      isObject(value) && Number.isSafeInteger(value.page) && (value.page as number) >= 1 && (value.page as number) <= max,
  };
}
