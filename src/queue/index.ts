/**
 * Beyond one machine: one queue of walks in Redis (BullMQ), one credit budget per run, any number
 * of workers writing one dataset (docs/queue.md).
 *
 * ```ts
 * import { enqueueExport, runWorker, queueStatus } from 'socialstream/queue';
 * await enqueueExport({ queue: 'redis://10.0.0.5:6379/0', op: 'forum/subforum', inputs, dataset: '/mnt/data', maxCredits: 5000 });
 * await runWorker({ queue: 'redis://10.0.0.5:6379/0', concurrency: 4, signal });   // on every machine, with its own key
 * console.log(await queueStatus('redis://10.0.0.5:6379/0'));
 * ```
 *
 * @module socialstream/queue
 */
export { enqueueExport, type EnqueueOptions, type EnqueueResult } from './enqueue.ts';
export { runWorker, type WorkerOptions, type WorkerOutcome } from './worker.ts';
export { openRedisLocks, type RedisLockOptions, type RedisLockSession } from './redis-locks.ts';
export type { WorkerCounts } from './worker-options.ts';
export { describeStatus, queueStatus, type QueueStatus, type RunStatus, type StatusOptions, type WorkerReport } from './status.ts';
export { QueueAuthError, QueueDatabaseError, QueueError, QueueNotRedisError, QueueTlsError, QueueUnreachableError } from './errors.ts';
