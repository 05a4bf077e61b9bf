/**
 * Field-type assertions for the sandbox suites: a record is checked against the types API reference 2.4
 * lists for it, and every mismatch is reported by field name at once, so a failure says exactly
 * which field drifted from the API reference.
 */
import { expect } from 'vitest';
import type { Body } from './helpers.ts';

/**
 * `seconds` and `millis` are Unix times (integers in a plausible range, so one cannot pass for the
 * other); `iso` is ISO 8601 with a UTC offset; `keyed` is a API reference 2.2 keyed collection. Join types
 * with `|`, e.g. `'string|null'`; a trailing `?` (`'string?'`) lets the field be absent.
 */
export type FieldType =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'object'
  | 'array'
  | 'keyed'
  | 'iso'
  | 'seconds'
  | 'millis'
  | 'null';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function isType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isSafeInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'keyed': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
      return Object.keys(value).every((key, index) => key === String(index));
    }
    case 'iso':
      return typeof value === 'string' && ISO_8601.test(value) && !Number.isNaN(Date.parse(value));
    case 'seconds':
      return Number.isSafeInteger(value) && (value as number) > 1e9 && (value as number) < 4e9;
    case 'millis':
      return Number.isSafeInteger(value) && (value as number) > 1e12 && (value as number) < 4e12;
    case 'null':
      return value === null;
  }
}

/** The fields of `record` that do not have their listed type (empty when all match). */
export function fieldMismatches(record: Body, fields: Record<string, string>): string[] {
  const wrong: string[] = [];
  for (const [name, spec] of Object.entries(fields)) {
    const optional = spec.endsWith('?');
    const types = (optional ? spec.slice(0, -1) : spec).split('|') as FieldType[];
    if (!(name in record)) {
      if (!optional) wrong.push(`${name}: missing`);
      continue;
    }
    const value = record[name];
    if (!types.some((type) => isType(value, type))) wrong.push(`${name}: ${JSON.stringify(value)?.slice(0, 60)} is not ${spec}`);
  }
  return wrong;
}

/** Asserts every record has every listed field with its type. */
export function expectFields(records: Body | Body[], fields: Record<string, string>): void {
  const list = Array.isArray(records) ? records : [records];
  expect(list.length).toBeGreaterThan(0);
  const wrong = new Set<string>();
  for (const record of list) for (const problem of fieldMismatches(record, fields)) wrong.add(problem);
  expect([...wrong]).toEqual([]);
}

/** Asserts a nullable field is really exercised: `null` on some records and a value on others. */
export function expectSometimesNull(records: Body[], field: string): void {
  const values = records.map((record) => record[field]);
  expect(values.some((value) => value === null), `${field} is never null`).toBe(true);
  expect(values.some((value) => value !== null), `${field} is always null`).toBe(true);
}
