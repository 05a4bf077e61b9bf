/**
 * A single continuation value sent back as one parameter: `cursor`, `after`, `continuationToken`,
 * `max_cursor` (integer). With a `while` flag (`has_more`, `has_next_page`) a flag that says no ends
 * the walk even when a cursor is still given (last pages often carry one). A body without the flag
 * (trimmed bodies) goes on while the page had records and a cursor this walk has not used. An absent
 * cursor or an empty page ends the walk; an empty page whose flag still says yes is reported, not
 * followed, and so are a cursor of a shape no cursor has (`after: {"next": "x"}`) and a cursor beside
 * records that are `null` (an empty page, or records the service failed to send).
 */
import { flagOf, valueAt } from '../operations/extract.ts';
import type { ListRecords, PageRead, Strategy } from './strategy.ts';
import { described, isCursor, isObject, isStrange } from './strategy.ts';

interface CursorState {
  /** Absent on the first page. Integer cursors stay numbers; one past 2^53 is kept as its digits (a state is JSON). */
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
    read(payload): PageRead<CursorState> {
      const listed = records(payload);
      const found = listed ?? [];
      const cursor = valueAt(payload, rule.from);
      const more = rule.while === undefined ? undefined : flagOf(valueAt(payload, rule.while));
      if (more === false) return { records: found, next: null };
      if (!isCursor(cursor)) {
        const ignored = isStrange(cursor)
          ? described(rule.from, cursor)
          : more === true
            ? `${rule.while} = true without a usable ${rule.from}`
            : undefined;
        return { records: found, next: null, ignored };
      }
      if (listed === null) return { records: found, next: null, ignored: `${described(rule.from, cursor)} beside records that are null` };
      if (found.length === 0) return { records: found, next: null, ignored: more === true ? described(rule.from, cursor) : undefined };
      return { records: found, next: { cursor: typeof cursor === 'bigint' ? String(cursor) : cursor }, followIfNew: rule.while !== undefined && more === undefined };
    },
    isState: (value): value is CursorState =>
      isObject(value) && (value.cursor === undefined || typeof value.cursor === 'string' || typeof value.cursor === 'number'),
  };
}
