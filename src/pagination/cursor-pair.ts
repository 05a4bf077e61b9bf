/**
 * Two continuation values that only work together (E7 reels: `cursor` + `next_page_id`): both are
 * sent, or the walk is over. A page that offers only one of them is reported, not followed.
 */
import { valueAt } from '../operations/extract.ts';
import type { ListRecords, Strategy } from './strategy.ts';
import { described, isCursor, isObject } from './strategy.ts';

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
      const found = records(payload);
      const first = valueAt(payload, rule.from[0]);
      const second = valueAt(payload, rule.from[1]);
      if (isCursor(first) && isCursor(second) && found.length > 0) {
        return { records: found, next: { values: [String(first), String(second)] } };
      }
      const alone = isCursor(first) !== isCursor(second);
      const ignored = alone ? (isCursor(first) ? described(rule.from[0], first) : described(rule.from[1], second)) + ' without its pair' : undefined;
      return { records: found, next: null, ignored };
    },
    isState: (value): value is PairState =>
      isObject(value) &&
      (value.values === undefined ||
        (Array.isArray(value.values) && value.values.length === 2 && value.values.every((v) => typeof v === 'string'))),
  };
}
