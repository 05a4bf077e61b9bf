/**
 * Every record a Parquet file holds comes back as it went in, in both layouts, for records no
 * hand-written case foresaw: seeded random records whose keys recur with kinds that drift
 * (integers, fractions, bigints past 2^53, text, instants, booleans, objects, lists, objects keyed
 * by date), with keys that are hard to name (`a.b`, `__proto__`, the empty key, `URL` beside
 * `url`), read back by the reader a dataset's merge and a file's fix-up use (`sinks/read-back.ts`).
 *
 * "As it went in" is up to what docs/types.md says a file may change, and nothing else:
 * - a number or bigint in a column that widened to text comes back as its digits;
 * - `null`, `[]`, `{}` (and objects and lists of only those) in a field no value typed come back
 *   absent or NULL, and NULL and absent are the same in a file.
 * Samples of 3, 40 and 1,000 records, so fields are typed from the sample, after it, and by the
 * fix-up at close. A failure names the seed, the record and each path that differs.
 */
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { toParquet } from '../../sinks/index.ts';
import { readParquetRecords } from '../../sinks/read-back.ts';
import { seededRandom } from '../helpers/seeded-random.ts';
import { scratchDir } from './helpers/files.ts';

const dir = scratchDir();

const KEYS = ['id', 'a', 'b', 'a.b', 'url', 'URL', '__proto__', '', 'x y', 'é', '_extra', 'n', 'list', 'm', 'ts', 'toJSON', 'constructor', '0', '-1'];
const TEXTS = ['', 'p0', 'hello', '12', '1.5', 'ünï', '\u{1F600}', 'a\nb', '"q"', 'null', 'true'];
const NOT_QUITE_INSTANTS = ['2024-01-01T00:00:00Z', '2024-01-01T00:00:00.5Z', '2024-01-01 00:00:00', '2024-02-30T00:00:00.000Z', '2024-01-01'];

function recordsOf(seed: number, count: number): Array<Record<string, unknown>> {
  const random = seededRandom(seed);
  const pick = <T>(from: readonly T[]): T => from[Math.floor(random() * from.length)];
  const scalar = (): unknown =>
    pick<() => unknown>([
      () => null,
      () => random() < 0.5,
      () => Math.floor(random() * 100),
      () => Math.floor(random() * 1000) / 8,
      () => 2n ** 60n + BigInt(Math.floor(random() * 1000)),
      () => -(2 ** 53) + 1,
      () => pick(TEXTS),
      () => new Date(Date.UTC(2020, 0, 1) + Math.floor(random() * 1e11)).toISOString(),
      () => pick(NOT_QUITE_INSTANTS),
      () => 0.81,
      () => 1e21,
    ])();
  const keyedByDate = (): Record<string, unknown> =>
    Object.fromEntries(Array.from({ length: 150 + Math.floor(random() * 100) }, (_, i) => [`2024-${1 + (i % 12)}-${1 + (i % 28)}#${i}`, random() < 0.5 ? i : null]));
  const value = (depth: number): unknown => {
    const r = random();
    if (depth > 3 || r < 0.55) return scalar();
    if (r < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    if (r < 0.78) return keyedByDate();
    return object(depth + 1);
  };
  const object = (depth: number): Record<string, unknown> => {
    const fields: Record<string, unknown> = {};
    for (let i = Math.floor(random() * 5); i > 0; i--) {
      // defineProperty: a key `__proto__` stays a field, as JSON.parse makes it.
      Object.defineProperty(fields, pick(KEYS), { value: value(depth), enumerable: true, writable: true, configurable: true });
    }
    return fields;
  };
  // Ids are text for the first third, then integers: the column widens to text of the digits.
  return Array.from({ length: count }, (_, i) => ({ ...object(0), id: i < count / 3 ? `r${i}` : i }));
}

/** A value that types nothing: null, `[]`, `{}`, and lists and objects of only those. */
function holdsNothing(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.every(holdsNothing);
  return typeof value === 'object' && Object.values(value).every(holdsNothing);
}

/** Where `got` differs from `wanted` beyond what a file may change (this module's comment), by path. */
function differences(wanted: unknown, got: unknown, path = ''): string[] {
  if (Object.is(wanted, got)) return [];
  if (got === null && holdsNothing(wanted)) return [];
  if ((typeof wanted === 'number' || typeof wanted === 'bigint') && typeof got === 'string' && got === String(wanted)) return [];
  const show = (value: unknown) => inspect(value, { depth: 4, breakLength: Infinity });
  if (typeof wanted !== 'object' || typeof got !== 'object' || wanted === null || got === null || Array.isArray(wanted) !== Array.isArray(got)) {
    return [`${path}: wanted ${show(wanted)}, got ${show(got)}`];
  }
  if (Array.isArray(wanted)) {
    const list = got as unknown[];
    if (wanted.length !== list.length) return [`${path}: wanted ${show(wanted)}, got ${show(got)}`];
    return wanted.flatMap((item, i) => differences(item, list[i], `${path}[${i}]`));
  }
  const [want, have] = [wanted as Record<string, unknown>, got as Record<string, unknown>];
  return [...new Set([...Object.keys(want), ...Object.keys(have)])].flatMap((key) => {
    const at = `${path}[${JSON.stringify(key)}]`;
    if (Object.hasOwn(want, key) && Object.hasOwn(have, key)) return differences(want[key], have[key], at);
    if (Object.hasOwn(want, key)) return holdsNothing(want[key]) ? [] : [`${at}: lost ${show(want[key])}`];
    return holdsNothing(have[key]) ? [] : [`${at}: added ${show(have[key])}`];
  });
}

describe('a Parquet file gives back every record of drifting, hard-to-name data', () => {
  for (const layout of ['nested', 'flat'] as const) {
    for (const sampleSize of [3, 40, 1_000]) {
      it(`in the ${layout} layout, sampled from ${sampleSize} records (4 seeds of 1,200 records)`, async () => {
        for (const seed of [2, 6, 36, 101 + sampleSize]) {
          const records = recordsOf(seed, 1_200);
          const path = join(dir, `round-trip-${layout}-${sampleSize}-${seed}.parquet`);
          await toParquet(records, path, { layout, sampleSize });
          const found: string[] = [];
          let index = 0;
          for await (const record of readParquetRecords(path)) {
            for (const difference of differences(records[index], record)) found.push(`seed ${seed}, record ${index}${difference}`);
            index++;
          }
          expect(found.slice(0, 5)).toEqual([]);
          expect(index).toBe(records.length);
        }
      });
    }
  }
});
