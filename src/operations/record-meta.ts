/**
 * Reading the table's `key`, `stableKey`, `time` and `newestFirst` columns against actual records and
 * params: what identifies a record, when it was created, whether that time can be believed, and
 * whether a walk lists records newest first.
 */
import { createHash } from 'node:crypto';
import { valueAt } from './extract.ts';
import type { OperationSpec, TimeUnit } from './spec.ts';

/** The record's key as text, or undefined when the operation names none or the record lacks it. */
export function keyOf(op: OperationSpec, record: unknown): string | undefined {
  if (op.key === null) return undefined;
  const value = valueAt(record, op.key);
  // A Parquet INT64 key reads back as a bigint: the same key as the number it was written from.
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' ? String(value) : undefined;
}

/**
 * A key for a record without a usable one of its own, from the table's `stableKey`: the walk's naming
 * params and the first field set whose values are all present (strings, numbers or booleans), hashed.
 * Undefined when the operation names no stable key or the record has none of its field sets.
 */
export function stableKeyOf(op: OperationSpec, record: unknown, params: Readonly<Record<string, string>>): string | undefined {
  const spec = op.stableKey;
  if (spec === undefined) return undefined;
  for (const fields of spec.fields) {
    const values = fields.map((field) => valueAt(record, field));
    if (!values.every((value) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) continue;
    const named = (spec.params ?? []).map((param) => params[param] ?? '');
    const text = JSON.stringify([op.id, named, fields, values]);
    return `~${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  }
  return undefined;
}

/**
 * Record times a high-water mark believes: from 2000-01-01 (before any platform of the API opened;
 * zero, -1 and other defaults fall before it) to an hour past the clock (skew between machines).
 * A time outside is kept in the record but moves no mark and stops no walk.
 */
export const PLAUSIBLE_FROM_MS = Date.UTC(2000, 0, 1);
export const FUTURE_SKEW_MS = 60 * 60 * 1000;

/** The record's time when it is plausible (`PLAUSIBLE_FROM_MS` to `now` + `FUTURE_SKEW_MS`), else undefined. */
export function plausibleTimeOf(op: OperationSpec, record: unknown, now: number): number | undefined {
  const time = timeOf(op, record);
  return time !== undefined && time >= PLAUSIBLE_FROM_MS && time <= now + FUTURE_SKEW_MS ? time : undefined;
}

/** The record's own creation time in Unix milliseconds, or undefined when it has none that reads. */
export function timeOf(op: OperationSpec, record: unknown): number | undefined {
  if (op.time === null) return undefined;
  return millisOf(valueAt(record, op.time.at), op.time.unit);
}

function millisOf(value: unknown, unit: TimeUnit): number | undefined {
  if (unit === 'iso') {
    if (typeof value !== 'string') return undefined;
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? ms : undefined;
  }
  // Some services send numeric times as strings; the unit still says how to read them.
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return undefined;
  const ms = unit === 's' ? n * 1000 : n;
  // Past ±8.64e15 ms no Date can hold it: such a time reads as none, not as a partition that cannot be named.
  return Math.abs(ms) <= MAX_DATE_MS ? ms : undefined;
}

/** The largest distance from the epoch a JavaScript Date can stand at (ECMAScript's time range). */
const MAX_DATE_MS = 8.64e15;

/** Whether a walk of `op` with these params lists its records newest first (table `newestFirst`). */
export function isNewestFirst(op: OperationSpec, params: Readonly<Record<string, string>>): boolean {
  const rule = op.newestFirst;
  if (rule === undefined) return false;
  const value = params[rule.param];
  return value === undefined ? rule.byDefault : rule.values.includes(value);
}
