/**
 * Shapes shared by every platform's records: JSON values, keyed collections, the response envelope,
 * and `WireForm`, which turns a record as the client yields it back into its shape on the wire.
 *
 * Records are typed as the client yields them (keyed collections already arrays, API reference 2.2), because
 * that is what users hold. Raw pages (`stream.pages()`) keep the body as sent, so their types are
 * derived from the record types with `WireForm` rather than written twice.
 */

/**
 * Any JSON value: the type of fields the API reference names without a type or shape. The client passes them on
 * as they come, except that a non-empty keyed collection anywhere inside becomes an array, so a
 * narrower guess could be wrong either way. Fields the API reference calls keyed collections are real arrays.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [field: string]: JsonValue };

/**
 * An object the API reference names without listing its fields (e.g. `videoDetails`, `menu_items`). It stays an
 * object: it is not a keyed collection, so the client leaves it as it came.
 */
export interface JsonObject {
  readonly [field: string]: unknown;
}

/**
 * A list as the API sends it (API reference 2.2): an object keyed by consecutive decimal strings from `"0"`.
 * An empty list is `{}`.
 */
export interface KeyedCollection<T> {
  readonly [index: string]: T;
}

/**
 * The wire shape of a client-side record: every array becomes a keyed collection, at any depth.
 * Only for records whose arrays are all keyed collections on the wire; the API reference 2.2 exceptions
 * (shop products, microblog timeline) have their page types written out instead.
 */
export type WireForm<T> = T extends readonly (infer Item)[]
  ? KeyedCollection<WireForm<Item>>
  : T extends object
    ? { [K in keyof T]: WireForm<T[K]> }
    : T;

/** The 200 body of a scrape operation (API reference 2.1); `data` carries its own `success: true`. */
export interface ScrapeEnvelope<Data> {
  success: true;
  data: Data & { success: true };
  /** Credits charged for this request: 1 for every documented operation. */
  credits_used: number;
  /** Operation identifier, `<platform>/<operation>`. */
  endpoint: string;
}

/**
 * The envelope of the operations whose responses carry no `endpoint` (API reference 2.1): marketplace
 * search and location search, ad-library company ads, subforum posts and web search.
 */
export type ScrapeEnvelopeWithoutEndpoint<Data> = Omit<ScrapeEnvelope<Data>, 'endpoint'>;
