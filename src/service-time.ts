/**
 * The time the service said it answered a page (its `Date` response header, whole seconds), carried
 * with the page's parsed body from the transport to whoever stages its records: a dataset orders the
 * versions of a record by it (`src/dataset/fetch-clock.ts`), so that writers whose clocks disagree
 * still agree which fetch came later. It rides on the body as a symbol, invisible to JSON and to
 * every reader of the body's fields, so the layers between (retries, pages bought ahead) pass it on
 * untouched.
 */

const SERVED_AT = Symbol('socialstream.servedAt');

/** `body` marked with the time of its `Date` header, when the body is an object and the header a readable date. */
export function markServedAt(body: unknown, date: string | string[] | undefined): unknown {
  const ms = typeof date === 'string' ? Date.parse(date) : Number.NaN;
  if (Number.isFinite(ms) && typeof body === 'object' && body !== null) Object.defineProperty(body, SERVED_AT, { value: ms, enumerable: false });
  return body;
}

/** Unix milliseconds the service answered `body` at, or undefined (no header, unreadable, or a body held from an earlier run). */
export function servedAtOf(body: unknown): number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as { [SERVED_AT]?: unknown })[SERVED_AT];
  return typeof value === 'number' ? value : undefined;
}
