/**
 * Two continuation values that only work together (E7 reels: `cursor` + `next_page_id`): both are
 * sent, or the walk is over.
 */
import { valueAt } from '../operations/extract.ts';
import type { ListRecords, Strategy } from './strategy.ts';
import { isObject } from './strategy.ts';

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
    read(body) {
      const found = records(body);
      const first = valueAt(body, rule.from[0]);
      const second = valueAt(body, rule.from[1]);
      const both = typeof first === 'string' && first !== '' && typeof second === 'string' && second !== '';
      return { records: found, next: both && found.length > 0 ? { values: [first, second] } : null };
    },
    isState: (value): value is PairState =>
      isObject(value) &&
      (value.values === undefined ||
        (Array.isArray(value.values) && value.values.length === 2 && value.values.every((v) => typeof v === 'string'))),
  };
}
