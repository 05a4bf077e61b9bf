/** The part files of a dataset, as a test reads them one by one (arrow-rs, Polars part by part). */
import { readdirSync } from 'node:fs';
import { join, sep } from 'node:path';

/** Every `*.parquet` file under the dataset `dir` (never its state under `_dataset/`), sorted by path. */
export function datasetParts(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((name) => name.endsWith('.parquet') && !name.startsWith(`_dataset${sep}`))
    .map((name) => join(dir, name))
    .sort();
}
