import { describe, expect, it } from 'vitest';
import { unkey, unkeyCollection } from '../../src/operations/unkey.ts';

describe('unkey', () => {
  it('turns objects keyed "0", "1", … into arrays at any depth', () => {
    const value = { a: { 0: 'x', 1: { b: { 0: 1, 1: 2 } } } };
    expect(unkey(value)).toEqual({ a: ['x', { b: [1, 2] }] });
  });

  it('turns keyed collections of primitives, and of mixed values, into arrays', () => {
    expect(unkey({ url_list: { 0: 'a', 1: 'b' } })).toEqual({ url_list: ['a', 'b'] });
    expect(unkey({ 0: 'a', 1: { 0: 'b' } })).toEqual(['a', ['b']]);
  });

  it('never mutates its input', () => {
    const value = { a: { 0: { c: { 0: 'deep' } } }, keep: { z: 1 } };
    const before = JSON.stringify(value);
    const out = unkey(value) as { keep: unknown };
    expect(JSON.stringify(value)).toBe(before);
    expect(out.keep).toBe(value.keep);
  });

  it('returns an object without keyed collections unchanged (same reference)', () => {
    const value = { a: 1, b: { c: [1, 2], d: 'x' } };
    expect(unkey(value)).toBe(value);
  });

  it('leaves objects with gaps, other keys or a wrong start alone', () => {
    expect(unkey({ 0: 'a', 2: 'b' })).toEqual({ 0: 'a', 2: 'b' });
    expect(unkey({ 1: 'a', 2: 'b' })).toEqual({ 1: 'a', 2: 'b' });
    expect(unkey({ 0: 'a', x: 'b' })).toEqual({ 0: 'a', x: 'b' });
  });

  it('unkeys the fields of an object that only looks keyed', () => {
    expect(unkey({ 0: 'a', 2: { 0: 'b', 1: 'c' } })).toEqual({ 0: 'a', 2: ['b', 'c'] });
  });

  it('keeps a field named __proto__ as a field when its value changes', () => {
    const value = JSON.parse('{"id":"r1","__proto__":{"url_list":{"0":"a"}}}') as object;
    const out = unkey(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"id":"r1","__proto__":{"url_list":["a"]}}');
  });

  it('turns an empty {} into [] only under a name the API reference lists as a collection', () => {
    expect(unkey({ comments: {}, text_extra: {} })).toEqual({ comments: [], text_extra: {} });
  });

  it('keeps the known arrays (shop products, url_list) arrays, unkeying inside them', () => {
    expect(unkey({ url_list: ['a', 'b'], products: [{ tags: { 0: 't' } }] })).toEqual({ url_list: ['a', 'b'], products: [{ tags: ['t'] }] });
  });

  it('reads a collection at a list position, {} as an empty list', () => {
    expect(unkeyCollection({})).toEqual([]);
    expect(unkeyCollection({ 0: { a: 1 } })).toEqual([{ a: 1 }]);
    expect(unkeyCollection('nope')).toBeUndefined();
    expect(unkeyCollection({ a: 1 })).toBeUndefined();
  });
});

