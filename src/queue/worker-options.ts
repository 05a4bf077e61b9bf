/**
 * The rule for a worker's counts, kept apart from `worker.ts` so that `socialstream worker` applies
 * it before it loads the queue's client or looks at the key: a bad flag is reported first, and by
 * the same rule a script's `runWorker` meets.
 */
import { option, optionError } from '../export/option-message.ts';
import type { WorkerOptions } from './worker.ts';

const COUNTS = ['concurrency', 'leaseMs', 'parkMs'] as const;

/** Refuses a count of `options` that is not a whole number of at least 1, with an `OptionError` naming it. */
export function checkWorkerCounts(options: Pick<WorkerOptions, (typeof COUNTS)[number]>): void {
  for (const name of COUNTS) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw optionError`${option(name)} must be a whole number of at least 1, got ${String(value)}`;
  }
}
