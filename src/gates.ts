/**
 * The two request gates operators attach to a stream's control (see `control.ts`): a throttle that
 * spaces attempts out in time, and a credit budget that refuses attempts past a fixed count.
 */
import type { RequestGate } from './control.ts';

/**
 * Spaces request attempts at least `1 / requestsPerSecond` seconds apart, first come first served,
 * never in bursts. Spacing is measured from the moment the previous attempt was let through, not
 * from a planned schedule: after a stalled event loop, two late timers must not release two
 * attempts at once. The price is that stalls are not made up for later.
 */
export class ThrottleGate implements RequestGate {
  readonly requestsPerSecond: number;
  readonly intervalMs: number;
  /** When the latest attempt was let through (performance.now() clock). */
  #lastGrant = -Infinity;
  /** Waiters take turns: each starts waiting once the one before it was let through or gave up. */
  #queue: Promise<void> = Promise.resolve();

  constructor(requestsPerSecond: number) {
    assertRate(requestsPerSecond);
    this.requestsPerSecond = requestsPerSecond;
    this.intervalMs = 1000 / requestsPerSecond;
  }

  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<boolean>((resolve, reject) => {
      let gaveUp = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let passTurn: (() => void) | undefined;
      const onAbort = (): void => {
        gaveUp = true;
        clearTimeout(timer);
        reject(signal?.reason);
        // A waiter that gives up while it is its turn hands the turn on at once.
        passTurn?.();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue = this.#queue.then(
        () =>
          new Promise<void>((done) => {
            passTurn = done;
            // Timers may fire a fraction of a millisecond early, so the clock is checked again on waking.
            const tryNow = (): void => {
              if (gaveUp) return done();
              const wait = this.#lastGrant + this.intervalMs - performance.now();
              if (wait > 0) {
                timer = setTimeout(tryNow, Math.ceil(wait));
                return;
              }
              this.#lastGrant = performance.now();
              signal?.removeEventListener('abort', onAbort);
              resolve(true);
              done();
            };
            tryNow();
          }),
      );
    });
  }
}

/** Throws a `TypeError` unless `requestsPerSecond` is a positive finite number. */
export function assertRate(requestsPerSecond: unknown): asserts requestsPerSecond is number {
  if (typeof requestsPerSecond !== 'number' || !Number.isFinite(requestsPerSecond) || requestsPerSecond <= 0) {
    throw new TypeError(`requestsPerSecond must be a positive finite number, got ${String(requestsPerSecond)}`);
  }
}

/** Allows exactly `credits` request attempts in all; every later `acquire` resolves `false`. */
export class CreditBudgetGate implements RequestGate {
  readonly credits: number;
  #spent = 0;
  #refused = 0;

  constructor(credits: number) {
    if (typeof credits !== 'number' || !Number.isInteger(credits) || credits < 0) {
      throw new TypeError(`credits must be a non-negative integer, got ${String(credits)}`);
    }
    this.credits = credits;
  }

  /** Attempts allowed so far. */
  get spent(): number {
    return this.#spent;
  }

  /** Attempts refused so far: more than 0 means the budget was hit, not merely used up. */
  get refused(): number {
    return this.#refused;
  }

  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Taken synchronously, before any await: concurrent walks can never both take the last credit.
    if (this.#spent < this.credits) {
      this.#spent += 1;
      return Promise.resolve(true);
    }
    this.#refused += 1;
    return Promise.resolve(false);
  }
}
