/**
 * The kinds a column of records holds and how they join: the rule the sinks type a file's and a
 * dataset's columns by, and the one a notebook's preview shows them by. It lies in the client's tree
 * so both can import it (the client never imports the sinks); docs/types.md tells it in words.
 */

/**
 * `integer` holds safe integers; `bigint` holds every integer within int64 exactly, `number`s and
 * `bigint`s alike (both INT64 in Parquet).
 */
export const COLUMN_KINDS = ['integer', 'bigint', 'double', 'boolean', 'string', 'timestamp', 'json'] as const;
/**
 * The kind of a column a dataset schema records: `integer`, `bigint`, `double`, `boolean`,
 * `string`, `timestamp` or `json`.
 */
export type ColumnKind = (typeof COLUMN_KINDS)[number];

/** The int64 range: a bigint within it is a `bigint` cell (Parquet INT64); one beyond it is the text of its digits. */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function isInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

/** The kind of column a JSON value makes (a function or symbol, which JSON cannot carry, is the caller's to refuse). */
export function valueKind(value: unknown): ColumnKind {
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isSafeInteger(value) ? 'integer' : 'double';
    case 'bigint':
      // Past int64 no integer holds it: it is the text of its digits (docs/guide/big-integers.md).
      return isInt64(value) ? 'bigint' : 'string';
    case 'string':
      return timestampOf(value) === undefined ? 'string' : 'timestamp';
    default:
      return 'json';
  }
}

/**
 * The type lattice every layout, the dataset schema and the preview share (docs/types.md): the
 * narrowest kind that holds values of both `a` and `b`, or `undefined` when no widening holds both
 * (then the values of the other kind go to `_extra`). Integers join bigints in an exact `bigint`
 * (INT64); integers and doubles make `double` (a bigint then does not fit and goes to `_extra` with
 * its digits); numbers and text make `string` (the digits); ISO instants and other text make
 * `string`. Booleans and JSON text join nothing but themselves.
 */
export function joinKinds(a: ColumnKind, b: ColumnKind): ColumnKind | undefined {
  if (a === b) return a;
  const pair = new Set([a, b]);
  const numeric = (kind: ColumnKind) => kind === 'integer' || kind === 'bigint' || kind === 'double';
  if (numeric(a) && numeric(b)) return pair.has('double') ? 'double' : 'bigint';
  const textual = (kind: ColumnKind) => kind === 'string' || kind === 'timestamp';
  if ((textual(a) || numeric(a)) && (textual(b) || numeric(b))) return 'string';
  return undefined;
}

const HYPHEN = 0x2d;
const COLON = 0x3a;

/** Only `YYYY-MM-DDTHH:mm:ss.sssZ`: the one form that comes back unchanged from a TIMESTAMP. */
export function timestampOf(text: string): number | undefined {
  // Each separator is looked at in its place, and each digit as it is read: no regular expression.
  if (text.length !== 24) return undefined;
  if (text.charCodeAt(4) !== HYPHEN || text.charCodeAt(7) !== HYPHEN || text.charCodeAt(10) !== 0x54 /* T */) return undefined;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return undefined;
  if (text.charCodeAt(19) !== 0x2e /* . */ || text.charCodeAt(23) !== 0x5a /* Z */) return undefined;
  // Read the fields straight from the character codes: this runs once per cell of every timestamp
  // column, and building a Date to format it back was the Parquet sink's costliest step. `digits`
  // is -1 where a field holds anything but digits.
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const millisecond = digits(text, 20, 3);
  // Only a real instant formats back unchanged: no 2025-02-30, no 24:00 or :60. Before 1970 stays
  // text, as the README promises: a rule from parquetjs-lite's own TIMESTAMP_MILLIS conversion, which
  // refuses negative values (sinks/parquet-columns.ts would encode them; lifting the rule is a choice).
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millisecond < 0) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
}

/** The number `count` decimal digits at `start` spell, or -1 if any of them is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
