/**
 * The identity of a parameter set: one walk of an operation. The same params in any order are the
 * same walk, wherever walks are told apart (repeated `--inputs` lines, a resume's matching, dataset
 * marks, shards).
 */
import { hash } from 'node:crypto';

/** A stable name for a parameter set: the same params in any order give the same name. */
export function walkName(params: Readonly<Record<string, string>>): string {
  const sorted = Object.keys(params)
    .sort()
    .map((name) => [name, params[name]]);
  // One-shot: a Hash object a name is garbage with native memory behind it (an `--inputs` file names a million walks).
  return hash('sha256', JSON.stringify(sorted)).slice(0, 16);
}
