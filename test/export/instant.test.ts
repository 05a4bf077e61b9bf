/** The date grammar of `since` and `until` (`src/export/instant.ts`), which the CLI and `exportTo` share. */
import { describe, expect, it } from 'vitest';
import { instantOf, parseInstant } from '../../src/export/instant.ts';

describe('parseInstant', () => {
  it('reads a date as midnight UTC', () => {
    expect(parseInstant('2025-10-01')).toBe(Date.UTC(2025, 9, 1));
  });

  it('reads a time without an offset as UTC, not as the machine local time', () => {
    expect(parseInstant('2025-10-01T08:30')).toBe(Date.UTC(2025, 9, 1, 8, 30));
    expect(parseInstant('2025-10-01 08:30:15.250')).toBe(Date.UTC(2025, 9, 1, 8, 30, 15, 250));
  });

  it('reads an offset, with or without its colon', () => {
    expect(parseInstant('2025-10-01T10:00+02:00')).toBe(Date.UTC(2025, 9, 1, 8));
    expect(parseInstant('2025-10-01T10:00+0200')).toBe(Date.UTC(2025, 9, 1, 8));
    expect(parseInstant('2025-10-01T00:30-01:00')).toBe(Date.UTC(2025, 9, 1, 1, 30));
  });

  it('refuses a day the calendar lacks, and 29 February outside a leap year', () => {
    for (const text of ['2025-02-30', '2025-02-29', '2025-13-01', '2025-04-31', '2100-02-29']) expect(parseInstant(text), text).toBeUndefined();
    expect(parseInstant('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(parseInstant('2000-02-29')).toBe(Date.UTC(2000, 1, 29));
  });

  it('refuses what is no date of the grammar', () => {
    for (const text of ['last month', '2025-10', '2025-10-01T25:00', '2025-10-01T10:61', '20251001', '2025-10-01T10:00+24:00', ' 2025-10-01']) {
      expect(parseInstant(text), text).toBeUndefined();
    }
  });
});

describe('instantOf', () => {
  it('takes a valid Date and refuses an invalid one or another type', () => {
    expect(instantOf(new Date(Date.UTC(2025, 0, 2)))).toBe(Date.UTC(2025, 0, 2));
    expect(instantOf(new Date('nope'))).toBeUndefined();
    expect(instantOf(1_759_276_800_000)).toBeUndefined();
  });
});
