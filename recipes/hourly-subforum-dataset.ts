/**
 * Recipe: an hourly pull of a subforum into a dataset, and DuckDB questions over everything pulled.
 *
 *   npx tsx recipes/hourly-subforum-dataset.ts
 *
 * Run it every hour (cron `0 * * * *`). `sort: 'new'` lists posts newest first, so each pull stops
 * at the first page that reaches the newest post of the pull before: it buys only the new pages,
 * plus at most one. Posts are merged by id (a post seen again replaces its row, with its new score)
 * and filed under `_date=` (the month) of their own creation time. The same from the command line:
 *
 *   socialstream export forum/subforum subforum=typescript sort=new trim=true --dataset out/subforum-dataset
 *
 * Without SOCIALSTREAM_API_KEY it runs on the built-in sandbox, starting from an empty dataset, and
 * lets three hours pass (`sandbox.advance`) so that you see the later pulls buy only new pages.
 */
import { rm } from 'node:fs/promises';
import { createClient } from 'socialstream';
import { startSandbox } from 'socialstream/sandbox';
import { describeSummary, toDataset } from 'socialstream/export';

const SUBFORUM = 'typescript-n300';
const DIR = 'out/subforum-dataset';
/** New posts per simulated hour on the sandbox. */
const POSTS_PER_HOUR = 40;

const sandbox = process.env.SOCIALSTREAM_API_KEY ? undefined : await startSandbox();
const client = createClient(sandbox && { apiKey: sandbox.apiKey, baseUrl: sandbox.url });
if (sandbox) await rm(DIR, { recursive: true, force: true });

const pulls = sandbox ? 3 : 1;
for (let pull = 1; pull <= pulls; pull++) {
  if (pull > 1) sandbox?.advance({ records: POSTS_PER_HOUR });
  // `resume: true` on every pull: a pull that was killed half way continues; a finished one starts the next.
  const summary = await toDataset(client.forum.subforum({ subforum: SUBFORUM, sort: 'new', timeframe: 'day', trim: true }), DIR, { resume: true });
  const { added = 0, updated = 0 } = summary.dataset ?? {};
  console.log(`pull ${pull}: ${summary.pages} pages bought, ${added} new posts, ${updated} updated`);
  console.log(describeSummary(summary));
}
await client.close();
await sandbox?.close();

const parts = `${DIR}/**/*.parquet`;
// DuckDB is how this recipe asks questions, not something the dataset needs: any Parquet reader works.
let duckdb: typeof import('@duckdb/node-api') | undefined;
try {
  duckdb = await import('@duckdb/node-api');
} catch {
  console.log(
    `DuckDB queries skipped: the package @duckdb/node-api is not installed (npm install @duckdb/node-api). ` +
      `The dataset is in ${DIR}; read it with any Parquet reader, e.g. pyarrow.dataset.dataset('${DIR}', partitioning='hive').`,
  );
}
if (duckdb) {
  const db = await (await duckdb.DuckDBInstance.create(':memory:')).connect();
  const table = `read_parquet('${parts}', hive_partitioning = true, union_by_name = true)`;
  const ask = async (question: string, sql: string) => {
    console.log(question);
    console.table((await db.runAndReadAll(sql)).getRowObjectsJS());
  };
  await ask('Every post once?', `SELECT count(*)::INTEGER AS rows, count(DISTINCT id)::INTEGER AS posts FROM ${table}`);
  await ask('Posts per month:', `SELECT _date::VARCHAR AS month, count(*)::INTEGER AS posts FROM ${table} GROUP BY _date ORDER BY _date`);
  await ask(
    'Top posts by score:',
    `SELECT title, score::INTEGER AS score, num_comments::INTEGER AS comments, to_timestamp(created_utc)::VARCHAR AS created FROM ${table} ORDER BY score DESC LIMIT 5`,
  );
}
