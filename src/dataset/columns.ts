/**
 * The columns a dataset adds to its records' own (docs/datasets.md): the fetch time (`_fetched_at`), the stand-in key
 * (`_key`, and `_stand_in` while staged), the overflow column (`_extra`) and the Hive key (`_date`). A record's own
 * field of one of these names, in any case (DuckDB matches column names without case, so `_Fetched_At` beside
 * `_fetched_at` would read as one column), is kept whole in `_extra` under its own path (`json_extract(_extra,
 * '$._fetched_at')`), and the dataset's column keeps its meaning: the run goes on, nothing is overwritten or dropped.
 * Admission moves such fields into the record's field `_extra` (`holdOwnFields`), which the part writers write into the
 * `_extra` column and a merge reads back so (`parts.ts` `HeldNames`).
 */
import type { HeldNames } from './parts.ts';
import { joinName, OVERFLOW_NAME } from '../../sinks/rows.ts';
import { isPlainObject, type PlainObject } from '../../sinks/values.ts';
import { FETCHED_AT } from './buckets.ts';
import { STABLE_KEY, STAND_IN } from './keys.ts';
import type { Partitioning } from './store.ts';

/** The names (lower case) a dataset of `partitioning` adds: its record fields of these names are kept in `_extra`. */
export function heldNames(partitioning: Pick<Partitioning, 'column'>): HeldNames {
  return new Set([FETCHED_AT, STABLE_KEY, STAND_IN, OVERFLOW_NAME, partitioning.column.toLowerCase()]);
}

/**
 * `record` with its own top-level fields of `held` names (in any case) moved into its field `_extra`, by path, as the
 * values bound for the overflow column; the same object when it has none (most records: only names with `_` are looked at).
 */
export function holdOwnFields(record: unknown, held: HeldNames): unknown {
  if (!isPlainObject(record)) return record;
  let kept: PlainObject | undefined;
  let holder: PlainObject | undefined;
  for (const key in record) {
    if (!isHeld(key, held)) continue;
    kept ??= { ...record };
    delete kept[key];
    (holder ??= {})[joinName(undefined, key)] = record[key];
  }
  if (kept === undefined) return record;
  kept[OVERFLOW_NAME] = holder;
  return kept;
}

function isHeld(key: string, held: HeldNames): boolean {
  // Every added name starts with `_`, but the Hive key of a dataset of 0.1 (`date=`) with `d` or `D` (`| 32` lowers it):
  // most fields are passed over without lowering their name.
  const first = key.charCodeAt(0);
  return (first === 95 || (first | 32) === 100) && held.has(key.toLowerCase());
}
