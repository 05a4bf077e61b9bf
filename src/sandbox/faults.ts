/**
 * Fault injection. Every kind is off by default. Probabilities are drawn from a PRNG seeded by the
 * sandbox seed, so a given seed and request sequence fails the same way on every run.
 */
import { inspect } from 'node:util';
import { Rng } from './data.ts';
import { FEED_FAULTS, type FeedFaults } from './platform.ts';

/**
 * Faults the sandbox injects, each a probability or a switch: failures, resets, bodies cut short,
 * duplicates across pages, and the feed faults.
 */
export interface SandboxFaults {
  /** Probability of a 500 `{ error: 'Failed to fetch <platform> <operation>' }` (not charged). */
  rate?: number;
  /** Probability that the socket is destroyed before any answer (not charged). */
  reset?: number;
  /** Probability that a 200 body is cut short mid-JSON (charged: the service did the work). */
  truncate?: number;
  /** Probability of a 502 HTML error page, as a proxy in front of the service would send (not charged). */
  html?: number;
  /** Page boundaries repeat: every page after the first starts with the last record of the page before. */
  duplicates?: boolean;
  /**
   * Feed faults (`FEED_FAULTS`), as real feeds serve them, on the newest-first listings
   * (`forum/subforum`, `videosite/channel/shorts`): the records they touch are picked by position in
   * the resource, so the same record is odd on every request and a record `advance()` adds may be.
   */
  /** The listing's oldest record is pinned at the top of its first page (and stays at its own place too). */
  pinned?: boolean;
  /** Every 37th record has a garbage time: `-1` (Unix seconds) or `0000-00-00T00:00:00Z` (ISO). */
  garbageTime?: boolean;
  /** Every 41st record is dated 9999-12-31T23:59:59Z. */
  futureTime?: boolean;
  /** Every 43rd record carries a time 400 days older than its place in the listing (an edited or late post). */
  outOfOrder?: boolean;
  /** Every 29th record comes with its key null (`id: null`): its permalink or url still names it. */
  keyless?: boolean;
}


/** What happens to one scrape request that passed validation and the credit check. */
export type FaultOutcome = 'none' | 'upstream' | 'reset' | 'html' | 'truncate';

const PROBABILITIES = ['rate', 'reset', 'truncate', 'html'] as const;

/** Checks a faults object, throwing `TypeError` naming the bad field. */
export function checkFaults(faults: unknown): SandboxFaults {
  if (faults === undefined) return {};
  if (faults === null || typeof faults !== 'object' || Array.isArray(faults)) {
    throw new TypeError('faults must be an object');
  }
  const record = faults as Record<string, unknown>;
  const flags: readonly string[] = ['duplicates', ...FEED_FAULTS];
  for (const key of Object.keys(record)) {
    if (!(PROBABILITIES as readonly string[]).includes(key) && !flags.includes(key)) {
      throw new TypeError(`faults.${key} is not a fault kind (${[...PROBABILITIES, ...flags].join(', ')})`);
    }
  }
  for (const key of PROBABILITIES) {
    const value = record[key];
    if (value !== undefined && (typeof value !== 'number' || !(value >= 0 && value <= 1))) {
      throw new TypeError(`faults.${key} must be a probability between 0 and 1, got ${inspect(value)}`);
    }
  }
  for (const key of flags) {
    if (record[key] !== undefined && typeof record[key] !== 'boolean') throw new TypeError(`faults.${key} must be a boolean, got ${inspect(record[key])}`);
  }
  return { ...(record as SandboxFaults) };
}

export class FaultInjector {
  private faults: SandboxFaults;
  private readonly rng: Rng;

  constructor(faults: SandboxFaults, seed: string) {
    this.faults = faults;
    this.rng = new Rng(seed, 'faults');
  }

  set(faults: SandboxFaults): void {
    this.faults = faults;
  }

  get duplicates(): boolean {
    return this.faults.duplicates === true;
  }

  get feed(): FeedFaults {
    return Object.fromEntries(FEED_FAULTS.map((kind) => [kind, this.faults[kind] === true]));
  }

  /**
   * Draws the fate of one request. One draw per request whatever is enabled keeps the sequence
   * for a seed stable when probabilities change; the kinds share the unit interval in a fixed order (so their
   * probabilities are exact while they sum to at most 1).
   */
  draw(): FaultOutcome {
    const { rate = 0, reset = 0, html = 0, truncate = 0 } = this.faults;
    let roll = this.rng.next();
    for (const [p, outcome] of [
      [rate, 'upstream'],
      [reset, 'reset'],
      [html, 'html'],
      [truncate, 'truncate'],
    ] as const) {
      if (roll < p) return outcome;
      roll -= p;
    }
    return 'none';
  }
}
