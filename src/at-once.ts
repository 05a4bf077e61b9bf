/**
 * A few tasks at a time: over a list (`mapAtOnce`), for work that waits on a disk or a store rather
 * than on the CPU (footer checks, removals, a publish's partitions), where one at a time leaves each
 * round trip waiting on the last; and through a gate (`AtOnce`), for tasks that come from many callers
 * at once (a store's requests).
 */

/**
 * Runs `task` on every item, at most `limit` at once, and resolves with the results in the items'
 * order. On the first failure no further item is started; it rejects with that failure once the
 * tasks already running have settled, so none is left running behind the caller's back.
 */
export async function mapAtOnce<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const runner = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index], index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, runner));
  if (failure !== undefined) throw failure.error;
  return results;
}

/**
 * A gate that lets at most `limit` tasks run at once; the others wait their turn, first come first
 * served, except that an urgent task goes before every task waiting. A task that fails frees its
 * place as one that succeeds does.
 */
export class AtOnce {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /** Runs `task` once a place is free (`urgent`: the first place that frees), and settles as it does. */
  async run<T>(task: () => Promise<T>, urgent = false): Promise<T> {
    if (this.#running >= this.limit) await new Promise<void>((resolve) => (urgent ? this.#waiting.unshift(resolve) : this.#waiting.push(resolve)));
    else this.#running++;
    try {
      return await task();
    } finally {
      // The place goes straight to the first waiter, so a newcomer cannot take it in between.
      const next = this.#waiting.shift();
      if (next === undefined) this.#running--;
      else next();
    }
  }
}
