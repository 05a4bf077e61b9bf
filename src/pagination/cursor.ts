/**
 * A single continuation value sent back as one parameter: `data.cursor`, `data.after`,
 * `data.continuationToken`, `data.max_cursor` (integer). With a `while` flag (`has_more`,
 * `has_next_page`) the walk also stops when the flag says no. An absent value or an empty page ends it.
 */
import { isYes, valueAt } from '../operations/extract.ts';
import type { ListRecords, Strategy } from './strategy.ts';
import { isObject } from './strategy.ts';

interface CursorState {
  /** Absent on the first page. Integer cursors stay numbers. */
  cursor?: string | number;
}

export interface CursorRule {
  from: string;
  param: string;
  while?: string;
}

export function cursorWalk(rule: CursorRule, records: ListRecords): Strategy<CursorState> {
  return {
    start: () => ({}),
    query: (state) => (state.cursor === undefined ? {} : { [rule.param]: String(state.cursor) }),
    spends: (state) => (state.cursor === undefined ? undefined : String(state.cursor)),
    read(body) {
      const found = records(body);
      const cursor = valueAt(body, rule.from);
      const more = rule.while === undefined || isYes(valueAt(body, rule.while));
      const usable = typeof cursor === 'string' ? cursor !== '' : typeof cursor === 'number' && Number.isFinite(cursor);
      return { records: found, next: more && usable && found.length > 0 ? { cursor: cursor as string | number } : null };
    },
    isState: (value): value is CursorState =>
      isObject(value) && (value.cursor === undefined || typeof value.cursor === 'string' || typeof value.cursor === 'number'),
  };
}
