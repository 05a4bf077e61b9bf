/**
 * Progress on stderr while an export runs (only when stderr is a terminal), and the one-line summary
 * at the end. Data never goes to stderr; this module never writes to stdout.
 */
/** `1 page`, `2 pages`: every count the CLI prints goes through here. */
export function counted(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : `${noun}s`}`;
}

export interface ProgressCounts {
  records: number;
  pages: number;
  credits: number;
}

export class Progress {
  private readonly started = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private drawn = false;

  constructor(
    private readonly counts: () => ProgressCounts,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    if (stream.isTTY) {
      this.timer = setInterval(() => this.draw(), 250);
      this.timer.unref();
    }
  }

  elapsedSeconds(): number {
    return (Date.now() - this.started) / 1000;
  }

  private draw(): void {
    const { records, pages, credits } = this.counts();
    const seconds = this.elapsedSeconds();
    const rate = seconds > 0 ? Math.round(records / seconds) : 0;
    this.stream.write(`\r\x1b[K${counted(records, 'record')} · ${counted(pages, 'page')} · ${counted(credits, 'credit')} · ${rate} rec/s · ${seconds.toFixed(1)} s`);
    this.drawn = true;
  }

  /** Stops the live line and clears it, so the summary starts on a clean line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.drawn) this.stream.write('\r\x1b[K');
  }
}
