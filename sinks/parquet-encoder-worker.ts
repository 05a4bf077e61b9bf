/**
 * The Parquet encoder's worker thread (`parquet-encoder.ts` starts it): a row group's cells in, the
 * row group laid out and compressed out. It keeps nothing between requests, so a writer that
 * stops half way leaves nothing behind here.
 */
import { parentPort } from 'node:worker_threads';
import { encodeRowGroup } from './parquet-columns.ts';
import type { EncodeReply, EncodeRequest } from './parquet-encoder.ts';

const port = parentPort!;

port.on('message', ({ id, specs, cells, plain }: EncodeRequest) => {
  // The encoded body's memory is handed over, not copied.
  const reply = (message: EncodeReply): void => port.postMessage(message, message.group === undefined ? [] : [message.group.body.buffer as ArrayBuffer]);
  encodeRowGroup(specs, cells, plain).then(
    (group) => reply({ id, group }),
    // The writer encodes the group again on its own thread, which throws this same error there.
    () => reply({ id }),
  );
});
