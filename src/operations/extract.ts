/**
 * Reading a 200 body: following a dotted path, and taking the records of the plain `one` and
 * `list` kinds (the timeline and the comment tree read their own records, in `src/pagination/`).
 * A missing records field is a `ResponseFormatError`: the body does not have the promised shape.
 */
import { ResponseFormatError } from '../errors.ts';
import type { RecordsSpec } from './spec.ts';
import { unkey, unkeyCollection } from './unkey.ts';

/** The value at a dotted path (`data.pagination.has_more`), or undefined when any step is missing. */
export function valueAt(body: unknown, path: string): unknown {
  let value = body;
  for (const step of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

/** A yes/no flag as the API sends it: `true` or `1` mean yes; anything else, or absence, means no. */
export function isYes(flag: unknown): boolean {
  return flag === true || flag === 1;
}

/** The collection at `path` as an array of records (keyed collections unkeyed). */
export function collectionAt(body: unknown, path: string, endpoint: string): unknown[] {
  const items = unkeyCollection(valueAt(body, path));
  if (items === undefined) throw new ResponseFormatError(`${endpoint}: the response has no collection at ${path}`, { endpoint });
  return items;
}

/** The records of a page for the `one` and `list` kinds. */
export function plainRecords(body: unknown, spec: RecordsSpec, endpoint: string): unknown[] {
  if (spec.kind === 'list') return collectionAt(body, spec.at, endpoint);
  const record = valueAt(body, spec.at);
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new ResponseFormatError(`${endpoint}: the response has no record at ${spec.at}`, { endpoint });
  }
  if (spec.at !== 'data') return [unkey(record)];
  // `data` carries the envelope's own `success` flag beside the payload (SPEC 2.1): not part of the record.
  const { success: _envelopeFlag, ...payload } = record as Record<string, unknown>;
  return [unkey(payload)];
}
