/**
 * The fetch clock's rule (`src/dataset/fetch-clock.ts`, docs/datasets.md "One row per record"): stamps of
 * the service's second, a microsecond apart within it, and older versions' stamps below them all.
 */
import { describe, expect, it } from 'vitest';
import { compareFetchTimes, FetchClock } from '../../src/dataset/fetch-clock.ts';

const SECOND = Date.parse('2026-11-29T03:12:29Z');

describe('the fetch clock', () => {
  it('stamps pages the service answered in one second in the order they come, a microsecond apart, and a later second at its start', () => {
    const clock = new FetchClock(() => 0);
    expect([clock.stamp(SECOND + 900), clock.stamp(SECOND), clock.stamp(SECOND + 2_000)]).toEqual([
      '2026-11-29T03:12:29.000000Z',
      '2026-11-29T03:12:29.000001Z',
      '2026-11-29T03:12:31.000000Z',
    ]);
  });

  it('stamps after a stamp it observed in the dataset, and by the local clock when the service gave no time', () => {
    const clock = new FetchClock(() => SECOND + 5_000);
    clock.observe('2026-11-29T03:12:29.000041Z');
    expect(clock.stamp(SECOND)).toBe('2026-11-29T03:12:29.000042Z');
    expect(clock.stamp(undefined)).toBe('2026-11-29T03:12:34.000000Z');
  });

  it('ranks a stamp of an older version (a local clock, three digits) or none below every stamp of the clock', () => {
    expect(compareFetchTimes('2999-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000000Z')).toBeLessThan(0);
    expect(compareFetchTimes(null, '2999-01-01T00:00:00.000Z')).toBeLessThan(0);
    expect(compareFetchTimes('2026-11-29T03:12:29.000002Z', '2026-11-29T03:12:29.000001Z')).toBeGreaterThan(0);
  });
});
