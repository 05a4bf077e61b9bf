/**
 * Retries: exponential backoff with full jitter (a random wait between 0 and min(max, min·2^n)),
 * waiting at least what `Retry-After` asks. A `Retry-After` longer than `maxDelayMs` ends the
 * retries instead: the caller asked not to wait that long. Sleeps end at once when the signal aborts.
 */

export interface RetryOptions {
  /** Retries after the first attempt. Default 4; 0 turns retrying off. */
  retries?: number;
  /** The first backoff ceiling, in ms. Default 250. */
  minDelayMs?: number;
  /** The largest wait between two attempts, in ms. Default 10,000. */
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

/** The longest delay `setTimeout` honours (longer ones fire at once). */
export const MAX_TIMER_MS = 2_147_483_647;

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  if (typeof options !== 'object' || options === null) throw new TypeError('retry must be an object');
  const { retries = 4, minDelayMs = 250, maxDelayMs = 10_000 } = options;
  if (!Number.isInteger(retries) || retries < 0) throw new TypeError(`retry.retries must be a non-negative integer, got ${String(retries)}`);
  for (const [name, value] of [['minDelayMs', minDelayMs], ['maxDelayMs', maxDelayMs]] as const) {
    if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIMER_MS)) {
      throw new TypeError(`retry.${name} must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(value)}`);
    }
  }
  if (maxDelayMs < minDelayMs) throw new TypeError('retry.maxDelayMs must not be below retry.minDelayMs');
  return { retries, minDelayMs, maxDelayMs };
}

/**
 * The wait before retry number `retry` (0-based), or undefined when no retry should happen.
 */
export function retryDelay(policy: RetryPolicy, retry: number, retryAfterMs?: number): number | undefined {
  if (retry >= policy.retries) return undefined;
  if (retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs) return undefined;
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** retry);
  return Math.max(Math.random() * ceiling, retryAfterMs ?? 0);
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
