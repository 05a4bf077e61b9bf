/**
 * The 200 body of a scrape operation (API reference 2.1): `success`, `data` (with its own `success`),
 * `credits_used: 1` and, on most operations, `endpoint`. Every platform module builds its bodies
 * here so the envelope and its exceptions live in one place.
 */
export interface Envelope<T extends object> {
  success: true;
  data: { success: true } & T;
  credits_used: 1;
  endpoint?: string;
}

/**
 * Wraps a payload in the envelope. Pass `endpoint` as `null` for the operations API reference 2.1 lists
 * without one (marketplace search and location search, ad-library company ads, subforum posts,
 * web search).
 */
export function envelope<T extends object>(endpoint: string | null, payload: T): Envelope<T> {
  const body: Envelope<T> = { success: true, data: { success: true, ...payload }, credits_used: 1 };
  if (endpoint !== null) body.endpoint = endpoint;
  return body;
}
