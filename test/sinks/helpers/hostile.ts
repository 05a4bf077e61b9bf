/** Records built to break a naive CSV or Parquet writer; deterministic in the index. */
export const LATE_FIELD_AT = 5_000;
export const CONFLICT_AT = 5_500;

const TEXTS = [
  'plain',
  'comma, inside',
  'quote " inside',
  'line\nbreak',
  'crlf\r\nbreak',
  'emoji 😀🎉 and ünïcödé',
  'tab\tinside',
  ' leading and trailing ',
  '"',
  ',',
  '\\ back\\slash',
];

export function hostileRecord(i: number): Record<string, unknown> {
  const record: Record<string, unknown> = {
    seq: i,
    text: TEXTS[i % TEXTS.length],
    emptyOrNull: i % 3 === 0 ? '' : i % 3 === 1 ? null : 'x',
    big: (2n ** 53n + BigInt(i)).toString(),
    ratio: i / 7,
    flag: i % 2 === 0,
    when: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    author: { name: `user ${i}`, id: String(i), stats: { followers: i * 10, deep: { deeper: { deepest: i } } } },
    tags: i % 4 === 0 ? [] : ['a', 'b,c', { nested: [i] }],
    keyed: { '0': { id: `k${i}` }, '1': { id: 'k1' } },
    'dotted.key': i,
    weird: { 'a.b': 1, 'back\\slash': 'x', '': 'empty key' },
    maybeObject: i % 5 === 0 ? null : { v: i },
    emptyObject: {},
    mixed: i % 10 === 0 ? 'ten' : i,
    conflict: i < CONFLICT_AT ? i : `text ${i}`,
  };
  if (i >= LATE_FIELD_AT) record.late = { field: i, list: [i, 'x'] };
  return record;
}

export function hostileRecords(count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => hostileRecord(i));
}
