/**
 * The protocol between a client stream and the export engine. The engine never iterates the streams
 * a caller hands it: it asks each for its walk (under the `WALK` symbol, off the stream's public
 * surface) and opens that walk afresh, or from a staged checkpoint, with options of its own, then
 * reads it a page at a time (`pageBatches`) so it can stage whole pages.
 */
import type { Observable } from 'rxjs';
import type { Checkpoint } from './checkpoint.ts';
import type { Controlled } from './control.ts';
import type { ClientEvent } from './metering.ts';
import type { OperationSpec } from './operations/spec.ts';
import type { HeldPages } from './page-reader.ts';
import type { StreamOptions } from './stream-options.ts';

export const WALK: unique symbol = Symbol.for('socialstream.walk');

/** Where a walk starts: the beginning, or a checkpoint's position. */
export interface WalkStart {
  pending: unknown;
  skip: number;
  pagesDone: number;
  recordsYielded: number;
}

/** One page of a walk as records, with where the walk stands once they are kept (`RecordStream.pageBatches`). */
export interface PageBatch<R> {
  /** The page's records not handed out before (all of them, unless a resumed walk had taken some). */
  records: R[];
  /** Where the walk stands once every one of `records` is kept. */
  checkpoint: Checkpoint;
  /** Where the walk stands once only the first `count` of `records` are kept (a limit cut the page). */
  checkpointAfter(count: number): Checkpoint;
  /** The walk has nothing left to fetch: its rule ended it. */
  last: boolean;
  /** Unix milliseconds of the service's `Date` header on the page, when it sent a readable one (`service-time.ts`). */
  servedAt?: number;
}

/** What the engine reads of an opened walk: its pages, and the control its gates attach to. */
export interface WalkStream extends Controlled {
  pageBatches(): AsyncGenerator<PageBatch<unknown>, void, undefined>;
}

/** Which walk a stream is, whether it was iterated, and a way to walk it again with the engine's own options. */
export interface Walk {
  readonly op: OperationSpec;
  readonly params: Readonly<Record<string, string>>;
  /** The stream has been iterated (in any way): its walk is no longer at its start. */
  readonly used: boolean;
  /** The client's events: pages, retries, errors and ignored continuations of every walk it runs. */
  readonly events$: Observable<ClientEvent>;
  /** The client's key out of a text: what an export stages never holds it. */
  readonly scrub: (text: string) => string;
  open(start: Checkpoint | undefined, options: StreamOptions, held?: HeldPages): WalkStream;
  /**
   * Opens a walk of the same operation with `params` another stream of the same client was given
   * (and checked): a wide export keeps one walk and the params of the others, not every stream.
   */
  openWith(params: Readonly<Record<string, string>>, start: Checkpoint | undefined, options: StreamOptions, held?: HeldPages): WalkStream;
}
