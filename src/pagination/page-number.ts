/**
 * Page numbers: `page` + 1 while the `while` flag says yes (E4 `pagination.has_more`), never past
 * `max` (E26 web search: 11), and never after an empty page. A body without the flag (trimmed) goes
 * on while pages have records. The first page is the caller's `page` parameter, or 1. An empty
 * page whose flag still says yes ends the walk, reported.
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
      const found = records(payload) ?? [];
      const more = rule.while === undefined ? undefined : flagOf(valueAt(payload, rule.while));
      if (more !== false && found.length > 0 && state.page < max) return { records: found, next: { page: state.page + 1 } };
      // A page that promises more yet holds none cannot be followed (the next page number may be as empty).
      const ignored = more === true && found.length === 0 && state.page < max ? `${rule.while} = true on page ${state.page}, which holds no records` : undefined;
      return { records: found, next: null, ignored };
    },
    isState: (value): value is PageState =>
      isObject(value) && Number.isSafeInteger(value.page) && (value.page as number) >= 1 && (value.page as number) <= max,
  };
}
