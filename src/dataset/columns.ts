/**
 * The columns a dataset adds to its records' own (docs/datasets.md): the fetch
 * time (`_fetched_at`), the stand-in key (`_key`, and `_stand_in` while staged), the overflow
 * column (`_extra`) and the Hive key (`_date`). A record's own field of one of these names would
 * be overwritten, dropped or would give `_extra` another type in some parts, so a page that
 * carries one is refused, naming it, before it is staged. In any case: DuckDB matches column
 * names without case, so `_Fetched_At` beside `_fetched_at` would read as one column.
 */
import { DatasetError } from '../errors.ts';
import { OVERFLOW_NAME } from '../../sinks/rows.ts';
import { FETCHED_AT } from './buckets.ts';
import { STABLE_KEY, STAND_IN } from './keys.ts';
import type { DatasetPaths, Partitioning } from './store.ts';

/** What each added column is, for the refusal's message. */
const ADDED: ReadonlyMap<string, string> = new Map([
  [FETCHED_AT, 'the time the dataset fetched each row'],
  [STABLE_KEY, 'the stand-in key of records without a key of their own'],
  [STAND_IN, 'the stand-in key a staged record would have had'],
  [OVERFLOW_NAME, 'the column of values no column of theirs holds'],
]);

/** Refuses `records` when one has a top-level field named, in any case, like a column the dataset adds. */
export function checkOwnFields(paths: DatasetPaths, partitioning: Partitioning, records: readonly unknown[]): void {
  const hive = partitioning.column.toLowerCase();
  for (const record of records) {
    if (typeof record !== 'object' || record === null) continue;
    for (const key in record) {
      // Every added name starts with `_` (a dataset of 0.1 keys `date=`): most fields are passed over without lowering their name.
      if (key.charCodeAt(0) !== 95 && hive.charCodeAt(0) === 95) continue;
      const lower = key.toLowerCase();
      const what = lower === hive ? `the name of the dataset's partition folders (${partitioning.column}=…): readers would show the partition in its place` : ADDED.get(lower);
      if (what === undefined) continue;
      const name = lower === hive ? partitioning.column : lower;
      const cased = key === name ? '' : ` (as ${key}: DuckDB matches column names without case)`;
      throw new DatasetError(
        `records of ${paths.operation} have a field ${name}${cased}, ${what}. Nothing of this run was published; ` +
          `rename the field before the dataset (a transform), or export these records to a file, which keeps every field as it is`,
        paths.dir,
      );
    }
  }
}
