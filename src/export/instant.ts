/**
 * The date grammar of `since` and `until` (options and flags alike): an ISO 8601 date
 * (`2025-10-01`) or time (`2025-10-01T08:30`, `…:15.250Z`, `…+02:00`), read as UTC when it names no
 * offset. Read field by field rather than by `Date.parse`, which takes `2025-02-30` for 2 March and
 * a time without an offset as the machine's local time.
 */

/** How the grammar reads in a message. */
export const INSTANT_GRAMMAR = 'an ISO 8601 date (YYYY-MM-DD, UTC) or time';

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** `text` as Unix ms, or undefined when it is not a date or time of the grammar (or names no real day). */
export function parseInstant(text: string): number | undefined {
  const match = INSTANT.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hours = 0, minutes = 0, seconds = 0] = match.slice(1, 7).map((field) => (field === undefined ? undefined : Number(field)));
  const fraction = match[7] === undefined ? 0 : Math.floor(Number(`0.${match[7]}`) * 1000);
  const offset = offsetMinutes(match[8]);
  if (offset === undefined || month! < 1 || month! > 12 || day! < 1 || day! > daysIn(year!, month!) || hours > 23 || minutes > 59 || seconds > 59) return undefined;
  const at = new Date(0);
  at.setUTCFullYear(year!, month! - 1, day);
  at.setUTCHours(hours, minutes, seconds, fraction);
  return at.getTime() - offset * 60_000;
}

/** A bound as Unix ms: a valid `Date`, or a string of the grammar; undefined for anything else. */
export function instantOf(value: unknown): number | undefined {
  if (value instanceof Date) return Number.isFinite(value.getTime()) ? value.getTime() : undefined;
  return typeof value === 'string' ? parseInstant(value) : undefined;
}

/** `Z` or `±HH[:]MM` as minutes east of UTC; none is UTC. */
function offsetMinutes(zone: string | undefined): number | undefined {
  if (zone === undefined || zone === 'Z') return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(-2));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !leap(year) ? 1 : 0);
}

function leap(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}
