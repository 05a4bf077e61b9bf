/**
 * Reading a 200 body: finding its payload, following a dotted path, and taking the records of the
 * plain `one` and `list` kinds (the timeline and the comment tree read their own records, in
 * `src/pagination/`). A missing records field is a `ResponseFormatError`: the body does not have the
 * promised shape.
 *
 * The payload sits under `data` (API reference 2.1) or, as the service often answers, at the top level beside
 * `success` and `credits_charged`. The table's paths are written from the top of a `spec`-dialect body
 * (`data.aweme_list`); `payloadPath` makes them relative to the payload, so both forms read alike.
 */
import { ResponseFormatError } from '../errors.ts';
import { setField, unkey, unkeyCollection } from './unkey.ts';

/** Fields of the envelope, never of a record: a single-record payload is yielded without them. */
const ENVELOPE_FIELDS: ReadonlySet<string> = new Set([
  'success', 'credits_used', 'credits_remaining', 'credits_charged', 'endpoint', 'cached', 'cached_at',
]);

/** A table path made relative to the payload: `data.aweme_list` → `aweme_list`, `data` → `''`, `products` as it is. */
export function payloadPath(path: string): string {
  if (path === 'data') return '';
  return path.startsWith('data.') ? path.slice('data.'.length) : path;
}

/**
 * The payload of a 200 body: `body.data` when the body has API reference 2.1's marks (`credits_used`,
 * `endpoint`, or a `data` carrying its own `success`), else the body itself. When the records
 * (`recordsPath`, payload-relative) are not in that one but are in the other, the other is the
 * payload: an envelope missing its marks is still read.
 */
export function payloadOf(body: unknown, recordsPath: string): unknown {
  if (!isObject(body) || !isObject(body.data)) return body;
  const data = body.data;
  const spec = data.success === true || body.credits_used !== undefined || body.endpoint !== undefined;
  const [first, second] = spec ? [data, body] : [body, data];
  if (recordsPath === '' || valueAt(first, recordsPath) !== undefined || valueAt(second, recordsPath) === undefined) return first;
  return second;
}

/** The value at a dotted path (`pagination.has_more`; `''` is `body` itself), or undefined when any step is missing. */
export function valueAt(body: unknown, path: string): unknown {
  if (path === '') return body;
  // One step (a record's `id`): read for every record of every page, so without splitting the path.
  if (!path.includes('.')) return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[path] : undefined;
  let value = body;
  for (const step of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

/**
 * A yes/no flag as the service sends it: `true`/`false`, `1`/`0` (also as text). Undefined when the
 * body has no flag there (absent, null, anything else): the walk then goes by records and cursors.
 */
export function flagOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return undefined;
}

/** The collection at `path` as an array of records (keyed collections unkeyed; `null` is empty). */
export function collectionAt(body: unknown, path: string, endpoint: string): unknown[] {
  const value = valueAt(body, path);
  if (value === null) return [];
  const items = unkeyCollection(value);
  if (items === undefined) throw new ResponseFormatError(`${endpoint}: the response payload has no collection at ${path}`, { endpoint });
  return items;
}

/**
 * The records of a payload for the `one` and `list` kinds; `at` is payload-relative (`payloadPath`).
 * A list that is `null` is `null`: no records, which a walk must not take for an end when a
 * continuation stands beside it.
 */
export function plainRecords(payload: unknown, kind: 'one' | 'list', at: string, endpoint: string): unknown[] | null {
  if (kind === 'list') return valueAt(payload, at) === null ? null : collectionAt(payload, at, endpoint);
  const record = valueAt(payload, at);
  if (!isObject(record)) {
    throw new ResponseFormatError(`${endpoint}: the response has no record at ${at === '' ? 'the payload' : at}`, { endpoint });
  }
  if (at !== '') return [unkey(record)];
  // The payload itself is the record: the envelope's fields beside it (either form) are not part of it.
  const fields: Record<string, unknown> = {};
  for (const name in record) if (!ENVELOPE_FIELDS.has(name)) setField(fields, name, record[name]);
  return [unkey(fields)];
}

/** A JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
