import { controlOf } from '../control.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';
import { CreditCapError } from '../errors.ts';
import { CreditBudgetGate } from '../gates.ts';
import { assertInteger, assertIterable, derive, describe, sameCount } from './derive.ts';
import type { AnyIterable, Operator } from './types.ts';

/** Options of `creditCap`. */
export interface CreditCapOptions {
  /**
   * What happens once the cap refused a request: `'stop'` ends the stream like a finished walk;
   * `'throw'` rejects with `CreditCapError` after every record already fetched. A stream that finished
   * within the cap ends normally either way. Default `'stop'`.
   */
  onCap?: 'stop' | 'throw';
}

const CREDIT_CAP_OPTIONS = { onCap: true } as const satisfies KnownOptions<CreditCapOptions>;

/**
 * `creditCap(max, { onCap })`: the client streams above it in the pipe make at most `max` request
 * attempts in all (retries included, and every walk of a `mergeMap` together), so they can never
 * spend credit `max + 1`. At the cap the walks end cleanly, the records already fetched still flow,
 * and then the stream ends (`'stop'`) or throws `CreditCapError` (`'throw'`).
 */
export function creditCap<T>(max: number, options: CreditCapOptions = {}): Operator<T, T> {
  assertInteger(max, 'creditCap: max', 0);
  refuseUnknownOptions(options, CREDIT_CAP_OPTIONS, 'creditCap');
  const { onCap = 'stop' } = options;
  if (onCap !== 'stop' && onCap !== 'throw') {
    throw new TypeError(`creditCap: onCap must be 'stop' or 'throw', got ${describe(onCap)}`);
  }
  return (source) => {
    assertIterable(source, 'creditCap');
    const control = controlOf(source);
    // Failing here beats a cap that silently governs nothing: credits are money.
    if (control === undefined) {
      throw new TypeError(
        'creditCap: the source makes no requests it could cap (it carries no stream control); ' +
          'put creditCap after a client stream or an operator applied to one',
      );
    }
    // One budget per use of the operator: it counts across every iteration of the stream it returns.
    const gate = new CreditBudgetGate(max);
    control.addGate(gate);
    return derive(source, 'creditCap', (s) => capRecords(s, gate, onCap), sameCount);
  };
}

async function* capRecords<T>(source: AnyIterable<T>, gate: CreditBudgetGate, onCap: 'stop' | 'throw'): AsyncGenerator<T> {
  yield* source;
  // Only a refused attempt means the cap was hit; spending exactly `max` and finishing is not capped.
  if (onCap === 'throw' && gate.refused > 0) {
    throw new CreditCapError(`Credit cap of ${gate.credits} reached: the stream stopped before its end`, gate.credits);
  }
}
