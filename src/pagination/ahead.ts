/**
 * The pages a walk can buy ahead (`Strategy.ahead`), for the two rules that know them before the
 * answers come: independent branches (the forum comment tree) and page numbers with a known end
 * (popular videos' `total_count`, web search's last page). Both wrap a strategy without changing it.
 */
import { valueAt } from '../operations/extract.ts';
import type { Lookahead, Query, Strategy } from './strategy.ts';

/**
 * Every cursor a tree walk already holds is a page it will read, whatever the answers to the others.
 * They are listed by running the strategy's own reading forward from the state (`follow`, `read`
 * without the records): a page bought ahead is read as it came (its nested cursors join the list), a
 * page not yet bought is read as an empty answer, which skips its branch and goes on to the next
 * known cursor. Reusing the strategy's reading keeps the list in exactly the order the walk reads.
 */
export function withBranchesAhead<S>(strategy: Strategy<S>, recordsAt: string): Strategy<S> {
  const empty = recordsAt.split('.').reduceRight<unknown>((inner, step) => ({ [step]: inner }), []);
  const follow = (body: unknown, state: S): S | null => (strategy.follow ? strategy.follow(body, state) : strategy.read(body, state).next);
  const ahead = (state: S, look: Lookahead): Query[] => {
    const queries: Query[] = [];
    let current: S | null = state;
    while (current !== null && queries.length < Math.min(look.max, look.within)) {
      const query = strategy.query(current);
      queries.push(query);
      const body = look.held(query);
      // Past a page not yet here, places in the order are not known: its answer may hold pages that
      // come first. That matters only when the walk may not read them all.
      if (body === undefined && look.within !== Infinity) break;
      try {
        current = follow(body ?? empty, current);
      } catch {
        // A page that cannot be read fails the walk when it gets there; nothing past it is known.
        break;
      }
    }
    return queries;
  };
  return { ...strategy, ahead };
}

export interface KnownEnd {
  /** The page-number parameter. */
  param: string;
  /** The last page there can be. */
  max?: number;
  /** Where a page says how many records the walk holds in all, and how many make a page. */
  total?: string;
  perPage?: string;
}

/**
 * Page numbers are all known once the end is: from a page's total and page size, or, when the caller
 * accepts paying for empty pages (`overfetch`), the rule's last page. Never more pages than the
 * caller's `limit` can use, when the page size says how many that is.
 */
export function withKnownPagesAhead<S>(strategy: Strategy<S>, rule: KnownEnd): Strategy<S> {
  const ahead = (state: S, look: Lookahead): Query[] => {
    const first = Number(strategy.query(state)[rule.param]);
    const total = rule.total === undefined ? undefined : valueAt(look.last, rule.total);
    const perPage = rule.perPage === undefined ? undefined : valueAt(look.last, rule.perPage);
    const sized = typeof perPage === 'number' && Number.isSafeInteger(perPage) && perPage > 0;
    let last = first;
    if (sized && typeof total === 'number' && Number.isFinite(total)) last = Math.ceil(total / perPage);
    else if (look.overfetch && rule.max !== undefined) last = rule.max;
    if (sized && look.wanted !== Infinity) last = Math.min(last, first + Math.ceil(look.wanted / perPage) - 1);
    last = Math.min(last, rule.max ?? last, first + Math.min(look.max, look.within) - 1);
    const queries: Query[] = [];
    for (let page = first; page <= Math.max(first, last); page++) queries.push({ ...strategy.query(state), [rule.param]: String(page) });
    return queries;
  };
  return { ...strategy, ahead };
}
