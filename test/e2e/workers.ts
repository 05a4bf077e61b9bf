/**
 * Ends the CLI workers an end-to-end suite started: each still running is woken (a test may have
 * stopped it with SIGSTOP) and sent SIGTERM, and the call returns once every one has closed.
 */
import type { ChildProcess } from 'node:child_process';

export async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await done;
    }),
  );
}
