/**
 * Two continuation values that only work together (E7 reels: `cursor` + `next_page_id`): both are
 * sent, or the walk is over. A page that offers only one of them, a value of a shape no cursor has,
 * or both beside records that are `null`, is reported, not followed.
 */
import { valueAt } from '../operations/extract.ts';
import type { ListRecords, Strategy } from './strategy.ts';
import { described, isCursor, isObject, isStrange } from './strategy.ts';

interface PairState {
  /** Absent on the first page. */
  values?: [string, string];
}

export interface PairRule {
  from: readonly [string, string];
  params: readonly [string, string];
}

export function cursorPairWalk(rule: PairRule, records: ListRecords): Strategy<PairState> {
  return {
    start: () => ({}),
    query: (state) => (state.values === undefined ? {} : { [rule.params[0]]: state.values[0], [rule.params[1]]: state.values[1] }),
    spends: (state) => (state.values === undefined ? undefined : JSON.stringify(state.values)),
    read(payload) {
      const listed = records(payload);
      const found = listed ?? [];
      const first = valueAt(payload, rule.from[0]);
      const second = valueAt(payload, rule.from[1]);
      const both = isCursor(first) && isCursor(second);
      if (both && found.length > 0) return { records: found, next: { values: [String(first), String(second)] } };
      return { records: found, next: null, ignored: unfollowed() };

      function unfollowed(): string | undefined {
        if (isStrange(first)) return described(rule.from[0], first);
        if (isStrange(second)) return described(rule.from[1], second);
        if (both) return listed === null ? `${described(rule.from[0], first)} beside records that are null` : undefined;
        if (isCursor(first)) return `${described(rule.from[0], first)} without its pair`;
        if (isCursor(second)) return `${described(rule.from[1], second)} without its pair`;
        return undefined;
      }
    },
    isState: (value): value is PairState =>
      isObject(value) &&
      (value.values === undefined ||
        (Array.isArray(value.values) && value.values.length === 2 && value.values.every((v) => typeof v === 'string'))),
  };
}
