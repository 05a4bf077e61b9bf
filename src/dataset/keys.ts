/**
 * What keys a dataset's rows: a record's own key, else the stand-in (`stableKey`) it was staged with.
 */
import { keyOf } from '../operations/record-meta.ts';
import type { OperationSpec } from '../operations/spec.ts';

/** Records without a usable key are keyed by the operation's `stableKey`, kept in this column. */
export const STABLE_KEY = '_key';
/**
 * A staged record that has a key of its own keeps here the stable key it would have had without
 * one: a version kept under that stand-in is the same record (`moves.ts`). Staging only:
 * a publish takes it off before the record reaches a part.
 */
export const STAND_IN = '_stand_in';

/** A row's key: the operation's own, else the stable key it was staged with. */
export function keyOfRow(op: OperationSpec, row: Record<string, unknown>): string | undefined {
  const own = keyOf(op, row);
  if (own !== undefined) return own;
  const stable = row[STABLE_KEY];
  return typeof stable === 'string' ? stable : undefined;
}

/** How the versions of a key a pass or rewrite leaves out are named: the partition and the key its row is kept under. */
export function dropKey(partition: string, key: string): string {
  return `${partition}\u0000${key}`;
}
