/**
 * Sending one logical request: wait for a free slot (`maxConcurrentRequests`), pass every gate
 * (client throttle, then the stream's own gates: throttle, credit caps), send, and retry what may
 * succeed on a second try. Gates are asked before every attempt, retries included, so a credit cap
 * counts every attempt that could be charged.
 */
import type { RequestGate } from './control.ts';
import type { Meter } from './metering.ts';
import { type RetryPolicy, retryDelay, sleep } from './retry.ts';
import type { Transport } from './transport.ts';

/** A gate refused the attempt: the walk ends cleanly, nothing was sent. */
export const STOPPED: unique symbol = Symbol('stopped');

export interface RequestTarget {
  /** Operation id or path, for messages and events. */
  endpoint: string;
  /** From `/v1/…`. */
  path: string;
  query: Record<string, string>;
  /** Scrape operations cost 1 credit even when the body does not say so (shop products). */
  chargeable: boolean;
}

export class Requester {
  readonly #transport: Transport;
  readonly #meter: Meter;
  readonly #policy: RetryPolicy;
  readonly #slots: Slots;
  readonly #gates: readonly RequestGate[];

  constructor(transport: Transport, meter: Meter, policy: RetryPolicy, maxConcurrent: number, gates: readonly RequestGate[]) {
    this.#transport = transport;
    this.#meter = meter;
    this.#policy = policy;
    this.#slots = new Slots(maxConcurrent);
    this.#gates = gates;
  }

  /** The parsed 200 body, or `STOPPED` when a gate refused. Throws the typed error once retries are spent. */
  async send(target: RequestTarget, gates: readonly RequestGate[], signal?: AbortSignal): Promise<unknown> {
    const { endpoint } = target;
    for (let attempt = 0; ; attempt++) {
      await this.#slots.take(signal);
      let outcome;
      try {
        for (const gate of this.#gates) if (!(await gate.acquire(signal))) return STOPPED;
        for (const gate of gates) if (!(await gate.acquire(signal))) return STOPPED;
        this.#meter.request(endpoint, attempt);
        outcome = await this.#transport.get(target.path, target.query, endpoint, signal);
      } finally {
        this.#slots.give();
      }
      if (outcome.ok) {
        const credits = creditsOf(outcome.body, target.chargeable);
        this.#meter.charged(credits);
        return outcome.body;
      }
      if (outcome.charged) this.#meter.charged(1);
      const delay = outcome.retry ? retryDelay(this.#policy, attempt, outcome.retryAfterMs) : undefined;
      if (delay === undefined) {
        this.#meter.error(endpoint, outcome.error);
        throw outcome.error;
      }
      this.#meter.retry(endpoint, attempt + 1, delay, outcome.error);
      await sleep(delay, signal);
    }
  }
}

/**
 * Credits a 200 body says it cost: `credits_used` (API reference 2.1), else `credits_charged` beside it (the
 * service's top-level form), else `data.credits_charged` (E23, E25), else 1 for a scrape.
 */
export function creditsOf(body: unknown, chargeable: boolean): number {
  if (typeof body === 'object' && body !== null) {
    const { credits_used, credits_charged, data } = body as { credits_used?: unknown; credits_charged?: unknown; data?: { credits_charged?: unknown } };
    if (typeof credits_used === 'number') return credits_used;
    if (typeof credits_charged === 'number') return credits_charged;
    const charged = typeof data === 'object' && data !== null ? data.credits_charged : undefined;
    if (typeof charged === 'number') return charged;
  }
  return chargeable ? 1 : 0;
}

/** A counting semaphore whose waits end when the signal aborts. */
class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  take(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(grant);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal?.reason);
      };
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  give(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free++;
    else next();
  }
}
