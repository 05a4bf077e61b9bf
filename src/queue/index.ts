/**
 * Beyond one machine: one queue of walks in Redis (BullMQ), one credit budget per run, any number
 * of workers writing one dataset (DESIGN "Beyond one machine", README "Beyond one machine").
 */
export { enqueueExport, type EnqueueOptions, type EnqueueResult } from './enqueue.ts';
export { runWorker, type WorkerOptions, type WorkerOutcome } from './worker.ts';
export { describeStatus, queueStatus, type QueueStatus, type RunStatus, type WorkerReport } from './status.ts';
export { QueueError } from './errors.ts';
