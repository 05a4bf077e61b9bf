/**
 * A CSV or Parquet output written while its export stages pages, so that publishing only has to
 * finish it instead of reading the whole spool back through the sink. It is the plain sink, fed
 * first with the records earlier runs staged (read back from the spool, up to the bytes the journal
 * vouched for) and then with each page as it is staged, into a staging file beside the output
 * that publishing renames over it.
 *
 * The spool stays the truth: a writer that failed, or did not take exactly the records the spool
 * holds, is dropped, and the output is written from the spool as before.
 */
import { rename } from 'node:fs/promises';
import type { SinkResult } from '../../sinks/index.ts';
import { fromNdjsonPrefix } from '../../sinks/from-ndjson.ts';
import { removeIfPresent } from './durable.ts';

/** Pages waiting for the writer before a page being staged waits for it: memory stays bounded. */
const ROOM = 4;

export class LiveFile {
  readonly #pages: (readonly unknown[])[] = [];
  #ended = false;
  /** Wakes the writer when a page arrives or the feed ends; wakes a waiting page when the writer takes one. */
  #wakeWriter: (() => void) | undefined;
  #wakeStager: (() => void) | undefined;
  /** Records handed to the writer. */
  #records = 0;
  #failed = false;
  readonly #written: Promise<SinkResult | undefined>;

  /**
   * Starts `write` (a plain sink writing to `path`) on the records of the first `bytes` bytes of
   * `spool`, and then on the pages `page` hands it.
   */
  constructor(
    readonly path: string,
    spool: string,
    bytes: number,
    write: (records: AsyncIterable<unknown>, path: string) => Promise<SinkResult>,
  ) {
    this.#written = write(this.#feed(spool, bytes), path).catch(() => {
      this.#failed = true;
      this.#wakeStager?.();
      return undefined;
    });
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
    await removeIfPresent(this.path);
  }

  #end(): void {
    this.#ended = true;
    this.#wakeWriter?.();
  }

  async *#feed(spool: string, bytes: number): AsyncGenerator<unknown> {
    for await (const record of fromNdjsonPrefix(spool, bytes)) {
      if (this.#failed) throw new Error('abandoned');
      this.#records++;
      yield record;
    }
    for (;;) {
      const page = this.#pages.shift();
      if (page === undefined) {
        if (this.#ended) break;
        await new Promise<void>((resolve) => (this.#wakeWriter = resolve));
        continue;
      }
      this.#wakeStager?.();
      // Its records are mapped on this thread too: first let the walk send its next request (a chain
      // of promises that would otherwise queue behind a promise per record), then map them while it is out.
      await new Promise<void>((resolve) => setImmediate(resolve));
      // An abandoned writer must not finish a file: its sink keeps what it took only when the source throws.
      if (this.#failed) throw new Error('abandoned');
      this.#records += page.length;
      yield* page;
    }
    if (this.#failed) throw new Error('abandoned');
  }
}
