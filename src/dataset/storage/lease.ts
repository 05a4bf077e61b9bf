/**
 * What a lease's state says, the same in a folder and a bucket: who holds it and until when. A
 * lease is judged run out by the taker's clock against the holder's `expiresAt`, so the machines
 * of a fleet must agree on the time to well within a lease (as NTP keeps them: milliseconds against
 * leases of tens of seconds). How a lease is replaced is each store's own compare-and-swap: the
 * state's ETag on S3, a generation created exclusively on a local folder.
 */
import { hostname } from 'node:os';
import { OptionError } from '../../errors.ts';
import type { LockOptions } from './types.ts';

/** A lease's state as stored. */
export interface LeaseState {
  readonly holder: string;
  /** When it runs out unless renewed (milliseconds since the epoch, the holder's clock). */
  readonly expiresAt: number;
}

/** The holder's name when the caller gives none. */
export function defaultHolder(): string {
  return `${hostname()} pid ${process.pid}`;
}

/** Checks a lock's options, before any request. */
export function checkLockOptions(options: LockOptions): void {
  if (!Number.isSafeInteger(options.leaseMs) || options.leaseMs <= 0) throw new OptionError([{ option: 'leaseMs' }, ` must be a whole number of milliseconds above 0, not ${String(options.leaseMs)}`]);
}

/** The state of a lease taken or renewed now by `holder` for `leaseMs`, as stored bytes. */
export function leaseBytes(holder: string, leaseMs: number): Uint8Array {
  const state: LeaseState = { holder, expiresAt: Date.now() + leaseMs };
  return new TextEncoder().encode(JSON.stringify(state));
}

/**
 * Whether the stored lease `bytes` has run out. State that does not parse (cut short by a store
 * that is not atomic, or written by someone else) counts as run out, so it cannot hold a lock forever;
 * replacing it still goes through the store's compare-and-swap.
 */
export function leaseRanOut(bytes: Uint8Array): boolean {
  try {
    const state = JSON.parse(new TextDecoder().decode(bytes)) as Partial<LeaseState>;
    return typeof state.expiresAt !== 'number' || state.expiresAt <= Date.now();
  } catch {
    return true;
  }
}
