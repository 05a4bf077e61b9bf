/**
 * The real thing for operator tests: a sandbox over loopback and clients of it. Every helper here
 * measures on the sandbox's side (balance, charged requests), never on the client's word.
 */
import { createClient } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';

/** Retries that do not slow a test down: the faults are the point, not the backoff. */
export const QUICK_RETRY = { retries: 8, minDelayMs: 0, maxDelayMs: 2 };

export type Client = ReturnType<typeof createClient>;

export function clientOf(sandbox: Sandbox, apiKey = sandbox.apiKey, maxConcurrentRequests = 10): Client {
  return createClient({ apiKey, baseUrl: sandbox.url, retry: QUICK_RETRY, maxConcurrentRequests });
}

/** Credits the sandbox has taken from `apiKey` since it held `startingCredits`. */
export function creditsSpent(sandbox: Sandbox, apiKey: string, startingCredits: number): number {
  return startingCredits - sandbox.balance(apiKey).credits;
}

/** A small deterministic PRNG (mulberry32), so "random" caps are the same on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
