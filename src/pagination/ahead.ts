/**
 * The pages a walk can buy ahead (`Strategy.ahead`), for the two rules that know them before the
 * answers come: independent branches (the forum comment tree) and page numbers with a known end
 * (popular videos' `total_count`, web search's last page). Both wrap a strategy without changing it.
 *
 * Each also says how many of the pages it lists the walk is sure to read (`PagesAhead.needed`): when
 * the caller wants only so many records (`limit`, `take(n)`), a page past an answer not yet come may
 * lie past them, and the walk risks only a few such pages at a time.
 */
import { flagOf, valueAt } from '../operations/extract.ts';
import type { Followed, ListRecords, Lookahead, PagesAhead, Query, Strategy } from './strategy.ts';

/**
 * Every cursor a tree walk already holds is a page it will read, whatever the answers to the others.
 * They are listed by running the strategy's own reading forward from the state (`follow`, `read`
 * without the records): a page bought ahead is read as it came (its nested cursors join the list), a
 * page not yet bought is read as an empty answer, which skips its branch and goes on to the next
 * known cursor. Reusing the strategy's reading keeps the list in exactly the order the walk reads.
 * The records counted on the way are those certain to come before each page; once they cover what
 * the caller wants, no further page is listed.
 */
export function withBranchesAhead<S>(strategy: Strategy<S>, recordsAt: string): Strategy<S> {
  const empty = recordsAt.split('.').reduceRight<unknown>((inner, step) => ({ [step]: inner }), []);
  const follow = (body: unknown, state: S): Followed<S> => {
    if (strategy.follow) return strategy.follow(body, state);
    const read = strategy.read(body, state);
    return { next: read.next, records: read.records.length };
  };
  const ahead = (state: S, look: Lookahead): PagesAhead => {
    const queries: Query[] = [];
    /** Pages up to the first one not yet here are sure to be read; past it, their place is a guess. */
    let needed: number | undefined;
    let before = 0;
    let current: S | null = state;
    while (current !== null && before < look.wanted && queries.length < Math.min(look.max, look.within)) {
      const query = strategy.query(current);
      queries.push(query);
      const body = look.held(query);
      if (body === undefined) {
        // Past a page not yet here, places in the order are not known: its answer may hold pages that
        // come first. That matters only when the walk may not read them all.
        if (look.within !== Infinity) break;
        needed ??= queries.length;
      }
      try {
        const page = follow(body ?? empty, current);
        current = page.next;
        before += page.records;
      } catch {
        // A page that cannot be read fails the walk when it gets there; nothing past it is known.
        break;
      }
    }
    // Listed to the end of what is known, the last page is the top-level frontier.
    return { queries, needed: look.wanted === Infinity ? queries.length : (needed ?? queries.length), frontier: current === null };
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
  /** The has-more flag, which must agree with the total for the total to be believed. */
  while?: string;
}

/**
 * Page numbers are all known once the end is: from a page's total and page size, or, when the caller
 * accepts paying for empty pages (`overfetch`), the rule's last page. Never more pages than the
 * caller's `limit` can use, when the page size says how many that is. A total is believed only
 * while the page read last agrees with it (`pagesByTotal`); otherwise pages are bought one at a time.
 */
export function withKnownPagesAhead<S>(strategy: Strategy<S>, rule: KnownEnd, records: ListRecords): Strategy<S> {
  const ahead = (state: S, look: Lookahead): PagesAhead => {
    const first = Number(strategy.query(state)[rule.param]);
    const known = pagesByTotal(rule, records, look.last, first - 1);
    let last = first;
    if (known !== undefined) last = known.pages;
    else if (look.overfetch && rule.max !== undefined) last = rule.max;
    if (known !== undefined && look.wanted !== Infinity) last = Math.min(last, first + Math.ceil(look.wanted / known.perPage) - 1);
    last = Math.min(last, rule.max ?? last, first + Math.min(look.max, look.within) - 1);
    const queries: Query[] = [];
    for (let page = first; page <= Math.max(first, last); page++) queries.push({ ...strategy.query(state), [rule.param]: String(page) });
    // With a believed total every page is full, so the limit's pages are exactly those listed.
    return { queries, needed: known !== undefined || look.wanted === Infinity ? queries.length : 1 };
  };
  return { ...strategy, ahead };
}

/**
 * The pages a walk holds in all by the total that `body` (page number `page`) states, or undefined
 * unless that page agrees with it: it holds exactly a page size of records (a page that is short
 * while more are promised means the size or the total is not what it says) and its has-more flag,
 * when it has one, says what `page × perPage < total` says. The service's own example of popular
 * videos (1 video on a page of `limit` 10, `total_count` 500, then `has_more: false`) fails both.
 */
function pagesByTotal(rule: KnownEnd, records: ListRecords, body: unknown, page: number): { pages: number; perPage: number } | undefined {
  if (body === undefined || rule.total === undefined || rule.perPage === undefined) return undefined;
  const total = valueAt(body, rule.total);
  const perPage = valueAt(body, rule.perPage);
  if (!isCount(total) || !isCount(perPage) || perPage === 0) return undefined;
  let held;
  try {
    held = records(body);
  } catch {
    return undefined;
  }
  if (held === null || held.length !== perPage) return undefined;
  const more = rule.while === undefined ? undefined : flagOf(valueAt(body, rule.while));
  if (more !== undefined && more !== page * perPage < total) return undefined;
  return { pages: Math.ceil(total / perPage), perPage };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
