/**
 * The rule for a worker's counts, kept apart from `worker.ts` so that `socialstream worker` applies
 * it before it loads the queue's client or looks at the key: a bad flag is reported first, and by
 * the same rule a script's `runWorker` meets.
 */
import { option, optionError } from '../export/option-message.ts';

/** A worker's counts (`WorkerOptions`), each a whole number of at least 1. */
export interface WorkerCounts {
  /** Walks at once. Default 4. */
  concurrency?: number;
  /**
   * How long a walk's lease lasts without renewal, in ms (renewed every half of it while the worker
   * lives): a dead worker's walk is taken over after about this plus as long again. Default 15,000.
   */
  leaseMs?: number;
  /** How long a walk a spent budget parked waits before a worker looks at it again, in ms. Default 30,000. */
  parkMs?: number;
}

const COUNTS = ['concurrency', 'leaseMs', 'parkMs'] as const;

/** Refuses a count of `options` that is not a whole number of at least 1, with an `OptionError` naming it. */
export function checkWorkerCounts(options: WorkerCounts): void {
  for (const name of COUNTS) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw optionError`${option(name)} must be a whole number of at least 1, got ${String(value)}`;
  }
}
