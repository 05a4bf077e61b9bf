/** The abort controller of a CLI run, tied to the signals that stop it. */
import { setMaxListeners } from 'node:events';
import { InterruptedError } from './failure.ts';

/**
 * One controller ends a run's walks, whatever the reason: Ctrl-C, SIGTERM or SIGHUP, a failure while
 * saving, or `--limit` reached. Aborting it releases a walk waiting at any gate and cancels requests
 * in flight, so ending never waits on a page nobody will read, and buys none. The signals stay caught
 * until the run is disposed of: a second Ctrl-C while the output is being saved must not cut it short.
 */
export function runController(): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  // Every walk of a wide `--inputs` run listens on this one signal.
  setMaxListeners(0, controller.signal);
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!controller.signal.aborted) controller.abort(new InterruptedError(signal));
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    controller,
    dispose: () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
