/**
 * Web search (E26): a page-number walk, 10 results a page, pages 1 to 11. Pages past the results
 * are empty, and the responses carry no `endpoint` (API reference 2.1).
 */
import { Rng, keyed, pageIndices, sizeOf } from '../data.ts';
import { envelope } from '../envelope.ts';
import { integer, invalid, oneOf, optional, required } from '../params.ts';
import type { SandboxOperation, SandboxRequest } from '../platform.ts';

const PAGE_SIZE = 10;
const LAST_PAGE = 11;
const DATE_POSTED = ['last-hour', 'last-day', 'last-week', 'last-month', 'last-year'] as const;

function result(resource: string, query: string, index: number) {
  const rng = new Rng(resource, index);
  const host = `${rng.words(1)}-${rng.token(4)}.example`;
  const title = `${query}: ${rng.sentence(3, 9)}`;
  const url = `https://${host}/${rng.words(2).replace(/ /g, '-')}`;
  // API reference 2.4: the description may be absent.
  return rng.bool(0.15) ? { title, url } : { title, url, description: rng.sentence(10, 30) };
}

function webSearch(request: SandboxRequest) {
  const { query } = request;
  const text = required(query, 'query');
  const region = optional(query, 'region');
  if (region !== undefined && !/^[A-Za-z]{2}$/.test(region)) invalid('region', region);
  const datePosted = oneOf(query, 'date_posted', DATE_POSTED);
  const page = integer(query, 'page', 1, LAST_PAGE, 1);
  const resource = [request.seed, 'search/search', text, region?.toUpperCase(), datePosted].join('|');
  const total = Math.min(sizeOf(text, 30, PAGE_SIZE * LAST_PAGE), PAGE_SIZE * LAST_PAGE);
  const offset = (page - 1) * PAGE_SIZE;
  const indices = offset < total ? pageIndices(total, PAGE_SIZE, offset, request.duplicates) : [];
  return envelope(null, { results: keyed(indices.map((index) => result(resource, text, index))) });
}

export const operations: SandboxOperation[] = [
  { id: 'search/search', operation: 'web search', handle: webSearch },
];
