/**
 * The lossless JSON of `src/exact-json.ts` against `JSON.parse` and `JSON.stringify`: equal on every
 * body without an unsafe integer (the sandbox's own pages and hand-made edge cases), the same refusals
 * for text that is not JSON, and every digit kept where `JSON.parse` would round.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasUnsafeInteger, parseExact, parseLiterals, stringifyExact } from '../../src/exact-json.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { LIST_WALKS, PAGED_WALKS, SINGLE_WALKS } from './helpers.ts';

const EDGE_BODIES = [
  '{}',
  '[]',
  ' \t\r\n{ "a" : [ 1 , 2 , { } , [ ] ] } \n',
  '{"a":1,"a":2,"b":{"__proto__":{"x":1},"constructor":3}}',
  '{"2":"two","1":"one","b":0,"a":-0}',
  '[0,-0,1.5,-2.25e-3,1E+2,1e400,-1e400,123456789012345.6,9007199254740991,-9007199254740991,1e22,12345678901234567e3]',
  '[9007199254740991.0,90071992547409919e-1,1.90071992547409919]',
  '{"s":"plain","e":"\\"quoted\\" \\\\ back\\/slash \\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00 \\ud800","k\\u0000":"7471256031625273857"}',
  '{"digits in a string":"12345678901234567890123","after an escaped quote":"\\"12345678901234567890\\""}',
  '"just a string"',
  'true',
  'null',
  '  42  ',
  `[${'['.repeat(100)}1${']'.repeat(100)}]`,
];

const NOT_JSON = [
  '',
  ' ',
  '{',
  '{"a":1,}',
  '[1,]',
  '[1 2]',
  '{"a" 1}',
  '{a:1}',
  "{'a':1}",
  '01',
  '1.',
  '.5',
  '-',
  '+1',
  'NaN',
  'tru',
  '"unterminated',
  '"raw\u0001control"',
  '"bad \\x escape"',
  '\ufeff{}',
  '{} {}',
  '[12345678901234567890,]',
  '{"a":12345678901234567890',
  '12345678901234567890 x',
  '[01234567890123456789]',
  '{"a":-01234567890123456789}',
  '[12345678901234567890 12345678901234567890]',
];

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(() => sandbox.close());

/** The first page of `id` as the sandbox sends it, text untouched. */
async function firstPage(id: string, params: Record<string, string | number>): Promise<string> {
  const url = new URL(`/v1/scrape/${id}`, sandbox.url);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, String(value));
  const response = await fetch(url, { headers: { 'x-api-key': sandbox.apiKey } });
  return response.text();
}

/** A parsed value with every bigint written as the number `JSON.parse` would have made of it. */
function rounded(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(rounded);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rounded(item)]));
}

describe('the parser against JSON.parse', () => {
  it('parses every sandbox page as JSON.parse does, but for the integers it would round', async () => {
    let withBig = 0;
    for (const { id, params } of [...PAGED_WALKS, ...LIST_WALKS, ...SINGLE_WALKS]) {
      const text = await firstPage(id, params);
      const parsed = parseLiterals(text);
      if (hasUnsafeInteger(text)) {
        withBig++;
        expect(rounded(parsed), id).toEqual(JSON.parse(text));
        // The fast way (marked literals read by JSON.parse) gives what the parser gives.
        expect(parseExact(text), id).toStrictEqual(parsed);
      } else {
        expect(parsed, id).toStrictEqual(JSON.parse(text));
        expect(parseExact(text), id).toStrictEqual(JSON.parse(text));
      }
    }
    // The short-video videos page sends music.id as a 19-digit number.
    expect(withBig).toBeGreaterThan(0);
  });

  it('parses hand-made edge cases exactly as JSON.parse does', () => {
    for (const text of EDGE_BODIES) {
      expect(parseLiterals(text), text).toStrictEqual(JSON.parse(text));
    }
  });

  it('keeps a __proto__ key as an own key, as JSON.parse does', () => {
    const parsed = parseLiterals('{"__proto__":{"x":1}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__']);
  });

  it('refuses with a SyntaxError every text JSON.parse refuses', () => {
    for (const text of NOT_JSON) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError);
      expect(() => parseLiterals(text), text).toThrow(SyntaxError);
      expect(() => parseExact(text), text).toThrow(SyntaxError);
    }
  });

  it('parses a body nested a million deep without overflowing the stack', () => {
    const depth = 1_000_000;
    const text = `${'['.repeat(depth)}12345678901234567890${']'.repeat(depth)}`;
    let value = parseExact(text);
    for (let level = 0; level < depth; level++) value = (value as unknown[])[0];
    expect(value).toBe(12345678901234567890n);
  });
});

describe('which integers become bigints', () => {
  it('parses an integer literal beyond 2^53 - 1 to a bigint with the same digits', () => {
    const body = parseExact('{"music":{"id":7471256031625273857,"id_str":"7471256031625273857"},"n":-9223372036854775809}') as {
      music: { id: unknown; id_str: string };
      n: unknown;
    };
    expect(body.music.id).toBe(7471256031625273857n);
    expect(String(body.music.id)).toBe(body.music.id_str);
    expect(body.n).toBe(-9223372036854775809n);
  });

  it('keeps the safe integers at the edge, fractions and exponents as numbers', () => {
    expect(parseExact('[9007199254740991,-9007199254740991,9007199254740992,1.5e300,90071992547409920.5,9007199254740993e0]')).toStrictEqual([
      9007199254740991,
      -9007199254740991,
      9007199254740992n,
      1.5e300,
      Number('90071992547409920.5'),
      Number('9007199254740993e0'),
    ]);
  });

  it('leaves digits inside strings alone, after escaped quotes and backslashes too', () => {
    expect(hasUnsafeInteger('{"a":"12345678901234567890"}')).toBe(false);
    expect(hasUnsafeInteger('{"a":"x\\"12345678901234567890"}')).toBe(false);
    expect(hasUnsafeInteger('{"a":"x\\\\","b":12345678901234567890}')).toBe(true);
    expect(hasUnsafeInteger('{"a":1.12345678901234567890,"b":1e12345678901234567890,"c":1e-12345678901234567890}')).toBe(false);
    expect(hasUnsafeInteger('{"a":9007199254740991}')).toBe(false);
    expect(hasUnsafeInteger('{"a":9007199254740992}')).toBe(true);
  });
});

describe('bodies where the marked literals cannot be trusted', () => {
  it('gives what the parser gives when a repeated key drops an unsafe literal, or keeps the last one', () => {
    for (const text of [
      '{"a":12345678901234567890,"a":1}',
      '{"a":1,"a":12345678901234567890}',
      '{"a":12345678901234567890,"b":{"c":-98765432109876543210,"c":"x"},"d":[12345678901234567891]}',
    ]) {
      expect(parseExact(text), text).toStrictEqual(parseLiterals(text));
    }
    expect(parseExact('{"a":12345678901234567890,"a":1}')).toStrictEqual({ a: 1 });
    expect(parseExact('{"a":1,"a":12345678901234567890}')).toStrictEqual({ a: 12345678901234567890n });
  });

  it('leaves a string that looks like a mark a string', () => {
    const lookalike = '\\u0000exact-json:00000000-0000-0000-0000-000000000000:12345678901234567890';
    const parsed = parseExact(`{"s":"${lookalike}","n":12345678901234567890,"t":["\\u0000exact-json:"]}`) as Record<string, unknown>;
    expect(parsed).toStrictEqual({ s: JSON.parse(`"${lookalike}"`), n: 12345678901234567890n, t: ['\u0000exact-json:'] });
  });

  it('keeps a __proto__ key that holds an unsafe literal as an own key', () => {
    const parsed = parseExact('{"__proto__":12345678901234567890,"x":[{"__proto__":-12345678901234567890}]}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__', 'x']);
    expect(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value).toBe(12345678901234567890n);
    const inner = (parsed.x as Array<Record<string, unknown>>)[0];
    expect(Object.getOwnPropertyDescriptor(inner, '__proto__')?.value).toBe(-12345678901234567890n);
  });

  it('names the position in the text as sent when a body with an unsafe literal is not JSON', () => {
    expect(() => parseExact('{"a":12345678901234567890,"b":tru}')).toThrow(/at position 30$/);
  });

  it('parses a body that is one unsafe literal, signed or not', () => {
    expect(parseExact(' -12345678901234567890 ')).toBe(-12345678901234567890n);
    expect(parseExact('12345678901234567890')).toBe(12345678901234567890n);
  });
});

describe('the scan for unsafe integers', () => {
  it('finds an unsafe literal at every position and length, and no safe one', () => {
    for (let offset = 0; offset < 40; offset++) {
      for (const digits of ['9007199254740991', '9007199254740992', '12345678901234567', '123456789012345678901']) {
        const text = `[${'1,'.repeat(offset)}${digits}]`;
        expect(hasUnsafeInteger(text), text).toBe(digits !== '9007199254740991');
        const quoted = `["${'1,'.repeat(offset)}${digits}"]`;
        expect(hasUnsafeInteger(quoted), quoted).toBe(false);
      }
    }
  });

  it('agrees with a parse on bodies of random integers of 1 to 20 digits', () => {
    let seed = 7;
    const random = (below: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % below;
    for (let body = 0; body < 2_000; body++) {
      const literals = Array.from({ length: 1 + random(12) }, () => {
        const length = 1 + random(20);
        const digits = String(1 + random(9)) + Array.from({ length: length - 1 }, () => String(random(10))).join('');
        return random(4) === 0 ? `"${digits}"` : digits;
      });
      const text = `[${literals.join(',')}]`;
      const unsafe = literals.some((literal) => !literal.startsWith('"') && !Number.isSafeInteger(Number(literal)));
      expect(hasUnsafeInteger(text), text).toBe(unsafe);
      expect(parseExact(text), text).toStrictEqual(parseLiterals(text));
    }
  });
});

describe('stringifyExact', () => {
  it('writes what JSON.stringify writes for values without a bigint', () => {
    for (const text of EDGE_BODIES) {
      const value = JSON.parse(text) as unknown;
      expect(stringifyExact(value)).toBe(JSON.stringify(value));
    }
  });

  it('writes a bigint as its digits, and follows JSON.stringify everywhere else in the value', () => {
    const value = {
      id: 7471256031625273857n,
      at: new Date(0),
      list: [undefined, () => 1, -12345678901234567890n, Number.NaN],
      gone: undefined,
      text: 'a "b"',
      boxed: Object(5n) as unknown,
    };
    expect(stringifyExact(value)).toBe(
      '{"id":7471256031625273857,"at":"1970-01-01T00:00:00.000Z","list":[null,null,-12345678901234567890,null],"text":"a \\"b\\"","boxed":5}',
    );
  });

  it('writes a hole in an array beside a bigint as null, as JSON.stringify writes a hole', () => {
    // eslint-disable-next-line no-sparse-arrays
    const list = ['x', , , 7n];
    expect(stringifyExact({ list })).toBe('{"list":["x",null,null,7]}');
    expect(parseExact(stringifyExact({ list })!)).toStrictEqual({ list: ['x', null, null, 7] });
  });

  it('round-trips through parseExact with every digit', () => {
    const value = { a: [1, 2n ** 64n, -(2n ** 70n)], b: { c: 9007199254740993n } };
    expect(parseExact(stringifyExact(value)!)).toStrictEqual({ a: [1, 2n ** 64n, -(2n ** 70n)], b: { c: 9007199254740993n } });
  });

  it('refuses a cycle with a TypeError, as JSON.stringify does', () => {
    const cycle: Record<string, unknown> = { id: 1n };
    cycle.self = cycle;
    expect(() => stringifyExact(cycle)).toThrow(TypeError);
  });
});
