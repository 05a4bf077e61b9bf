/**
 * `npm run demo`: the main job, end to end, on the built-in sandbox. It exports a subforum's posts
 * with the CLI to NDJSON, CSV and Parquet (each a real `socialstream export --sandbox` run), then reads
 * all three files back with DuckDB and prints a summary. No key, no network, no credits.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'out', 'demo');
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

const files = ['posts.ndjson', 'posts.csv', 'posts.parquet'].map((name) => join(outDir, name));
for (const file of files) {
  const args = ['export', 'forum/subforum', 'subforum=typescript-n750', 'sort=new', '--out', file, '--sandbox'];
  console.log(`$ socialstream ${args.join(' ').replace(root + '/', '')}`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), ...args], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`socialstream export exited with ${run.status ?? run.signal}`);
}

const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
const readers: Record<string, string> = {
  'posts.ndjson': `read_json_auto('${files[0]}')`,
  'posts.csv': `read_csv_auto('${files[1]}')`,
  'posts.parquet': `read_parquet('${files[2]}')`,
};
console.log('\nDuckDB reads the three files back:');
for (const [name, reader] of Object.entries(readers)) {
  const summary = await duckdb.runAndReadAll(
    `SELECT count(*) AS posts, count(DISTINCT id) AS distinct_ids, round(avg(score), 1) AS avg_score FROM ${reader}`,
  );
  const [posts, distinct, avgScore] = summary.getRows()[0];
  console.log(`  ${name.padEnd(14)} ${String(posts).padStart(5)} posts, ${String(distinct)} distinct ids, average score ${String(avgScore)}`);
}
const top = await duckdb.runAndReadAll(
  `SELECT score, num_comments, title FROM read_parquet('${files[2]}') ORDER BY score DESC LIMIT 5`,
);
console.log('\nTop posts by score (from the Parquet file):');
for (const [score, comments, title] of top.getRows()) {
  console.log(`  ${String(score).padStart(6)} points ${String(comments).padStart(5)} comments  ${String(title).slice(0, 60)}`);
}
const types = await duckdb.runAndReadAll(
  `SELECT column_type, count(*) AS columns FROM (DESCRIBE SELECT * FROM read_parquet('${files[2]}')) GROUP BY column_type ORDER BY columns DESC`,
);
console.log(`\nParquet column types: ${types.getRows().map(([type, count]) => `${String(count)} ${String(type)}`).join(', ')}`);
console.log(`\nFiles are in ${outDir.replace(root + '/', '')}/`);
