/**
 * The Parquet encoder's worker thread (`parquet-encoder.ts` starts it): a row group's cells in, the
 * row group laid out and compressed out. It keeps nothing between requests, so a writer that
 * stops half way leaves nothing behind here.
 */
import { parentPort } from 'node:worker_threads';
import { encodeRowGroup } from './parquet-columns.ts';
import type { EncodeReply, EncodeRequest } from './parquet-encoder.ts';

const port = parentPort!;

/**
 * The memory an encoded group is written into: shared, so posting it back copies nothing and
 * detaches nothing. It used to be transferred, and the first ArrayBuffer a thread detaches makes V8
 * drop every optimized function that assumed none would be (its ArrayBufferDetaching protector):
 * the whole encoder ran unoptimized again in the worker's second group (95 ms against 47 for a group
 * of 10,000 short videos), often the file's last group, which the writer waits for. Shared memory
 * is zeroed where `Buffer.allocUnsafe` reuses: about 0.25 ms more for a 1 MB body, on this thread.
 */
function sharedBytes(bytes: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(bytes));
}

port.on('message', ({ id, specs, cells, plain }: EncodeRequest) => {
  const reply = (message: EncodeReply): void => port.postMessage(message);
  encodeRowGroup(specs, cells, plain, sharedBytes).then(
    (group) => reply({ id, group }),
    // The writer encodes the group again on its own thread, which throws this same error there.
    () => reply({ id }),
  );
});
