/**
 * Deterministic synthetic data: every value is a pure function of the seed and a string key, so a
 * record can be built from its index alone. That keeps a resource of a million records free: pages
 * are generated on demand and nothing is stored between requests.
 */
import { EPOCH_SECONDS, type SandboxClockReading } from './clock.ts';
import { SandboxValidationError } from './platform.ts';

/** FNV-1a, 32-bit: a fast, stable string hash. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const WORDS = (
  'data stream record page cursor river mountain coffee signal market launch review weekly guide ' +
  'simple quick honest local city night morning story update release garden music travel studio ' +
  'camera design science history future budget recipe street ocean forest winter summer team'
).split(' ');

/** A small seeded PRNG (mulberry32) with the helpers the platform modules need. */
export class Rng {
  private state: number;

  constructor(...keys: Array<string | number>) {
    this.state = hash(keys.join('\u0000')) || 1;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  bool(probability = 0.5): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** `value` most of the time, `null` with the given probability: for fields the API reference marks nullable. */
  nullable<T>(value: T, probability = 0.2): T | null {
    return this.next() < probability ? null : value;
  }

  /** A string of decimal digits. */
  digits(length: number): string {
    let out = String(this.int(1, 9));
    while (out.length < length) out += String(this.int(0, 9));
    return out;
  }

  /** A string of lowercase letters and digits. */
  token(length: number): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    let out = '';
    while (out.length < length) out += alphabet[this.int(0, alphabet.length - 1)];
    return out;
  }

  words(count: number): string {
    const out: string[] = [];
    for (let i = 0; i < count; i++) out.push(this.pick(WORDS));
    return out.join(' ');
  }

  sentence(minWords = 5, maxWords = 14): string {
    const text = this.words(this.int(minWords, maxWords));
    return text.charAt(0).toUpperCase() + text.slice(1) + '.';
  }
}

/**
 * How many records a resource has in all: exactly N when its identifier ends in `-n<N>` (the
 * docs/wire.md convention), otherwise a stable count between `min` and `max` derived from the identifier.
 */
export function sizeOf(identifier: string, min = 20, max = 200): number {
  const match = /-n(\d+)\/?$/.exec(identifier.trim());
  if (match) return Number(match[1]);
  return min + (hash(identifier) % (max - min + 1));
}

/**
 * A run of digits unique per (resource, index): the resource's hash then the index, each zero-padded.
 * Platforms put their own leading digits in front so that ids look like theirs.
 */
export function serialId(resource: string, index: number, indexDigits: number): string {
  // Records added by `advance()` have negative indices: a leading 9 keeps their ids apart and all digits.
  const serial = index < 0 ? `9${String(-index).padStart(indexDigits, '0')}` : String(index).padStart(indexDigits, '0');
  return `${String(hash(resource)).padStart(10, '0')}${serial}`;
}

/** 1234567 → "1.2M", 1500 → "1.5K": how the platforms display large counts. */
export function compactCount(count: number): string {
  if (count >= 1_000_000) return `${(count / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
  if (count >= 1_000) return `${(count / 1_000).toFixed(1).replace(/\.0$/, '')}K`;
  return String(count);
}

/** API reference 2.2: a list inside `data` is an object keyed "0", "1", …; `{}` when empty. */
export function keyed<T>(items: readonly T[]): Record<string, T> {
  const out: Record<string, T> = {};
  items.forEach((item, index) => {
    out[String(index)] = item;
  });
  return out;
}

/** Unix seconds, up to `maxDays` days before the fixed epoch, so that data does not drift with the machine's clock. */
export function unixSecondsAgo(rng: Rng, maxDays = 365): number {
  return EPOCH_SECONDS - rng.int(0, maxDays * 86_400);
}
export function isoFromSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', '+00:00');
}

/**
 * Opaque cursors: base64url JSON naming the resource they belong to, so a cursor from one resource
 * (or a made-up one) is refused with a clean 400 instead of silently restarting a walk.
 */
export function encodeCursor(resource: string, offset: number): string {
  return Buffer.from(JSON.stringify({ r: hash(resource), o: offset })).toString('base64url');
}
export function decodeCursor(resource: string, cursor: string | null | undefined): number {
  if (cursor === null || cursor === undefined || cursor === '') return 0;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { r?: unknown; o?: unknown };
    if (parsed.r === hash(resource) && Number.isSafeInteger(parsed.o) && (parsed.o as number) >= 0) {
      return parsed.o as number;
    }
  } catch {
    // fall through to the validation error
  }
  throw new SandboxValidationError('Invalid cursor');
}

/**
 * The record indices of one page: `pageSize` positions from `offset`, cut at `total`. With the
 * duplicate fault on, a page after the first also repeats the last record of the page before.
 *
 * `growth` records added by `advance()` come first, newest first: position p holds index p - growth,
 * so the added records have indices -growth … -1 and every older record keeps its index (and with it
 * its id, text and time). `total` counts the added records too.
 */
export function pageIndices(total: number, pageSize: number, offset: number, duplicates: boolean, growth = 0): number[] {
  const indices: number[] = [];
  if (duplicates && offset > 0 && offset <= total) indices.push(offset - 1 - growth);
  for (let i = offset; i < Math.min(total, offset + pageSize); i++) indices.push(i - growth);
  return indices;
}

/**
 * How much a counter of the record at `index` (likes, score, views) has grown once `advance()` added
 * `growth` records: deterministic, and different from one record to the next.
 */
export function grownBy(growth: number, index: number): number {
  return growth * (1 + (Math.abs(index) % 7));
}

/**
 * Unix seconds of the record at `index`: the seed's time (`seeded()`) for one the seed holds, the
 * virtual clock's for one `advance()` added (a negative index). Both take one draw of `rng`, so the
 * fields a record draws after its time are the same either way.
 */
export function recordSeconds(clock: SandboxClockReading, rng: Rng, index: number, seeded: () => number): number {
  return index < 0 ? clock.addedAt(index, rng.next()) : seeded();
}

/**
 * Unix seconds of the record at `index` (of those the seed holds) in a newest-first list of `total`
 * records: about `spacing` seconds apart (with some jitter), squeezed for huge resources so that even
 * the oldest record of a `-n1000000` walk stays a plausible time (within 20 years of the epoch).
 */
export function newestFirstSeconds(rng: Rng, index: number, total: number, spacing: number): number {
  const step = Math.min(spacing, 630_720_000 / Math.max(1, total));
  return EPOCH_SECONDS - Math.floor(index * step) - rng.int(0, Math.max(0, Math.floor(step * 0.8)));
}

/** The offset a cursor of `encodeCursor` points at (it is known valid: the sandbox issued it). */
export function cursorOffset(cursor: string): number {
  return (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o: number }).o;
}

/** The cursor of the same resource as `cursor`, pointing at `offset` instead. */
export function moveCursor(cursor: string, offset: number): string {
  const { r } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { r: number };
  return Buffer.from(JSON.stringify({ r, o: offset })).toString('base64url');
}
