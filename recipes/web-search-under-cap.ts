/**
 * Recipe: all 11 pages of web search for several queries, never spending more than a credit cap.
 *
 *   npx tsx recipes/web-search-under-cap.ts
 *
 * Without SOCIALSTREAM_API_KEY it runs on the built-in sandbox (synthetic data, no credits).
 * `creditCap` counts every request the merged walks make (retries too) and ends them all cleanly at
 * the cap; the results fetched until then are all written.
 */
import { createClient, creditCap, map, mergeMap, pipe } from 'socialstream';
import { startSandbox } from 'socialstream/sandbox';
import { toCsv } from 'socialstream/sinks';

const QUERIES = ['duckdb parquet', 'typescript streams', 'social data api', 'credit budgeting'];
const MAX_CREDITS = 25;
const OUT = 'out/web-search.csv';

const sandbox = process.env.SOCIALSTREAM_API_KEY ? undefined : await startSandbox();
const client = createClient(sandbox && { apiKey: sandbox.apiKey, baseUrl: sandbox.url });

const results = pipe(
  QUERIES,
  mergeMap((query: string) => pipe(client.search.web({ query }), map((result, rank) => ({ query, rank: rank + 1, ...result }))), {
    concurrency: 2,
  }),
  creditCap(MAX_CREDITS),
);
const written = await toCsv(results, OUT);
console.log(`${written.records} results → ${written.path}; ${client.stats.requests} requests under a cap of ${MAX_CREDITS}`);

await client.close();
await sandbox?.close();
