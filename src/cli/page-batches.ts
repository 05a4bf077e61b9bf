/**
 * A record stream regrouped into its finished pages, each with the checkpoint taken right after it.
 * The export writes and vouches for whole pages only, so a checkpoint never points into a page whose
 * records are half in the spool. The stream's control is carried over, so `creditCap` still governs
 * the requests behind the pages.
 */
import { STREAM_CONTROL, type Checkpoint, type RecordStream, type RequestGate } from '../index.ts';
import { derive } from '../operators/derive.ts';

export interface PageBatch {
  /** Which parameter set (walk) the page belongs to. */
  walk: number;
  records: unknown[];
  /** Where the walk stands once these records are written. */
  checkpoint: Checkpoint;
  /** The walk has nothing left to fetch. */
  last: boolean;
  /** Call once the page is on disk and its checkpoint saved: lets the walk buy its next page. */
  saved(): void;
}

/**
 * The pages of `stream`. A walk does not request its next page until the page before it is saved:
 * otherwise a crash right after the request, before the save, would leave two paid pages to buy again.
 * A walk that fails ends quietly and hands its failure to `halt`, which stops the other walks.
 */
export function pageBatches(stream: RecordStream<unknown>, walk: number, halt: WalkHalt): AsyncIterable<PageBatch> {
  const durability = new SavedPagesGate();
  stream[STREAM_CONTROL].addGate(durability);
  stream[STREAM_CONTROL].addGate(halt);
  return derive(stream, 'pageBatches', () => batches(stream, walk, durability, halt));
}

async function* batches(stream: RecordStream<unknown>, walk: number, durability: SavedPagesGate, halt: WalkHalt): AsyncGenerator<PageBatch> {
  let records: unknown[] = [];
  const batch = (checkpoint: Checkpoint, last: boolean): PageBatch => {
    durability.produced();
    return { walk, records, checkpoint, last, saved: () => durability.saved() };
  };
  try {
    for await (const record of stream) {
      records.push(record);
      // `skip` is 0 exactly when the record just received was the last of its page.
      const checkpoint = stream.checkpoint();
      if (checkpoint.skip === 0) {
        yield batch(checkpoint, false);
        records = [];
      }
    }
  } catch (error) {
    halt.fail(error);
    return;
  }
  const checkpoint = stream.checkpoint();
  yield batch(checkpoint, checkpoint.pending === null);
}

/**
 * Stops every walk of an export once one fails, without losing what the others already bought: they
 * request no further page (this gate refuses, so they end cleanly, their checkpoints at their next
 * page), and the pages they had in flight still arrive and are saved. Ending them by aborting instead
 * would drop those paid pages, to be bought again on `--resume`.
 */
export class WalkHalt implements RequestGate {
  /** The first failure of any walk. */
  failure: unknown;
  #halted = false;

  fail(error: unknown): void {
    if (this.#halted) return;
    this.#halted = true;
    this.failure = error;
  }

  acquire(): Promise<boolean> {
    return Promise.resolve(!this.#halted);
  }
}

/** Holds a walk's next request while one of its pages is not yet saved. */
class SavedPagesGate implements RequestGate {
  #unsaved = 0;
  #waiters: (() => void)[] = [];

  produced(): void {
    this.#unsaved++;
  }

  saved(): void {
    this.#unsaved--;
    if (this.#unsaved === 0) for (const wake of this.#waiters.splice(0)) wake();
  }

  acquire(signal?: AbortSignal): Promise<boolean> {
    if (this.#unsaved === 0) return Promise.resolve(true);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }
}
