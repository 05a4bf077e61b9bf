/**
 * What an export's `transform` gives, checked before it is staged: an iterable of records, each an
 * object that JSON can hold. JSON.stringify would otherwise throw a bare TypeError on a cycle, and
 * silently drop a function or a symbol (or a whole record, for undefined), losing data without a word.
 * A `bigint` is a value like any other (staged as its digits).
 */
import { TransformError } from '../errors.ts';
import type { AnyIterable } from '../operators/types.ts';

/** Where a transformed record came from, for the message. */
export interface TransformedRecord {
  /** The transform, by its function name. */
  transform: string;
  /** 1-based, among the records the transform gave for this page. */
  index: number;
  page: number;
  /** `forum/subforum subforum=typescript`. */
  walk: string;
}

/** The transform's output, when it is an iterable; a `TransformError` naming it otherwise. */
export function transformedRecords(output: unknown, transform: string): AnyIterable<unknown> {
  const iterable = typeof output === 'object' && output !== null && (Symbol.asyncIterator in output || Symbol.iterator in output);
  if (!iterable) throw new TransformError(`transform ${transform} returned ${kindOf(output)}, not an iterable of records (e.g. an async generator, or pipe(records, …))`);
  return output as AnyIterable<unknown>;
}

/** Throws a `TransformError` naming the record when `record` is not one an export can stage. */
export function checkTransformed(record: unknown, whereFrom: () => TransformedRecord): void {
  const problem = typeof record === 'object' && record !== null && !Array.isArray(record) ? problemIn(record, '', []) : `is ${kindOf(record)}, not an object`;
  if (problem === undefined) return;
  const where = whereFrom();
  throw new TransformError(
    `transform ${where.transform}: record ${where.index} it gave for page ${where.page} of ${where.walk} ${problem}; an export stages objects JSON can hold`,
  );
}

/** What JSON could not hold in `value` (at `path`), or undefined; `above` are the objects it lies in. */
function problemIn(value: object, path: string, above: object[]): string | undefined {
  if (above.includes(value)) return `refers to itself (${path || 'the record'})`;
  // A value with toJSON (a Date, a Buffer) is written as toJSON says.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  above.push(value);
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, index) => [`${path}[${index}]`, item]) : Object.entries(value).map(([key, item]) => [`${path}.${key}`, item]);
  for (const [at, item] of entries) {
    if (typeof item === 'function' || typeof item === 'symbol') return `holds a ${typeof item} at ${at}`;
    if (typeof item === 'object' && item !== null) {
      const problem = problemIn(item, at, above);
      if (problem !== undefined) return problem;
    }
  }
  above.pop();
  return undefined;
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
