/**
 * A feed of records of one shape (text, numbers, a timestamp, a struct, lists of text and of
 * structs, a bigint, a keyed object, an object keyed by dates) where about one record in
 * `oddOneIn` drifts in one of many ways: a value of another kind or one that holds nothing, a key
 * more or less (in the record, its struct, its list of structs, its map), a `Date`, a bigint, a lone
 * surrogate, a `toJSON`, a hole in a list, an own `__proto__` key. Deterministic in the seed.
 */
import { seededRandom } from '../../helpers/seeded-random.ts';

/** Dates as keys: more distinct ones than the nested layout's threshold, so `daily` is a MAP. */
const DAYS = Array.from({ length: 260 }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10));

/** One record of the feed's shape: text, numbers, a timestamp, a struct, lists of text and of structs, a bigint, a keyed object, a map. */
function regular(i: number): Record<string, unknown> {
  return {
    id: `p${i}`,
    title: `title ${i}, "quoted"`,
    score: i * 3,
    ratio: (i % 100) / 100,
    big: 2n ** 60n + BigInt(i),
    flag: i % 2 === 0,
    created: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    author: { name: `user ${i % 50}`, karma: i % 1000, flair: i % 4 === 0 ? null : 'flair' },
    tags: ['a', `t${i % 7}`],
    awards: i % 3 === 0 ? [] : [{ name: 'gold', count: 1 + (i % 3) }],
    media: null,
    keyed: { '0': `k${i}`, '1': 'k1' },
    daily: Object.fromEntries([DAYS[i % DAYS.length], DAYS[(i * 7) % DAYS.length]].map((day, at) => [day, i + at])),
  };
}

/** A value of another kind than the field's, or one JSON sees otherwise, or one that holds nothing. */
const ODD_VALUES: Array<() => unknown> = [
  () => null,
  () => undefined,
  () => [],
  () => ({}),
  () => 'text',
  () => 42,
  () => 0.5,
  () => true,
  () => 2n ** 70n,
  () => 7n,
  () => new Date(Date.UTC(2025, 5, 1)),
  () => 'lone \ud800 surrogate',
  () => ({ toJSON: () => 'from toJSON' }),
  () => ({ nested: { deeper: 1 } }),
  () => [1, 'two', null],
  () => '2024-02-30T00:00:00.000Z',
  () => Number.NaN,
  () => -0,
  () => '',
  () => [{ name: 'inner', count: 1 }],
  () => ({ name: 'like a struct', karma: 'high' }),
];

/** The feed: regular records, about one in `oddOneIn` drifting in one of many ways. */
export function driftingFeed(seed: number, count: number, oddOneIn: number): Array<Record<string, unknown>> {
  const random = seededRandom(seed);
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  return Array.from({ length: count }, (_, i) => {
    const record = regular(i);
    if (random() * oddOneIn >= 1) return record;
    const key = pick(Object.keys(record));
    switch (Math.floor(random() * 10)) {
      case 0:
        record[key] = pick(ODD_VALUES)();
        break;
      case 1:
        delete record[key];
        break;
      case 2:
        record[pick(['late', 'other', 'dotted.key', 'URL'])] = pick(ODD_VALUES)();
        break;
      case 3:
        (record.author as Record<string, unknown>)[pick(['name', 'karma', 'new'])] = pick(ODD_VALUES)();
        break;
      case 4:
        record.awards = [{ name: 'silver', count: pick(ODD_VALUES)() }, pick(ODD_VALUES)()];
        break;
      case 5: {
        const tags: unknown[] = ['x'];
        tags[3] = pick(ODD_VALUES)();
        record.tags = tags;
        break;
      }
      case 6:
        (record.daily as Record<string, unknown>)[pick(DAYS)] = pick(ODD_VALUES)();
        break;
      case 7:
        record[pick(['constructor', 'toJSON', 'toString'])] = pick(ODD_VALUES)();
        break;
      case 8: {
        const award: Record<string, unknown> = { name: 'bronze', count: 1 };
        award[pick(['extra', 'name', 'count'])] = pick(ODD_VALUES)();
        record.awards = [award, null, { count: 2 }];
        break;
      }
      default:
        Object.defineProperty(record, '__proto__', { value: pick(ODD_VALUES)(), enumerable: true, writable: true, configurable: true });
    }
    return record;
  });
}

