/**
 * Recipe: every video of a few creators, to one Parquet file, then a DuckDB query over it.
 *
 *   npm install @duckdb/node-api   # once: the query needs it
 *   npx tsx recipes/creator-videos-to-parquet.ts
 *
 * Without SOCIALSTREAM_API_KEY it runs on the built-in sandbox (synthetic data, no credits).
 * Edit HANDLES and the query; the videos of all creators are walked three at a time.
 */
import { createClient, map, mergeMap, pipe } from 'socialstream';
import { startSandbox } from 'socialstream/sandbox';
import { toParquet } from 'socialstream/sinks';

// DuckDB only reads the result back; socialstream does not depend on it: `npm install @duckdb/node-api`.
const { DuckDBInstance } = await import('@duckdb/node-api').catch((error: NodeJS.ErrnoException) => {
  if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  console.error('This recipe reads its output with DuckDB, which is not installed: npm install @duckdb/node-api');
  process.exit(1);
});

const HANDLES = ['creator-n95', 'baker-n40', 'traveller-n61'];
const OUT = 'out/creator-videos.parquet';

const sandbox = process.env.SOCIALSTREAM_API_KEY ? undefined : await startSandbox();
const client = createClient(sandbox && { apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxConcurrentRequests: 3 });

// One walk per handle, merged; each video keeps the handle it was asked for.
const videos = pipe(
  HANDLES,
  mergeMap((handle: string) => pipe(client.shortvideo.videos({ handle }), map((video) => ({ handle, ...video }))), { concurrency: 3 }),
);
const written = await toParquet(videos, OUT);
console.log(`${written.records} videos → ${written.path} (${written.bytes} bytes, ${client.stats.credits} credits)`);

// The file keeps each video's shape (docs/guide/first-export.md): `author` and `statistics` are structs, URL lists are lists.
const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
const perHandle = await duckdb.runAndReadAll(`
  SELECT handle, any_value(author.nickname) AS nickname, count(*)::INTEGER AS videos,
    sum(statistics.play_count)::BIGINT AS plays, to_timestamp(min(create_time)) AS first_video
  FROM read_parquet('${OUT}') GROUP BY handle ORDER BY videos DESC`);
console.table(perHandle.getRowObjectsJS());
const avatars = await duckdb.runAndReadAll(`
  SELECT handle, unnest(author.avatar_thumb.url_list) AS avatar FROM read_parquet('${OUT}') LIMIT 2`);
console.table(avatars.getRowObjectsJS());

await client.close();
await sandbox?.close();
