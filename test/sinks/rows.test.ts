import { describe, expect, it } from 'vitest';
import { RowLayout, splitColumnName } from '../../sinks/rows.ts';

const plan = (sample: unknown[], typed = true, options = {}): RowLayout => RowLayout.plan(sample, options, typed);
const kinds = (layout: RowLayout): Record<string, string | undefined> =>
  Object.fromEntries(layout.columns.map((column) => [column.name, column.kind]));

describe('the record to row mapping', () => {
  it('flattens nested objects into dotted columns down to maxDepth and keeps deeper ones as JSON', () => {
    const layout = plan([{ a: { b: { c: { d: 1 } } } }], true, { maxDepth: 2 });
    expect(layout.names).toEqual(['a.b', '_extra']);
    expect(layout.toRow({ a: { b: { c: { d: 1 } } } })).toEqual(['{"c":{"d":1}}', null]);
  });

  it('keeps a keyed collection as one JSON value instead of columns named 0, 1, 2', () => {
    const layout = plan([{ list: { '0': 'a', '1': 'b' } }]);
    expect(layout.names).toEqual(['list', '_extra']);
    expect(layout.toRow({ list: { '0': 'a', '1': 'b' } })).toEqual(['{"0":"a","1":"b"}', null]);
  });

  it('escapes dots and backslashes in keys so every column name splits back into its keys', () => {
    const layout = plan([{ 'a.b': 1, a: { b: 2 }, 'c\\': 3 }]);
    expect(layout.names).toEqual(['a\\.b', 'a.b', 'c\\\\', '_extra']);
    expect(layout.names.slice(0, 3).map(splitColumnName)).toEqual([['a.b'], ['a', 'b'], ['c\\']]);
  });

  it('escapes a __proto__ key so it is an ordinary column', () => {
    const record = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
    const layout = plan([record]);
    expect(layout.names).toEqual(['\\__proto__.x', '_extra']);
    expect(splitColumnName(layout.names[0])).toEqual(['__proto__', 'x']);
    expect(layout.toRow(record)).toEqual([1, null]);
  });

  it('widens integers mixed with doubles to double and numbers mixed with text to string', () => {
    const layout = plan([{ n: 1, x: 1 }, { n: 2, x: 1.5 }, { n: 'three', x: 2 }]);
    expect(kinds(layout)).toEqual({ n: 'string', x: 'double' });
    expect(layout.toRow({ n: 2, x: 2 })).toEqual(['2', 2, null]);
  });

  it('gives a column whose kinds no widening joins its commonest kind, the rest going to the overflow cell as they were', () => {
    const layout = plan([{ id: 'p0' }, { id: 'p1' }, { id: true }]);
    expect(kinds(layout)).toEqual({ id: 'string' });
    expect(layout.toRow({ id: 'p2' })).toEqual(['p2', null]);
    expect(layout.toRow({ id: false })).toEqual([null, '{"id":false}']);
  });

  it('sends a value that does not fit its typed column to the overflow cell', () => {
    const layout = plan([{ n: 1 }]);
    expect(layout.toRow({ n: 'one' })).toEqual([null, '{"n":"one"}']);
  });

  it('puts any value in an untyped column as text', () => {
    const layout = plan([{ n: 1 }], false);
    expect(layout.toRow({ n: 'one' })).toEqual(['one', null]);
    expect(layout.toRow({ n: [1] })).toEqual(['[1]', null]);
  });

  it('types a column TIMESTAMP only when every sampled value is an instant that formats back unchanged', () => {
    expect(kinds(plan([{ t: '2024-01-01T00:00:00.000Z' }]))).toEqual({ t: 'timestamp' });
    expect(kinds(plan([{ t: '2024-01-01T00:00:00.000Z' }, { t: '2024-01-01T00:00:00Z' }]))).toEqual({ t: 'string' });
    expect(kinds(plan([{ t: '1969-12-31T23:59:59.000Z' }]))).toEqual({ t: 'string' });
  });

  it('types a column TIMESTAMP only for days and times the calendar has', () => {
    const kindOf = (t: string): string | undefined => kinds(plan([{ t }])).t;
    expect(['2024-02-29T12:00:00.000Z', '2000-02-29T00:00:00.000Z', '1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'].map(kindOf)).toEqual(
      Array(4).fill('timestamp'),
    );
    expect(
      ['2023-02-29T12:00:00.000Z', '2100-02-29T00:00:00.000Z', '2024-04-31T00:00:00.000Z', '2024-13-01T00:00:00.000Z', '2024-01-00T00:00:00.000Z',
        '2024-01-01T24:00:00.000Z', '2024-01-01T00:60:00.000Z', '2024-01-01T00:00:60.000Z'].map(kindOf),
    ).toEqual(Array(8).fill('string'));
  });

  it('types a column TIMESTAMP only for the exact form, each separator and digit in its place', () => {
    const kindOf = (t: string): string | undefined => kinds(plan([{ t }])).t;
    const instant = '2024-01-02T03:04:05.678Z';
    // Each character in turn made a space, a letter, '/' or ':' (the characters just either side of the digits): none is an instant.
    // A ':' put where a ':' stands gives the instant back: that one is left out.
    const broken = [...instant]
      .flatMap((_, at) => [' ', 'x', '/', ':'].map((other) => instant.slice(0, at) + other + instant.slice(at + 1)))
      .filter((text) => text !== instant);
    expect(broken.map(kindOf)).toEqual(Array(broken.length).fill('string'));
    expect(['2024-01-02T03:04:05.678', '2024-01-02T03:04:05.678ZZ', '２024-01-02T03:04:05.678Z'].map(kindOf)).toEqual(Array(3).fill('string'));
    expect(kindOf(instant)).toBe('timestamp');
  });

  it('writes a timestamp cell as the epoch milliseconds of the instant', () => {
    const t = '2024-02-29T23:59:59.123Z';
    expect(plan([{ t }]).toRow({ t })).toEqual([Date.parse(t), null]);
  });

  it('gives a field seen only as null in the sample a column, but not a null above mapped columns', () => {
    const layout = plan([{ a: null, b: null }, { b: { c: 1 } }]);
    expect(layout.names).toEqual(['a', 'b.c', '_extra']);
    expect(layout.toRow({ a: null, b: null })).toEqual([null, null, null]);
  });

  it('keeps an empty object as {} rather than dropping it', () => {
    const layout = plan([{ e: {} }]);
    expect(layout.toRow({ e: {} })).toEqual(['{}', null]);
  });

  it('rejects a record that is not a plain object with a TypeError', () => {
    expect(() => plan([{ a: 1 }]).toRow([1])).toThrow(/A record must be a plain object, got an array/);
  });
});
