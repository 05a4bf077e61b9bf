/**
 * Recipe: the public ads of several companies from the ad-transparency library, swept concurrently
 * into one Parquet file, with the balance checked before and after.
 *
 *   npx tsx recipes/ad-library-sweep.ts
 *
 * Without SOCIALSTREAM_API_KEY it runs on the built-in sandbox (synthetic data, no credits).
 */
import { createClient, mergeMap, pipe } from 'socialstream';
import { startSandbox } from 'socialstream/sandbox';
import { toParquet } from 'socialstream/sinks';

const DOMAINS = ['shoes.example', 'coffee.example', 'bikes.example', 'books.example', 'tea.example'];
const OUT = 'out/company-ads.parquet';

const sandbox = process.env.SOCIALSTREAM_API_KEY ? undefined : await startSandbox();
const client = createClient(sandbox && { apiKey: sandbox.apiKey, baseUrl: sandbox.url });

const before = await client.credits();
const ads = pipe(
  DOMAINS,
  mergeMap((domain: string) => client.searchAdLibrary.companyAds({ domain, start_date: '2025-01-01', end_date: '2025-06-30' }), {
    concurrency: 4,
  }),
);
const written = await toParquet(ads, OUT);
const after = await client.credits();
console.log(`${written.records} ads from ${DOMAINS.length} companies → ${written.path}`);
console.log(`balance ${before.credits} → ${after.credits} (${before.credits - after.credits} credits)`);

await client.close();
await sandbox?.close();
