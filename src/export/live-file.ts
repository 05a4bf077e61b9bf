/**
 * A CSV or Parquet output written while its export stages pages, so that publishing only has to
 * finish it instead of reading the whole spool back through the sink. It is the plain sink, fed
 * first with the records earlier runs staged (read back from the spool, up to the bytes the journal
 * vouched for) and then with each page as it is staged, into a staging file beside the output
 * that publishing renames over it.
 *
 * The walk and the sink share one thread, and the walk's next request waits on nothing of the sink:
 * the sink takes a page only once the walk has sent its next request, and then the whole page at
 * once, synchronously (a sync iterable, whose only promises stand at the waits between pages). An
 * async iterable would cost a promise per record, and the walk's own chain of promises would queue
 * behind them.
 *
 * The spool stays the truth: a writer that failed, or did not take exactly the records the spool
 * holds, is dropped, and the output is written from the spool as before.
 */
import { rename } from 'node:fs/promises';
import { partialOf, type SinkResult } from '../../sinks/index.ts';
import { fromNdjsonPrefix } from '../../sinks/from-ndjson.ts';
import { removeIfPresent } from './durable.ts';

/** Pages waiting for the writer before a page being staged waits for it: memory stays bounded. */
const ROOM = 4;

/**
 * How the feed ends: by throwing this, which a sink answers by closing its file and telling what it
 * holds (`partialOf`). A sync iterable cannot wait to learn that it has ended.
 */
class FeedEnded extends Error {}

export class LiveFile {
  readonly #pages: (readonly unknown[])[] = [];
  /** The records staged by earlier runs, read back from the spool, until they are all taken. */
  #replay: AsyncIterator<unknown> | undefined;
  /** The page being handed over, from `#at` on. */
  #page: readonly unknown[] = [];
  #at = 0;
  #ended = false;
  #failed = false;
  /** Wakes the writer when a page arrives or the feed ends; wakes a waiting page when the writer takes one. */
  #wakeWriter: (() => void) | undefined;
  #wakeStager: (() => void) | undefined;
  /** Records handed to the writer. */
  #records = 0;
  readonly #written: Promise<SinkResult | undefined>;

  /**
   * Starts `write` (a plain sink writing to `path`) on the records of the first `bytes` bytes of
   * `spool`, and then on the pages `page` hands it.
   */
  constructor(
    readonly path: string,
    spool: string,
    bytes: number,
    write: (records: Iterable<unknown>, path: string) => Promise<SinkResult>,
  ) {
    if (bytes > 0) this.#replay = fromNdjsonPrefix(spool, bytes)[Symbol.asyncIterator]();
    this.#written = write(this.#feed(), path).then(
      (result) => result,
      (error: unknown) => {
        const ended = error instanceof FeedEnded && !this.#failed;
        this.#failed = !ended;
        this.#wakeStager?.();
        return ended ? partialOf(error) : undefined;
      },
    );
  }

  /** Hands over the records of a page just staged; resolves once the writer has room for more. */
  async page(records: readonly unknown[]): Promise<void> {
    if (this.#failed || this.#ended) return;
    this.#pages.push(records);
    this.#wakeWriter?.();
    while (this.#pages.length > ROOM && !this.#failed) await new Promise<void>((resolve) => (this.#wakeStager = resolve));
  }

  /**
   * Ends the feed and renames the finished file to `output`, when the writer took exactly the
   * `records` the spool holds. Resolves to its result, or undefined when the output must be written
   * from the spool instead.
   */
  async finish(output: string, records: number): Promise<SinkResult | undefined> {
    this.#end();
    const result = await this.#written;
    if (result === undefined || this.#records !== records || result.records !== records) {
      await removeIfPresent(this.path);
      return undefined;
    }
    await rename(this.path, output);
    return { ...result, path: output };
  }

  /** Stops the writer and drops what it wrote (the run publishes nothing, or from the spool). */
  async abandon(): Promise<void> {
    this.#failed = true;
    this.#end();
    await this.#written;
    await this.#replay?.return?.();
    await removeIfPresent(this.path);
  }

  #end(): void {
    this.#ended = true;
    this.#wakeWriter?.();
  }

  /** The records, a page at a time without a promise; between pages, a promise of the next record. */
  *#feed(): Generator<unknown> {
    for (;;) {
      while (this.#at < this.#page.length) yield this.#page[this.#at++];
      if (this.#replay === undefined && this.#take()) continue;
      yield this.#next();
    }
  }

  /** Makes the next queued page the one handed over; false when none is queued. */
  #take(): boolean {
    if (this.#failed) throw new Error('abandoned');
    const page = this.#pages.shift();
    if (page === undefined) return false;
    this.#wakeStager?.();
    this.#page = page;
    this.#at = 0;
    this.#records += page.length;
    return true;
  }

  /** The next record: replayed from the spool, or the first of the next page, once there is one. */
  async #next(): Promise<unknown> {
    for (;;) {
      if (this.#replay !== undefined) {
        const next = await this.#replay.next();
        if (!next.done) {
          this.#records++;
          return next.value;
        }
        this.#replay = undefined;
      }
      if (this.#take()) {
        if (this.#at < this.#page.length) return this.#page[this.#at++];
        continue;
      }
      if (this.#ended) throw new FeedEnded('the export has staged every page');
      await new Promise<void>((resolve) => (this.#wakeWriter = resolve));
      // Let the walk send its next request first, and map this page while that one is out. The walk
      // plans it in an immediate of its own (the page reader's), queued after the page was staged:
      // so this waits for the check phase after that one.
      await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
    }
  }
}
