/**
 * JSON that keeps every integer's digits. An integer literal outside ±(2^53 − 1) parses to a
 * `bigint` (a `number` would round it: `7471256031625273857` became `7471256031625273000`); every other
 * number stays a `number`, and `stringifyExact` writes a `bigint` back as its digits. README
 * "Big integers" says where such values go.
 *
 * Node 20's `JSON.parse` gives a reviver no source text, so a body is first scanned for runs of 16
 * or more digits (2^53 has 16) outside strings. A body without an unsafe integer literal is parsed
 * by `JSON.parse` alone. In a body with some, each such literal is first written as a marked string
 * (`parseMarked`), `JSON.parse` reads that, and the marked strings become `bigint`s; only when the
 * marks cannot be trusted is the body read by the small parser below (`bench/json.ts` measures
 * each way). Both keep their own stack, so a deeply nested body cannot overflow the call stack (as
 * `JSON.parse`, which is not recursive, cannot either).
 */
import { randomUUID } from 'node:crypto';

/** The largest safe integer's digits, for comparing a 16-digit literal without converting it. */
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);

/** Whether the digits of an integer literal (no sign, no leading zero) lie beyond 2^53 − 1. */
function unsafeDigits(digits: string): boolean {
  return digits.length > MAX_SAFE_DIGITS.length || (digits.length === MAX_SAFE_DIGITS.length && digits > MAX_SAFE_DIGITS);
}

const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const PLUS = 0x2b;
const MINUS = 0x2d;

/**
 * Whether `text` holds an integer literal outside ±(2^53 − 1) outside its strings. A run of 16
 * digits covers exactly one of every 16th character, so only those are looked at until a digit is
 * found (the common case reads a sixteenth of the text); the quotes before each long run are then
 * counted to tell a number from digits inside a string.
 */
export function hasUnsafeInteger(text: string): boolean {
  return unsafeIntegerLiterals(text, 1).length > 0;
}

/** Where `text`'s integer literals outside ±(2^53 − 1) lie, sign included, as `[start, end)` pairs (at most `limit` of them). */
function unsafeIntegerLiterals(text: string, limit = Infinity): Array<readonly [number, number]> {
  const literals: Array<readonly [number, number]> = [];
  let inString = false;
  let scanned = 0;
  for (let run = longRun(text, 0); run !== undefined; run = longRun(text, run.end + 1)) {
    const { start, end } = run;
    // A number follows `:`, `,` or `[` (and maybe a sign and spaces); digits after anything else are
    // inside a string (an id sent as text), without counting the quotes before them.
    if (!mayStartValue(text, start)) continue;
    // Each unescaped quote before the run opens or closes a string.
    for (let quote = text.indexOf('"', scanned); quote !== -1 && quote < start; quote = text.indexOf('"', quote + 1)) {
      if (!escaped(text, quote)) inString = !inString;
    }
    scanned = start;
    if (inString) continue;
    const before = text.charCodeAt(start - 1);
    const after = text.charCodeAt(end);
    // Digits after a point or an exponent, or before one, are part of a number that is not an integer literal.
    if (before === DOT || isExponent(before)) continue;
    if ((before === PLUS || before === MINUS) && isExponent(text.charCodeAt(start - 2))) continue;
    if (after === DOT || isExponent(after)) continue;
    // A leading zero makes it no JSON number at all: JSON.parse refuses it where it stands.
    if (text.charCodeAt(start) === 0x30 || !unsafeDigits(text.slice(start, end))) continue;
    literals.push([before === MINUS ? start - 1 : start, end]);
    if (literals.length >= limit) break;
  }
  return literals;
}

/** Whether the text before `at` ends in `:`, `,` or `[`, then maybe spaces and a `-`: where a value may start. */
function mayStartValue(text: string, at: number): boolean {
  let before = at - 1;
  if (text.charCodeAt(before) === MINUS) before--;
  while (before >= 0 && isSpace(text.charCodeAt(before))) before--;
  if (before < 0) return true;
  const code = text.charCodeAt(before);
  return code === 0x3a /* : */ || code === 0x2c /* , */ || code === 0x5b /* [ */;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** The first run of 16 or more digits at or after `from`, as `[start, end)`. */
function longRun(text: string, from: number): { start: number; end: number } | undefined {
  for (let at = from + 15; at < text.length; at += 16) {
    if (!isDigit(text.charCodeAt(at))) continue;
    let start = at;
    while (start > from && isDigit(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (isDigit(text.charCodeAt(end))) end++;
    if (end - start >= 16) return { start, end };
    // The next run starts after this one: look at every 16th character from there.
    at = end + 1 + 15 - 16;
  }
  return undefined;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isExponent(code: number): boolean {
  return code === LOWER_E || code === UPPER_E;
}

/** Whether the character at `at` is preceded by an odd number of backslashes. */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
  return slashes % 2 === 1;
}

/**
 * `JSON.parse(text)`, except that an integer literal outside ±(2^53 − 1) becomes a `bigint`. Throws
 * a `SyntaxError` for text `JSON.parse` refuses.
 */
export function parseExact(text: string): unknown {
  const literals = unsafeIntegerLiterals(text);
  return literals.length === 0 ? JSON.parse(text) : parseMarked(text, literals);
}

/**
 * What starts the string an unsafe literal is written as before `JSON.parse` reads the body: a NUL
 * (which JSON text can only hold escaped) and a token new in each process, so no body can be made
 * to hold one in advance.
 */
const MARK = `\0exact-json:${randomUUID()}:`;
/** The mark as it is written inside a JSON string. */
const MARK_JSON = JSON.stringify(MARK).slice(1, -1);

/**
 * `text` parsed with each of `literals` (unsafe integer literals, in order) read as a `bigint`:
 * each is written as a marked string, the whole is parsed by `JSON.parse` (several times faster
 * than the parser below on a body with many ids), and every marked string found is made a `bigint`.
 * Should the marked strings found not be exactly those written (a repeated key drops one; a body
 * holding the mark itself adds one), or the marked text not parse, the body is read by the parser
 * below instead, which also names where text that is not JSON goes wrong.
 */
function parseMarked(text: string, literals: ReadonlyArray<readonly [number, number]>): unknown {
  let marked = '';
  let from = 0;
  for (const [start, end] of literals) {
    marked += `${text.slice(from, start)}"${MARK_JSON}${text.slice(start, end)}"`;
    from = end;
  }
  let value: unknown;
  try {
    value = JSON.parse(marked + text.slice(from));
  } catch {
    // Text that is not JSON: the parser below refuses it too, at its position in the text as sent.
    return parseLiterals(text);
  }
  const found = unmark(value);
  return found === undefined || found.count !== literals.length ? parseLiterals(text) : found.value;
}

/**
 * Replaces every marked string in `value` by the `bigint` of its digits, walking with a stack of its
 * own; returns the value (itself, unless it was one marked string) and how many were replaced, or
 * undefined when a marked string holds anything but an integer literal.
 */
function unmark(value: unknown): { value: unknown; count: number } | undefined {
  if (typeof value === 'string') {
    if (!value.startsWith(MARK)) return { value, count: 0 };
    const literal = bigintOf(value);
    return literal === undefined ? undefined : { value: literal, count: 1 };
  }
  let count = 0;
  const containers: object[] = value !== null && typeof value === 'object' ? [value] : [];
  for (let container = containers.pop(); container !== undefined; container = containers.pop()) {
    const object = container as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      const item = object[key];
      if (typeof item === 'string') {
        if (!item.startsWith(MARK)) continue;
        const literal = bigintOf(item);
        if (literal === undefined) return undefined;
        setKey(object, key, literal);
        count++;
      } else if (item !== null && typeof item === 'object') containers.push(item);
    }
  }
  return { value, count };
}

const INTEGER_LITERAL = /^-?[1-9][0-9]*$/;

/** The `bigint` a marked string holds the digits of; undefined when it holds anything else. */
function bigintOf(markedString: string): bigint | undefined {
  const literal = markedString.slice(MARK.length);
  return INTEGER_LITERAL.test(literal) ? BigInt(literal) : undefined;
}

/** `parseExact` without the scan: every body through the parser below (for its tests and the bench). */
export function parseLiterals(text: string): unknown {
  return new ExactParser(text).parse();
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
// A string needs `JSON.parse` to decode it only when it holds an escape or a character JSON forbids raw.
// eslint-disable-next-line no-control-regex
const DECODE = /[\\\u0000-\u001f]/;

/** A container being filled: an array, or an object and the key its next value goes under. */
interface Frame {
  value: unknown[] | Record<string, unknown>;
  key: string | undefined;
}

/** A parser for the few bodies that hold an unsafe integer: iterative, so its depth is bounded by memory only. */
class ExactParser {
  #at = 0;

  constructor(private readonly text: string) {}

  parse(): unknown {
    const stack: Frame[] = [];
    let value: unknown;
    for (;;) {
      this.#space();
      const code = this.text.charCodeAt(this.#at);
      if (code === 0x7b /* { */) {
        this.#at++;
        const frame: Frame = { value: {}, key: undefined };
        this.#space();
        if (this.#take(0x7d /* } */)) value = frame.value;
        else {
          frame.key = this.#key();
          stack.push(frame);
          continue;
        }
      } else if (code === 0x5b /* [ */) {
        this.#at++;
        const frame: Frame = { value: [], key: undefined };
        this.#space();
        if (this.#take(0x5d /* ] */)) value = frame.value;
        else {
          stack.push(frame);
          continue;
        }
      } else {
        value = this.#scalar(code);
      }
      // Put the value into its container; close every container that ends here.
      for (;;) {
        const frame = stack.at(-1);
        if (frame === undefined) {
          this.#space();
          if (this.#at < this.text.length) this.#fail('Unexpected non-whitespace character after JSON');
          return value;
        }
        if (Array.isArray(frame.value)) {
          frame.value.push(value);
          this.#space();
          if (this.#take(0x2c /* , */)) break;
          if (!this.#take(0x5d /* ] */)) this.#fail("Expected ',' or ']' after array element");
        } else {
          setKey(frame.value, frame.key!, value);
          this.#space();
          if (this.#take(0x2c /* , */)) {
            this.#space();
            frame.key = this.#key();
            break;
          }
          if (!this.#take(0x7d /* } */)) this.#fail("Expected ',' or '}' after property value");
        }
        value = frame.value;
        stack.pop();
      }
    }
  }

  #scalar(code: number): unknown {
    if (code === QUOTE) return this.#string();
    for (const [word, value] of LITERALS) {
      if (this.text.startsWith(word, this.#at)) {
        this.#at += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = this.#at;
    const match = NUMBER.exec(this.text);
    if (match === null) this.#fail(this.#at < this.text.length ? 'Unexpected token' : 'Unexpected end of JSON input');
    const literal = match[0];
    this.#at += literal.length;
    if (match[1] === undefined && match[2] === undefined) {
      const digits = literal.charCodeAt(0) === MINUS ? literal.slice(1) : literal;
      if (unsafeDigits(digits)) return BigInt(literal);
    }
    return Number(literal);
  }

  /** A key and the colon after it. */
  #key(): string {
    if (this.text.charCodeAt(this.#at) !== QUOTE) this.#fail('Expected a property name');
    const key = this.#string();
    this.#space();
    if (!this.#take(0x3a /* : */)) this.#fail("Expected ':' after property name");
    return key;
  }

  #string(): string {
    const start = this.#at;
    let end = this.text.indexOf('"', start + 1);
    while (end !== -1 && escaped(this.text, end)) end = this.text.indexOf('"', end + 1);
    if (end === -1) this.#fail('Unterminated string');
    this.#at = end + 1;
    const raw = this.text.slice(start + 1, end);
    // JSON.parse decodes escapes and refuses raw control characters, with its own message.
    return DECODE.test(raw) ? (JSON.parse(this.text.slice(start, end + 1)) as string) : raw;
  }

  #space(): void {
    WHITESPACE.lastIndex = this.#at;
    WHITESPACE.test(this.text);
    this.#at = WHITESPACE.lastIndex;
  }

  #take(code: number): boolean {
    if (this.text.charCodeAt(this.#at) !== code) return false;
    this.#at++;
    return true;
  }

  #fail(reason: string): never {
    throw new SyntaxError(`${reason} in JSON at position ${this.#at}`);
  }
}

const LITERALS: ReadonlyArray<readonly [string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/** `object[key] = value` as `JSON.parse` does it: a key `__proto__` stays an own key, not the prototype. */
function setKey(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

/**
 * `JSON.stringify(value)`, except that a `bigint` is written as its digits. A value without one is
 * left to `JSON.stringify`; only when it throws (it refuses a `bigint`) is the value walked here,
 * which writes the digits, or throws `JSON.stringify`'s own `TypeError` for a cycle.
 */
export function stringifyExact(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return new ExactWriter().write(value, '');
  }
}

/**
 * A record (or any value) as JSON text with every digit of its integers: `JSON.stringify` throws
 * `Do not know how to serialize a BigInt` on the records whose ids lie past 2^53 (a short video's
 * `music.id`), and a `number` would have rounded them; this writes a `bigint` as its digits, and
 * everything else exactly as `JSON.stringify(value)` does. It is the writer the NDJSON and CSV sinks
 * and `--out -` use, so a line it writes equals that record's line in their files.
 *
 * Like `JSON.stringify`, it gives `undefined` for a value JSON has no text for (`undefined`, a
 * function, a symbol) and throws a `TypeError` for a cycle.
 *
 * @example
 * ```ts
 * for await (const video of client.shortvideo.videos({ handle: 'creator-n40' })) {
 *   console.log(stringify(video)); // "music":{"id":7471256031625273857,…}
 * }
 * ```
 */
export function stringify(value: object | string | number | bigint | boolean | null): string;
export function stringify(value: unknown): string | undefined;
export function stringify(value: unknown): string | undefined {
  return stringifyExact(value);
}

/** JSON.stringify's rules, written out for values that hold a `bigint`. */
class ExactWriter {
  /** The objects being written, to refuse a cycle as `JSON.stringify` does. */
  readonly #open = new Set<object>();

  write(value: unknown, key: string): string | undefined {
    let current = value;
    if (current !== null && (typeof current === 'object' || typeof current === 'bigint')) {
      const toJSON = (current as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') current = (toJSON as (key: string) => unknown).call(current, key);
    }
    // Boxed primitives are written as their values.
    if (current instanceof Number || current instanceof String || current instanceof Boolean || current instanceof BigInt) current = current.valueOf();
    switch (typeof current) {
      case 'bigint':
        return current.toString();
      case 'string':
      case 'boolean':
      case 'number':
        return JSON.stringify(current);
      case 'object':
        return current === null ? 'null' : this.#container(current);
      default:
        // undefined, a function or a symbol: left out of an object, null in an array.
        return undefined;
    }
  }

  /**
   * A member of an object or array: a plain object or array is left to `JSON.stringify` whole, and
   * walked here only when it throws (a bigint, or a cycle) — so a record with one bigint costs about
   * one `JSON.stringify`, not a walk of every value.
   */
  #member(value: unknown, key: string): string | undefined {
    if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON !== 'function') {
      try {
        return JSON.stringify(value);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error;
      }
    }
    return this.write(value, key);
  }

  #container(object: object): string {
    if (this.#open.has(object)) throw new TypeError('Converting circular structure to JSON');
    this.#open.add(object);
    let text: string;
    if (Array.isArray(object)) {
      // `Array.from`, not `map`: a hole is null, as `JSON.stringify` writes it (`map` skips holes, leaving `[1,,2]`).
      text = `[${Array.from(object as unknown[], (item, index) => this.#member(item, String(index)) ?? 'null').join(',')}]`;
    } else {
      const members: string[] = [];
      for (const key of Object.keys(object)) {
        const written = this.#member((object as Record<string, unknown>)[key], key);
        if (written !== undefined) members.push(`${JSON.stringify(key)}:${written}`);
      }
      text = `{${members.join(',')}}`;
    }
    this.#open.delete(object);
    return text;
  }
}
