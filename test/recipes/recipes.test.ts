/**
 * Every recipe runs as a user would run it (`npx tsx recipes/NAME.ts`, no key set, so on the built-in
 * sandbox), and its output file is read back by an independent reader.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { queryWithDuckDb, readCsvWithPython, readNdjson } from '../cli/readers.ts';
import { query } from '../sinks/helpers/duckdb.ts';

const root = resolve(import.meta.dirname, '../..');
const out = join(root, 'out');

function runRecipe(name: string): string {
  const env = { ...process.env };
  delete env.SOCIALSTREAM_API_KEY;
  delete env.SOCIALSTREAM_BASE_URL;
  return execFileSync(process.execPath, ['--import', 'tsx', join(root, 'recipes', `${name}.ts`)], { cwd: root, env, encoding: 'utf8' });
}

beforeAll(() => rmSync(out, { recursive: true, force: true }));

describe('the recipes, run on the sandbox', () => {
  it('are all covered here', () => {
    const recipes = readdirSync(join(root, 'recipes')).filter((name) => name.endsWith('.ts'));
    expect(recipes.sort()).toEqual(
      [
        'ad-library-sweep.ts',
        'creator-videos-to-parquet.ts',
        'demo.ts',
        'hourly-subforum-dataset.ts',
        'marketplace-near-city.ts',
        'subforum-week-deduped.ts',
        'video-comments-to-csv.ts',
        'web-search-under-cap.ts',
      ].sort(),
    );
  });

  it("creator-videos-to-parquet writes every creator's videos and queries them with DuckDB", async () => {
    const printed = runRecipe('creator-videos-to-parquet');
    expect(printed).toContain('196 videos');
    const rows = await queryWithDuckDb(join(out, 'creator-videos.parquet'), 'SELECT handle, count(*)::INTEGER AS n FROM FILE GROUP BY handle ORDER BY handle');
    expect(rows).toEqual([
      { handle: 'baker-n40', n: 40 },
      { handle: 'creator-n95', n: 95 },
      { handle: 'traveller-n61', n: 61 },
    ]);
  });

  it('video-comments-to-csv writes every comment of every page to a CSV that Python reads', () => {
    runRecipe('video-comments-to-csv');
    const rows = readCsvWithPython(join(out, 'video-comments.csv'));
    expect(rows).toHaveLength(430);
    expect(new Set(rows.map((row) => row.id)).size).toBe(430);
  });

  it('hourly-subforum-dataset buys only new pages on later pulls and keeps each post once', async () => {
    const printed = runRecipe('hourly-subforum-dataset');
    // 40 new posts an hour, 25 a page: 2 pages, the second also reaching the previous pull's newest post.
    expect(printed).toMatch(/pull 2: 2 pages bought, 40 new posts/);
    expect(printed).toMatch(/pull 3: 2 pages bought, 40 new posts/);
    const glob = join(out, 'subforum-dataset', '**', '*.parquet').replace(/'/g, "''");
    const [row] = await query(`SELECT count(*)::INTEGER AS n, count(DISTINCT id)::INTEGER AS posts FROM read_parquet('${glob}', hive_partitioning = true)`);
    expect(row).toEqual({ n: 380, posts: 380 });
  });

  it('subforum-week-deduped drops the repeated records and keeps each post once', () => {
    const printed = runRecipe('subforum-week-deduped');
    const ids = readNdjson(join(out, 'subforum-week.ndjson')).map((post) => post.id);
    expect(ids).toHaveLength(480);
    expect(new Set(ids).size).toBe(480);
    expect(printed).toMatch(/[1-9]\d* repeats dropped/);
  });

  it('marketplace-near-city finds the city first, then writes only unsold listings around it', () => {
    const printed = runRecipe('marketplace-near-city');
    expect(printed).toMatch(/^Austin: /);
    const listings = readNdjson(join(out, 'marketplace-listings.ndjson'));
    expect(listings.length).toBeGreaterThan(0);
    expect(listings.every((listing) => listing.is_sold === false)).toBe(true);
  });

  it('web-search-under-cap stops at the credit cap with every result fetched', () => {
    const printed = runRecipe('web-search-under-cap');
    expect(printed).toContain('25 requests under a cap of 25');
    const rows = readCsvWithPython(join(out, 'web-search.csv'));
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((row) => row.query)).size).toBeGreaterThan(1);
  });

  it('ad-library-sweep writes the ads of every company and spends one credit a page', async () => {
    const printed = runRecipe('ad-library-sweep');
    const [row] = await queryWithDuckDb(join(out, 'company-ads.parquet'), 'SELECT count(*)::INTEGER AS n, count(DISTINCT domain)::INTEGER AS domains FROM FILE');
    expect(row.domains).toBe(5);
    expect(printed).toContain(`${String(row.n)} ads from 5 companies`);
  });

  it('the demo exports three formats with the CLI and summarises them with DuckDB', () => {
    const printed = runRecipe('demo');
    expect(printed.match(/750 posts, 750 distinct ids/g)).toHaveLength(3);
    expect(printed).toContain('Top posts by score');
    expect(printed).toMatch(/Parquet column types: .*BIGINT.*VARCHAR|Parquet column types: .*VARCHAR.*BIGINT/);
  });
});
