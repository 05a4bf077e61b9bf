/**
 * Feed faults: what real newest-first feeds serve besides new posts in order — a post pinned at the
 * top, a garbage time, a time in the year 9999, a post older than its place says, a post without its id. The fault kinds
 * of the same names (`SandboxFaults`) turn them on; the listings that walk newest first
 * (`forum/subforum`, `videosite/channel/shorts`) apply them. Which records they touch is a pure
 * function of the record's index, so a record is odd on every request or on none.
 */
import { isoFromSeconds } from './data.ts';
import type { FeedFaults } from './platform.ts';

/** 9999-12-31T23:59:59Z: the far-future time of the `futureTime` fault. */
const YEAR_9999_SECONDS = 253_402_300_799;
/** Sent for a garbage time where the field is ISO text: it reads as no date at all. */
const GARBAGE_ISO = '0000-00-00T00:00:00Z';

/** Which feed fault bends the time of the record at `index` (negative for records `advance()` added). */
export function oddTime(feed: FeedFaults | undefined, index: number): 'garbage' | 'future' | 'late' | undefined {
  if (feed === undefined) return undefined;
  if (feed.garbageTime === true && nth(index, 37, 3)) return 'garbage';
  if (feed.futureTime === true && nth(index, 41, 5)) return 'future';
  if (feed.outOfOrder === true && nth(index, 43, 7)) return 'late';
  return undefined;
}

/** Every `n`-th index (at `at` modulo `n`), negative ones included. */
function nth(index: number, n: number, at: number): boolean {
  return ((index % n) + n) % n === at;
}

/** The Unix seconds a record at `index` shows, its own `seconds` unless a feed fault bends them. */
export function feedSeconds(feed: FeedFaults | undefined, index: number, seconds: number): number {
  switch (oddTime(feed, index)) {
    case 'garbage':
      return -1;
    case 'future':
      return YEAR_9999_SECONDS;
    case 'late':
      return seconds - 400 * 86_400;
    default:
      return seconds;
  }
}

/** The same as ISO text (a garbage time is text that reads as no date). */
export function feedIso(feed: FeedFaults | undefined, index: number, seconds: number): string {
  return oddTime(feed, index) === 'garbage' ? GARBAGE_ISO : isoFromSeconds(feedSeconds(feed, index, seconds));
}

/** The `pinned` fault: the first page of a listing starts with its oldest record. */
export function withPinned(indices: number[], feed: FeedFaults | undefined, offset: number, total: number, growth: number): number[] {
  return feed?.pinned === true && offset === 0 && total > 0 ? [total - 1 - growth, ...indices] : indices;
}

/** The `keyless` fault: whether the record at `index` comes with its key null. */
export function keyless(feed: FeedFaults | undefined, index: number): boolean {
  return feed?.keyless === true && nth(index, 29, 11);
}
