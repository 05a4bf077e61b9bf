/**
 * A live view of a long walk or export, fit for where it runs: in a Jupyter Deno kernel one display
 * updated in place (a display id, then `update_display_data`); on a terminal one line on stderr
 * rewritten with `\r`; elsewhere nothing. Updates are throttled, so calling the view for every page or
 * record costs a clock read; the last state before a quiet spell is still shown, and the final one
 * (`finished: true`) always is, at once.
 */

import type { ExportProgress } from '../export/types.ts';
import { escapeHtml, type MediaBundle } from './display.ts';

export type { ExportProgress } from '../export/types.ts';


/** Where a terminal bar is written: `process.stderr` by default; any stream with `isTTY` set works. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  /** The terminal's width; the line is cut to fit it. */
  readonly columns?: number;
  /** Writes text to the stream. */
  write(text: string): unknown;
}

/** Options of `progressView`: where it draws, and how often. */
export interface ProgressViewOptions {
  /** The terminal to draw on when not in Jupyter. Default `process.stderr`; nothing is drawn unless it is a TTY. */
  stream?: ProgressStream;
  /** Least time between two drawings, in milliseconds. Default 100 (at most 10 a second). */
  intervalMs?: number;
}

/** The content of a Jupyter `display_data` / `update_display_data` message. */
export interface DisplayMessage {
  data: MediaBundle;
  metadata: Record<string, never>;
  transient: { display_id: string };
}

type Broadcast = (type: 'display_data' | 'update_display_data', content: DisplayMessage) => Promise<void>;

const DEFAULT_INTERVAL_MS = 100;

/** The view for where this runs: a Jupyter display, a terminal bar, or `undefined` when neither. */
export function progressView(options: ProgressViewOptions = {}): ((progress: ExportProgress) => void) | undefined {
  const { stream = typeof process === 'undefined' ? undefined : process.stderr, intervalMs = DEFAULT_INTERVAL_MS } = options;
  if (typeof intervalMs !== 'number' || !(intervalMs >= 0)) throw new TypeError(`intervalMs must be a number ≥ 0, got ${String(intervalMs)}`);
  const broadcast = jupyterBroadcast();
  if (broadcast !== undefined) return throttled(jupyterView(broadcast), intervalMs);
  if (stream?.isTTY === true) return throttled(terminalView(stream), intervalMs);
  return undefined;
}

/**
 * `Deno.jupyter.broadcast` when running in a Deno Jupyter kernel. Outside one, Deno throws on reading
 * `Deno.jupyter` and Node has no `Deno` at all.
 */
function jupyterBroadcast(): Broadcast | undefined {
  try {
    const jupyter = (globalThis as { Deno?: { jupyter?: { broadcast?: unknown } } }).Deno?.jupyter;
    const broadcast = jupyter?.broadcast;
    if (typeof broadcast !== 'function') return undefined;
    return (type, content) => (broadcast as (type: string, content: DisplayMessage) => Promise<void>).call(jupyter, type, content);
  } catch {
    return undefined;
  }
}

/** Calls `draw` at most once per `intervalMs`, keeping the latest state for a trailing draw; `finished` draws at once and ends it. */
function throttled(draw: (progress: ExportProgress) => void, intervalMs: number): (progress: ExportProgress) => void {
  let last = -Infinity;
  let latest: ExportProgress | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let over = false;
  const drawLatest = (): void => {
    timer = undefined;
    if (latest === undefined || over) return;
    last = Date.now();
    const progress = latest;
    latest = undefined;
    draw(progress);
  };
  return (progress) => {
    if (over) return;
    if (progress.finished) {
      over = true;
      if (timer !== undefined) clearTimeout(timer);
      draw(progress);
      return;
    }
    const now = Date.now();
    if (now - last >= intervalMs && timer === undefined) {
      last = now;
      draw(progress);
      return;
    }
    latest = progress;
    if (timer === undefined) {
      timer = setTimeout(drawLatest, Math.max(0, intervalMs - (now - last)));
      // A view must never keep a process alive (Deno's timers have no unref; there the kernel lives on anyway).
      (timer as { unref?: () => void }).unref?.();
    }
  };
}

function terminalView(stream: ProgressStream): (progress: ExportProgress) => void {
  return (progress) => {
    const width = stream.columns !== undefined && stream.columns > 1 ? stream.columns - 1 : Infinity;
    const line = progressLine(progress);
    const shown = line.length > width ? line.slice(0, Math.max(0, width - 1)) + '…' : line;
    stream.write(`\r\x1b[K${shown}${progress.finished ? '\n' : ''}`);
  };
}

function jupyterView(broadcast: Broadcast): (progress: ExportProgress) => void {
  const displayId = `socialstream-progress-${globalThis.crypto.randomUUID()}`;
  let shown = false;
  // Messages go one after another so an update never overtakes the display it updates; a failure
  // to draw must never fail the walk it shows.
  let queue: Promise<void> = Promise.resolve();
  return (progress) => {
    const type = shown ? 'update_display_data' : 'display_data';
    shown = true;
    const content: DisplayMessage = { data: progressBundle(progress), metadata: {}, transient: { display_id: displayId } };
    queue = queue.then(() => broadcast(type, content)).catch(() => undefined);
  };
}

/** `3,000 records · 12 pages · 12 credits · 1,234 records/s · walks 1/3 · 4.2 s`, then `· done` or `· stopped by …`. */
export function progressLine(progress: ExportProgress): string {
  const { pages, records, credits, walks, elapsedMs, finished, stoppedBy } = progress;
  const seconds = elapsedMs / 1000;
  const parts = [counted(records, 'record'), counted(pages, 'page'), counted(credits, 'credit')];
  if (seconds > 0) parts.push(`${number(Math.round(records / seconds))} records/s`);
  if (walks.total > 1) parts.push(`walks ${number(walks.done)}/${number(walks.total)}`);
  parts.push(`${seconds.toFixed(1)} s`);
  if (stoppedBy !== undefined) parts.push(`stopped by ${stoppedBy}`);
  else if (finished) parts.push('done');
  return parts.join(' · ');
}

/** The progress as a notebook shows it: a bar over the walks when there are several, and the line. */
export function progressBundle(progress: ExportProgress): MediaBundle {
  const line = progressLine(progress);
  const { done, total } = progress.walks;
  const bar = total > 1 ? `<progress value="${done}" max="${total}" style="width:16em;vertical-align:middle"></progress> ` : '';
  const html = `<div class="socialstream-progress" style="font-family:monospace">${bar}${escapeHtml(line)}</div>`;
  return { 'text/html': html, 'text/plain': line };
}

function counted(n: number, noun: string): string {
  return `${number(n)} ${n === 1 ? noun : `${noun}s`}`;
}

function number(n: number): string {
  return n.toLocaleString('en-US');
}
