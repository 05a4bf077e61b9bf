import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ExportProgress, progressView } from '../../src/index.ts';
import type { DisplayMessage } from '../../src/notebook/progress.ts';

/** A terminal that records what is written to it. */
function terminal(columns = 200) {
  const writes: string[] = [];
  return { writes, stream: { isTTY: true, columns, write: (text: string) => writes.push(text) } };
}

function progress(overrides: Partial<ExportProgress> = {}): ExportProgress {
  return { pages: 12, records: 3000, credits: 12, walks: { done: 0, total: 1 }, elapsedMs: 2000, finished: false, ...overrides };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  delete (globalThis as { Deno?: unknown }).Deno;
});

describe('progress view on a terminal', () => {
  it('draws one line with pages, records, credits and rate, rewritten in place', () => {
    const { writes, stream } = terminal();
    const view = progressView({ stream })!;
    view(progress());
    expect(writes).toEqual(['\r\x1b[K3,000 records · 12 pages · 12 credits · 1,500 records/s · 2.0 s']);
  });

  it('ends the line with what stopped it, or done, and draws nothing after', () => {
    const { writes, stream } = terminal();
    const view = progressView({ stream })!;
    view(progress({ finished: true, stoppedBy: 'maxCredits', walks: { done: 2, total: 3 } }));
    view(progress({ records: 1 }));
    expect(writes).toEqual(['\r\x1b[K3,000 records · 12 pages · 12 credits · 1,500 records/s · walks 2/3 · 2.0 s · stopped by maxCredits\n']);
    const other = terminal();
    progressView({ stream: other.stream })!(progress({ finished: true }));
    expect(other.writes[0]).toMatch(/ · done\n$/);
  });

  it('draws at most ten times a second, then the latest state after a quiet spell', () => {
    const { writes, stream } = terminal();
    const view = progressView({ stream })!;
    for (let records = 1; records <= 1000; records++) view(progress({ records }));
    expect(writes).toHaveLength(1);
    vi.advanceTimersByTime(100);
    expect(writes).toHaveLength(2);
    expect(writes[1]).toContain('1,000 records');
    vi.advanceTimersByTime(1000);
    expect(writes).toHaveLength(2);
  });

  it('draws the final state at once, dropping a pending one', () => {
    const { writes, stream } = terminal();
    const view = progressView({ stream })!;
    view(progress({ records: 1 }));
    view(progress({ records: 2 }));
    view(progress({ records: 3, finished: true }));
    vi.advanceTimersByTime(1000);
    expect(writes.map((text) => /([\d,]+) record/.exec(text)?.[1])).toEqual(['1', '3']);
  });

  it('cuts the line to the terminal width', () => {
    const { writes, stream } = terminal(30);
    progressView({ stream })!(progress());
    expect(writes[0]).toBe('\r\x1b[K3,000 records · 12 pages · 1…');
  });

  it('is undefined when output is not a terminal and not a notebook', () => {
    expect(progressView({ stream: { isTTY: false, write: () => true } })).toBeUndefined();
    expect(progressView({ stream: { write: () => true } })).toBeUndefined();
  });
});

describe('progress view in a Deno Jupyter kernel (a stubbed Deno.jupyter.broadcast)', () => {
  function stubKernel() {
    const messages: Array<[string, DisplayMessage]> = [];
    (globalThis as { Deno?: unknown }).Deno = {
      jupyter: { broadcast: async (type: string, content: DisplayMessage) => void messages.push([type, content]) },
    };
    return messages;
  }

  it('shows one display and updates it in place by its id, in order', async () => {
    const messages = stubKernel();
    const { writes, stream } = terminal();
    const view = progressView({ stream })!;
    view(progress({ records: 10 }));
    vi.advanceTimersByTime(150);
    view(progress({ records: 20 }));
    view(progress({ records: 30, finished: true, walks: { done: 3, total: 3 } }));
    await vi.runAllTimersAsync();
    expect(writes).toEqual([]);
    expect(messages.map(([type]) => type)).toEqual(['display_data', 'update_display_data', 'update_display_data']);
    const ids = new Set(messages.map(([, content]) => content.transient.display_id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^socialstream-progress-/);
    const [, last] = messages[2];
    expect(last.data['text/plain']).toBe('30 records · 12 pages · 12 credits · 15 records/s · walks 3/3 · 2.0 s · done');
    expect(last.data['text/html']).toContain('<progress value="3" max="3"');
    expect(last.metadata).toEqual({});
  });

  it('escapes what stopped it in the HTML', async () => {
    const messages = stubKernel();
    progressView()!(progress({ finished: true, stoppedBy: '<b>x</b>' }));
    await vi.runAllTimersAsync();
    expect(messages[0][1].data['text/html']).toContain('stopped by &lt;b&gt;x&lt;/b&gt;');
    expect(messages[0][1].data['text/html']).not.toContain('<b>');
  });

  it('never fails the walk when a broadcast fails', async () => {
    (globalThis as { Deno?: unknown }).Deno = { jupyter: { broadcast: async () => Promise.reject(new Error('kernel gone')) } };
    const view = progressView()!;
    view(progress());
    view(progress({ finished: true }));
    await vi.runAllTimersAsync();
  });

  it('falls back to the terminal where reading Deno.jupyter throws (Deno outside a kernel)', () => {
    (globalThis as { Deno?: unknown }).Deno = Object.defineProperty({}, 'jupyter', {
      get() {
        throw new TypeError('Deno.jupyter is only available in `deno jupyter`');
      },
    });
    const { writes, stream } = terminal();
    progressView({ stream })!(progress());
    expect(writes).toHaveLength(1);
  });
});
