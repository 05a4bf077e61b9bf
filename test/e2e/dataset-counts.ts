/** What an end-to-end suite checks of a dataset its workers or shards wrote: its rows and distinct ids, as DuckDB reads them. */
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';

/** The rows and distinct ids of the dataset at `dir`, read as the documented glob with `union_by_name`. */
export async function datasetCounts(dir: string): Promise<{ rows: number; ids: number }> {
  const [row] = await query(`SELECT count(*) AS rows, count(DISTINCT id) AS ids FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`);
  return { rows: Number(row.rows), ids: Number(row.ids) };
}
