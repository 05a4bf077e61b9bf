/** Records of the search engine's ad-transparency library (API reference 2.4): company ads (E17). */
import type { KeyedCollection, ScrapeEnvelopeWithoutEndpoint } from './common.ts';

/**
 * A public ad of a company: a record of `searchAdLibrary.companyAds` (E17 `data.ads` item).
 * Ad text is read from the creative by optical character recognition.
 */
export interface CompanyAd {
  advertiserId: string;
  creativeId: string;
  adUrl: string;
  advertiserName: string;
  /** Null on many ads the service returns. */
  domain: string | null;
  format: 'image' | 'video' | 'text';
  imageUrl: string | null;
  /** ISO 8601. */
  firstShown: string;
  /** ISO 8601. */
  lastShown: string;
}

/** E17 response: a page of ads (no `endpoint`, API reference 2.1); `cursor` is absent on the last page. */
export type CompanyAdsPage = ScrapeEnvelopeWithoutEndpoint<{
  ads: KeyedCollection<CompanyAd>;
  cursor?: string;
}>;
