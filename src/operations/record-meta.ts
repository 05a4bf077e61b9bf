/**
 * Reading the table's `key`, `time` and `newestFirst` columns against actual records and params:
 * what identifies a record, when it was created, and whether a walk lists records newest first.
 */
import { valueAt } from './extract.ts';
import type { OperationSpec, TimeUnit } from './spec.ts';

/** The record's key as text, or undefined when the operation names none or the record lacks it. */
export function keyOf(op: OperationSpec, record: unknown): string | undefined {
  if (op.key === null) return undefined;
  const value = valueAt(record, op.key);
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
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
