/**
 * A record stream regrouped into its finished pages, each with the checkpoint taken right after it.
 * The export writes and vouches for whole pages only, so a checkpoint never points into a page whose
 * records are half in the spool. The stream's control is carried over, so `creditCap` still governs
 * the requests behind the pages.
 */
import { STREAM_CONTROL, type Checkpoint, type Client, type RecordStream, type RequestGate } from '../index.ts';
import { derive } from '../operators/derive.ts';
import { NetworkError, ValidationError, type SocialstreamError } from '../errors.ts';

export interface PageBatch {
  /** Which parameter set (walk) the page belongs to. */
  walk: number;
  records: unknown[];
  /** Where the walk stands once these records are written. */
  checkpoint: Checkpoint;
  /** Where the walk stands once only the first `count` of these records are written (`--limit`). */
  checkpointAfter(count: number): Checkpoint;
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
  // Taken after the first record of the page: one record past where the page's records begin.
  let first: Checkpoint | undefined;
  const batch = (checkpoint: Checkpoint, last: boolean): PageBatch => {
    durability.produced();
    const start = first;
    const checkpointAfter = (count: number): Checkpoint =>
      start === undefined || count >= records.length
        ? checkpoint
        : { ...start, skip: start.skip - 1 + count, recordsYielded: start.recordsYielded - 1 + count };
    first = undefined;
    return { walk, records, checkpoint, checkpointAfter, last, saved: () => durability.saved() };
  };
  try {
    for await (const record of stream) {
      records.push(record);
      first ??= stream.checkpoint();
      // `skip` is 0 exactly when the record just received was the last of its page.
      const checkpoint = stream.checkpoint();
      if (checkpoint.skip === 0) {
        yield batch(checkpoint, false);
        records = [];
      }
    }
  } catch (error) {
    halt.fail(walk, error);
    return;
  }
  const checkpoint = stream.checkpoint();
  yield batch(checkpoint, checkpoint.pending === null);
}

/**
 * Stops every walk of an export once one fails, without losing what the others already bought: they
 * request no further page (this gate refuses, so they end cleanly, their checkpoints at their next
 * page), and the pages they had in flight still arrive and are saved. Ending them by aborting instead
 * would drop those paid pages, to be bought again on `--resume`. A parameter set the service rejects
 * (400, 404) fails alone: the other walks go on.
 */
export class WalkHalt implements RequestGate {
  /** The first failure of any walk, other than a rejected parameter set. */
  failure: unknown;
  /** The walks whose parameters the service rejected, with its error. */
  readonly rejected = new Map<number, ValidationError>();
  #halted = false;

  fail(walk: number, error: unknown): void {
    if (error instanceof ValidationError) {
      this.rejected.set(walk, error);
      return;
    }
    if (this.#halted) return;
    this.#halted = true;
    this.failure = error;
  }

  acquire(): Promise<boolean> {
    return Promise.resolve(!this.#halted);
  }
}

/**
 * Counts the attempts of an export that may be charged and, under `--max-credits`, records each one
 * on disk before it is sent, then refuses every attempt past the cap: a crash can lose the page an
 * attempt bought, never the count of it, so no number of crashes lets the cap be passed. Attempts
 * known to have cost nothing (see `isFree`) are given back. It must be the last gate of a walk's
 * stream: an attempt it lets through is sent.
 */
export class AttemptLedger implements RequestGate {
  /** Attempts refused for the cap. */
  refused = 0;

  constructor(
    /** Attempts that may have been charged so far, over every run. */
    public credits: number,
    readonly max: number | undefined,
    private readonly record: () => Promise<void>,
  ) {}

  async acquire(): Promise<boolean> {
    if (this.max === undefined) {
      this.credits++;
      return true;
    }
    // Counted synchronously, before any await: concurrent walks can never both take the last credit.
    if (this.credits >= this.max) {
      this.refused++;
      return false;
    }
    this.credits++;
    await this.record();
    return true;
  }

  /**
   * Gives back each attempt at `endpoint` that `client` reports as answered with an error or never
   * sent (`isFree`), until the subscription ends. Every export that counts attempts watches them.
   */
  watchRefunds(client: Client, endpoint: string): { unsubscribe(): void } {
    return client.events$.subscribe((event) => {
      if ((event.type === 'retry' || event.type === 'error') && event.endpoint === endpoint && isFree(event.error)) this.credits--;
    });
  }
}

/** Only a 200 costs a credit (docs/wire.md): an error answer did not, nor did a connection never made. */
function isFree(error: SocialstreamError): boolean {
  if (error.status !== undefined) return error.status !== 200;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return error instanceof NetworkError && typeof code === 'string' && NEVER_CONNECTED.has(code);
}

const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

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
