/**
 * The search engine's ad-transparency library: a company's public ads (E17), 40 per page behind an
 * opaque `data.cursor`. Its responses carry no `endpoint` (API reference 2.1).
 */
import { EPOCH_SECONDS } from '../clock.ts';
import { Rng, decodeCursor, encodeCursor, isoFromSeconds, keyed, pageIndices, recordSeconds, sizeOf } from '../data.ts';
import { envelope } from '../envelope.ts';
import { invalid, isoDate, oneOf, optional } from '../params.ts';
import { SandboxValidationError, type SandboxOperation, type SandboxRequest } from '../platform.ts';

const PAGE_SIZE = 40;
const DAY = 86_400;

/** Midnight UTC of a `YYYY-MM-DD` date as Unix seconds. */
function seconds(date: string | undefined): number | undefined {
  return date === undefined ? undefined : Date.parse(`${date}T00:00:00Z`) / 1000;
}

function companyAds(request: SandboxRequest) {
  const { query } = request;
  const domain = optional(query, 'domain');
  const advertiserId = optional(query, 'advertiser_id');
  if (domain === undefined && advertiserId === undefined) {
    throw new SandboxValidationError('Missing required parameter: domain or advertiser_id');
  }
  const topic = oneOf(query, 'topic', ['all', 'political'], 'all');
  const region = optional(query, 'region');
  if (region !== undefined && !/^[A-Za-z]{2}$/.test(region)) invalid('region', region);
  // API reference E17: political ads are only listed per region.
  if (topic === 'political' && region === undefined) throw new SandboxValidationError('Missing required parameter: region');
  const startDate = isoDate(query, 'start_date');
  const endDate = isoDate(query, 'end_date');
  if (startDate !== undefined && endDate !== undefined && endDate < startDate) invalid('end_date', endDate);
  const start = seconds(startDate);
  const end = seconds(endDate);

  const identifier = domain ?? advertiserId ?? '';
  const resource = [request.seed, 'company-ads', domain, advertiserId, topic, region, start, end].join('|');
  const total = sizeOf(identifier) + request.growth;
  const offset = decodeCursor(resource, query.get('cursor'));
  const advertiserRng = new Rng(request.seed, 'company-ads/advertiser', identifier);
  const advertiser = {
    id: advertiserId ?? `AR${advertiserRng.digits(20)}`,
    name: advertiserRng.words(2).replace(/\b\w/g, (c) => c.toUpperCase()) + ' Inc.',
    domain: domain ?? `${advertiserRng.words(1)}-${advertiserRng.token(4)}.example`,
  };
  // Shown dates fall inside the requested window (the last two years by default).
  const windowEnd = end ?? Math.max(EPOCH_SECONDS, start ?? 0);
  const windowStart = start ?? windowEnd - 730 * DAY;

  const ads = pageIndices(total, PAGE_SIZE, offset, request.duplicates, request.growth).map((index) => {
    const rng = new Rng(resource, index);
    const creativeId = `CR${rng.digits(20)}`;
    const format = rng.pick(['image', 'video', 'text'] as const);
    // An ad `advance()` added is first shown by the clock, inside the window asked for, and never shown after the clock.
    const lastDay = index < 0 ? Math.min(end === undefined ? Infinity : end + DAY - 1, request.clock.now) : windowEnd + DAY - 1;
    const dated = recordSeconds(request.clock, rng, index, () => rng.int(windowStart, windowEnd));
    const firstShown = index < 0 ? Math.min(Math.max(dated, windowStart), lastDay) : dated;
    const lastShown = Math.min(lastDay, firstShown + rng.int(0, 90 * DAY));
    return {
      advertiserId: advertiser.id,
      creativeId,
      adUrl: `https://search-ad-library.example/advertiser/${advertiser.id}/creative/${creativeId}${region ? `?region=${region.toUpperCase()}` : ''}`,
      advertiserName: advertiser.name,
      domain: advertiser.domain,
      format,
      imageUrl: format === 'text' || rng.bool(0.2) ? null : `https://ads-images.search-ad-library.example/${creativeId}.png`,
      firstShown: isoFromSeconds(firstShown),
      lastShown: isoFromSeconds(lastShown),
    };
  });
  const next = offset + PAGE_SIZE;
  return envelope(null, { ads: keyed(ads), ...(next < total ? { cursor: encodeCursor(resource, next) } : {}) });
}

export const operations: SandboxOperation[] = [
  { id: 'search-ad-library/company-ads', operation: 'company ads', handle: companyAds },
];
