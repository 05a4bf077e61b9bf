/**
 * Recipe: marketplace listings around a city, found by name with location search first.
 *
 *   npx tsx recipes/marketplace-near-city.ts
 *
 * Without SOCIALSTREAM_API_KEY it runs on the built-in sandbox (synthetic data, no credits).
 * Two steps: one request turns the city name into coordinates, then every page of listings around them.
 */
import { createClient, filter, pipe } from 'socialstream';
import { startSandbox } from 'socialstream/sandbox';
import { toNdjson } from 'socialstream/sinks';

const CITY = 'Austin';
const OUT = 'out/marketplace-listings.ndjson';

const sandbox = process.env.SOCIALSTREAM_API_KEY ? undefined : await startSandbox();
const client = createClient(sandbox && { apiKey: sandbox.apiKey, baseUrl: sandbox.url });

let place;
for await (const location of client.socialnetMarketplace.locationSearch({ query: CITY })) {
  place = location;
  break;
}
if (!place) throw new Error(`no location found for ${CITY}`);
console.log(`${place.name}: ${place.latitude}, ${place.longitude}`);

const listings = pipe(
  client.socialnetMarketplace.search({ lat: place.latitude, lng: place.longitude, query: 'bike' }),
  filter((listing) => !listing.is_sold),
);
const written = await toNdjson(listings, OUT);
console.log(`${written.records} unsold listings → ${written.path} (${client.stats.credits} credits)`);

await client.close();
await sandbox?.close();
