/**
 * How a running export reports itself: through the caller's `progress` function on every staged page
 * and once at the end, or with `progress: true` as a live line on a terminal's stderr. The engine
 * itself never prints.
 */
import type { ExportOptions, ExportProgress } from './types.ts';

/** What `progress: true` shows: a terminal line unless a richer view is attached (`attachProgressView`). */
let defaultView: () => ((progress: ExportProgress) => void) | undefined = () => terminalLine(process.stderr);

/**
 * Sets the view `progress: true` opens for each export. `src/notebook/export-views.ts` attaches
 * `progressView`, which updates one display in place in Jupyter and draws a line on a terminal.
 */
export function attachProgressView(view: () => ((progress: ExportProgress) => void) | undefined): void {
  defaultView = view;
}

export interface ProgressReporter {
  update(): void;
  finish(stoppedBy: ExportProgress['stoppedBy']): void;
}

export function progressReporter(option: ExportOptions['progress'], snapshot: () => Omit<ExportProgress, 'finished' | 'stoppedBy'>): ProgressReporter {
  const report = typeof option === 'function' ? option : option === true ? defaultView() : undefined;
  if (report === undefined) return { update: () => undefined, finish: () => undefined };
  return {
    update: () => report({ ...snapshot(), finished: false }),
    finish: (stoppedBy) => report({ ...snapshot(), finished: true, ...(stoppedBy === undefined ? {} : { stoppedBy }) }),
  };
}

/** A one-line bar redrawn at most four times a second; nothing where stderr is not a terminal. */
export function terminalLine(stream: NodeJS.WriteStream): ((progress: ExportProgress) => void) | undefined {
  if (!stream.isTTY) return undefined;
  let drawn = 0;
  return (progress) => {
    const now = Date.now();
    if (!progress.finished && now - drawn < 250) return;
    drawn = now;
    stream.write(progress.finished ? '\r\x1b[K' : `\r\x1b[K${describeProgress(progress)}`);
  };
}

/** `1,200 records · 12 pages · 12 credits · 340 rec/s · 3.5 s`. */
export function describeProgress({ records, pages, credits, elapsedMs }: ExportProgress): string {
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? Math.round(records / seconds) : 0;
  return `${counted(records, 'record')} · ${counted(pages, 'page')} · ${counted(credits, 'credit')} · ${rate} rec/s · ${seconds.toFixed(1)} s`;
}

/** `1 page`, `2 pages`: every count a summary prints goes through here. */
export function counted(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : `${noun}s`}`;
}
