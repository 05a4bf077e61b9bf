/**
 * `withProgress(stream)`: the same live view an export shows, for a plain `for await` loop. Records are
 * counted as the loop takes them; pages and credits come from the client's `stats` when it is given,
 * else from the stream itself: the pages its checkpoint has read (else the requests it sends), and the
 * requests it sends as credits (one each; retries count, as the service may charge them).
 */
import type { Checkpoint } from '../checkpoint.ts';
import { controlOf } from '../control.ts';
import type { ClientStats } from '../metering.ts';
import { assertIterable, derive } from '../operators/derive.ts';
import type { AnyIterable } from '../operators/types.ts';
import { type ExportProgress, progressView } from './progress.ts';

/**
 * Options of `withProgress`: the client whose `stats` give pages and credits, and the view to draw
 * with.
 */
export interface WithProgressOptions {
  /**
   * The client the stream comes from: pages and credits are then what its `stats` count, exactly
   * (everything the client does meanwhile, other streams too).
   */
  client?: { readonly stats: Readonly<ClientStats> };
  /** Where updates go. Default `progressView()`: a Jupyter display, a terminal bar, or nothing. */
  view?: (progress: ExportProgress) => void;
}

/** Updates are built no more often than this; the view throttles what it draws on top. */
const BUILD_INTERVAL_MS = 50;

/** Records of `source` unchanged, showing pages, records, credits and rate while a loop takes them. */
export function withProgress<R>(source: AnyIterable<R>, options: WithProgressOptions = {}): AsyncIterable<R> {
  assertIterable(source, 'withProgress');
  const { client, view } = options;
  if (client !== undefined && (typeof client !== 'object' || client === null || typeof client.stats !== 'object')) {
    throw new TypeError('withProgress: client must be a client (an object with stats)');
  }
  if (view !== undefined && typeof view !== 'function') throw new TypeError('withProgress: view must be a function');
  // A gate sees every request the stream sends (operators below it pass its control through).
  let requests = 0;
  controlOf(source)?.addGate({
    acquire: async () => {
      requests++;
      return true;
    },
  });
  const pagesDone = checkpointPages(source);
  const counters = (): { pages: number; credits: number } => {
    if (client !== undefined) return { pages: client.stats.pages, credits: client.stats.credits };
    return { pages: pagesDone?.() ?? requests, credits: requests };
  };
  return derive(source, 'withProgress', (s) => showing(s, view ?? progressView(), counters));
}

/** The pages a client stream has read, from its checkpoint (the page it is in counts), when the source is one. */
function checkpointPages(source: unknown): (() => number) | undefined {
  const checkpoint = (source as { checkpoint?: unknown }).checkpoint;
  if (typeof checkpoint !== 'function') return undefined;
  return () => {
    const { pagesDone, skip } = checkpoint.call(source) as Checkpoint;
    return pagesDone + (skip > 0 ? 1 : 0);
  };
}

async function* showing<R>(
  source: AnyIterable<R>,
  view: ((progress: ExportProgress) => void) | undefined,
  counters: () => { pages: number; credits: number },
): AsyncGenerator<R> {
  if (view === undefined) {
    yield* source;
    return;
  }
  const started = Date.now();
  const base = counters();
  let records = 0;
  let next = 0;
  let ended = false;
  let stoppedBy: string | undefined = 'break';
  const show = (finished: boolean): void => {
    const now = counters();
    const progress: ExportProgress = {
      pages: now.pages - base.pages,
      records,
      credits: now.credits - base.credits,
      walks: { done: ended && stoppedBy === undefined ? 1 : 0, total: 1 },
      elapsedMs: Date.now() - started,
      finished,
    };
    if (finished && stoppedBy !== undefined) progress.stoppedBy = stoppedBy;
    view(progress);
  };
  try {
    show(false);
    for await (const record of source) {
      records++;
      const now = Date.now();
      if (now >= next) {
        next = now + BUILD_INTERVAL_MS;
        show(false);
      }
      yield record;
    }
    stoppedBy = undefined;
  } catch (error) {
    stoppedBy = codeOf(error);
    throw error;
  } finally {
    ended = true;
    show(true);
  }
}

/** What an error is called in the view: its `code` (every socialstream error has one), else its name. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'an error';
}
