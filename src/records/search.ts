/** Records of the web search engine (API reference 2.4): web results (E26). */
import type { KeyedCollection, ScrapeEnvelopeWithoutEndpoint } from './common.ts';

/** A web page found by a search: a record of `search.web` (E26 `data.results` item). */
export interface WebResult {
  title: string;
  url: string;
  /** May be absent. */
  description?: string;
}

/**
 * E26 response: one page of results (no `endpoint`, API reference 2.1). Pages past the results are empty
 * (`results: {}`).
 */
export type WebSearchPage = ScrapeEnvelopeWithoutEndpoint<{
  results: KeyedCollection<WebResult>;
}>;
