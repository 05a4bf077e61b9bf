/**
 * A few tasks at a time over a list: for work that waits on a disk or a store rather than on the
 * CPU (footer checks, removals, a publish's partitions), where one at a time leaves each round trip
 * waiting on the last.
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
