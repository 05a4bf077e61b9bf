/**
 * A JSON cell's text (`jsonText`: the flat layout's lists and objects, CSV's): some of it is built
 * without `JSON.stringify`, and must be the text `JSON.stringify` (with lone surrogates repaired)
 * writes, character for character, for every list, whatever its strings hold.
 */
import { describe, expect, it } from 'vitest';
import { stringifyExact } from '../../src/exact-json.ts';
import { Repairs, wellFormedJson } from '../../sinks/strings.ts';
import { jsonText } from '../../sinks/values.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

/** Pieces that JSON writes as they are, and every kind it escapes or repairs. */
const PIECES = ['data', 'é', '東京', '🎉', ' ', '', '"', '\\', '\n', '\t', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udfff', '/', "'", '\ufffd', 'a"b'];

function expected(value: object): { text: string; repaired: number } {
  const repairs = new Repairs();
  return { text: wellFormedJson(stringifyExact(value)!, repairs), repaired: repairs.count };
}

function actual(value: object): { text: string; repaired: number } {
  const repairs = new Repairs();
  return { text: jsonText(value, repairs), repaired: repairs.count };
}

describe('jsonText', () => {
  it('writes every list of strings as JSON.stringify does, 5,000 lists of every kind of character', () => {
    const next = seededRandom(7);
    let built = 0;
    for (let n = 0; n < 5_000; n++) {
      const list = Array.from({ length: 1 + Math.floor(next() * 4) }, () => {
        // Mostly plain pieces, so the lists built here are most of them; now and then one to escape.
        const pieces = Array.from({ length: Math.floor(next() * 4) }, () => PIECES[Math.floor(next() * (next() < 0.8 ? 5 : PIECES.length))]);
        return pieces.join('');
      });
      expect(actual(list)).toEqual(expected(list));
      if (!JSON.stringify(list).includes('\\')) built++;
    }
    // The plain lists are the ones built here: enough of both kinds ran.
    expect(built).toBeGreaterThan(1_000);
    expect(built).toBeLessThan(4_900);
  });

  it('writes lists with holes, numbers, nested lists, boxed strings and bigints as JSON.stringify does', () => {
    // eslint-disable-next-line no-sparse-arrays
    const holed = ['a', , 'b'];
    const lists: object[] = [holed, ['a', 1], [1, 2], ['a', ['b']], [new String('boxed')], ['a', null], ['a', undefined], [7n, 'a'], ['a', { b: 'c' }], [''], ['', '']];
    for (const list of lists) expect(actual(list)).toEqual(expected(list));
  });

  it('writes empty lists and objects, and objects, as JSON.stringify does', () => {
    for (const value of [[], {}, { a: 'b' }, { a: ['\ud800'] }, Object.create(null) as object]) expect(actual(value)).toEqual(expected(value));
  });
});
