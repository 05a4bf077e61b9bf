/**
 * The loop every export shares, into a file, to stdout or into a dataset: each finished page of the
 * merged walks goes to `keep`, and only once `keep` has finished (the page is on disk, or written)
 * may that walk request its next page. A page `keep` fails on aborts every walk, as does the user's
 * interrupt; a walk that fails stops the others through `halt`, without losing their pages in flight.
 */
import type { Client } from '../index.ts';
import type { PageBatch, WalkHalt } from './page-batches.ts';

/** What an export says once it has kept a page: read on, or it has every record it wants (`--limit`). */
export type AfterPage = 'more' | 'enough';

/** The abort reason of a run that ended because it had every record it wanted. */
const ENOUGH = new Error('enough records');

/**
 * Drains `pages` into `keep`. A continuation that no rule follows may mean records are missing, so
 * each one the walks report is warned about on stderr once the loop ends, whatever ended it. Returns
 * what ended the run early (an error, or the interrupt's reason), or undefined when the walks ran
 * out or `keep` had enough.
 */
export async function drainPages(
  pages: AsyncIterable<PageBatch>,
  client: Client,
  halt: WalkHalt,
  controller: AbortController,
  keep: (page: PageBatch) => Promise<AfterPage>,
): Promise<unknown> {
  const { signal } = controller;
  const warnings: string[] = [];
  const ignored = client.events$.subscribe((event) => {
    if (event.type === 'ignored-continuation') warnings.push(`${event.endpoint} offered a continuation its rule does not follow (${event.detail})`);
  });
  try {
    for await (const page of pages) {
      let after: AfterPage;
      try {
        after = await keep(page);
      } catch (error) {
        controller.abort(error);
        throw error;
      }
      if (after === 'enough') {
        controller.abort(ENOUGH);
        break;
      }
      page.saved();
    }
  } catch (error) {
    if (!signal.aborted) return error;
  } finally {
    ignored.unsubscribe();
    for (const warning of warnings) process.stderr.write(`warning: ${warning}; the output may be incomplete\n`);
  }
  const failure: unknown = signal.aborted ? signal.reason : halt.failure;
  return failure === ENOUGH ? undefined : failure;
}
