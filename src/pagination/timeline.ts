/**
 * Microblog comments (E16). Records are the post results inside `instructions[].entries[]`; cursor
 * entries are skipped. `data.cursor.bottom` is always present, even after the last page, so the
 * walk goes on only while a page gave post entries the page before did not: the page after the
 * last one has none, and a page that only repeats the previous boundary adds nothing new. A cursor
 * that is not text, after a page of new entries, is reported rather than taken for the end.
 */
import { ResponseFormatError } from '../errors.ts';
import { stringifyExact } from '../exact-json.ts';
import { valueAt } from '../operations/extract.ts';
import { unkey } from '../operations/unkey.ts';
import type { Strategy } from './strategy.ts';
import { described, isObject } from './strategy.ts';

interface TimelineState {
  /** Absent on the first page. */
  cursor?: string;
  /** Entry ids of the page before, to tell new entries from a repeated boundary. */
  previous: string[];
}

export interface TimelineRule {
  /** Where the instructions array is. */
  at: string;
  from: string;
  param: string;
}

export function timelineWalk(rule: TimelineRule, endpoint: string): Strategy<TimelineState> {
  return {
    start: () => ({ previous: [] }),
    query: (state) => (state.cursor === undefined ? {} : { [rule.param]: state.cursor }),
    spends: (state) => state.cursor,
    read(body, state) {
      const posts = postEntries(valueAt(body, rule.at), rule.at, endpoint);
      const seen = new Set(state.previous);
      const fresh = posts.some((post) => !seen.has(post.id));
      const cursor = valueAt(body, rule.from);
      const next = fresh && typeof cursor === 'string' && cursor !== '' ? { cursor, previous: posts.map((post) => post.id) } : null;
      const ignored = fresh && next === null && cursor !== undefined && cursor !== null && cursor !== '' ? described(rule.from, cursor) : undefined;
      return { records: posts.map((post) => post.record), next, ignored };
    },
    isState: (value): value is TimelineState =>
      isObject(value) &&
      (value.cursor === undefined || typeof value.cursor === 'string') &&
      Array.isArray(value.previous) &&
      value.previous.every((id) => typeof id === 'string'),
  };
}

interface PostEntry {
  id: string;
  record: unknown;
}

function postEntries(instructions: unknown, at: string, endpoint: string): PostEntry[] {
  if (!Array.isArray(instructions)) {
    throw new ResponseFormatError(`${endpoint}: the response has no instructions array at ${at}`, { endpoint });
  }
  const posts: PostEntry[] = [];
  for (const instruction of instructions) {
    const entries = isObject(instruction) ? instruction.entries : undefined;
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      const result = valueAt(entry, 'content.itemContent.tweet_results.result');
      if (valueAt(entry, 'content.entryType') !== 'TimelineTimelineItem' || !isObject(result)) continue;
      const entryId = valueAt(entry, 'entryId');
      // Exact: a `rest_id` sent as a number past 2^53 is a `bigint`, which `JSON.stringify` refuses.
      posts.push({ id: typeof entryId === 'string' ? entryId : (stringifyExact(result.rest_id) ?? ''), record: unkey(result) });
    }
  }
  return posts;
}
