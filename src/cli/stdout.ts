/**
 * Standard output as a reader may close it: `socialstream export … --out - | head` must end quietly
 * when `head` has read enough, not die of an unhandled `EPIPE`.
 */
/** Standard output failed or its reader went away; `code` is `EPIPE` for the latter. */
export class StdoutClosedError extends Error {
  override readonly name = 'StdoutClosedError';
  constructor(readonly code: string | undefined) {
    super(`cannot write to standard output${code === undefined ? '' : ` (${code})`}`);
  }
}

let failure: StdoutClosedError | undefined;

/** Listens for stdout's errors for the rest of the process, so none is thrown as uncaught. */
export function watchStdout(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    failure ??= new StdoutClosedError(error.code);
  });
}

/** Writes `text`, waiting while the pipe is full; rejects with `StdoutClosedError` once stdout failed. */
export async function writeStdout(text: string): Promise<void> {
  throwIfClosed();
  if (!process.stdout.write(text)) await drained();
  throwIfClosed();
}

function throwIfClosed(): void {
  if (failure !== undefined) throw failure;
}

/** Resolves when stdout drains, or fails or closes (then `failure` says why). */
function drained(): Promise<void> {
  const { stdout } = process;
  return new Promise((resolve) => {
    const done = (): void => {
      for (const event of EVENTS) stdout.off(event, done);
      resolve();
    };
    for (const event of EVENTS) stdout.on(event, done);
  });
}

const EVENTS = ['drain', 'error', 'close'] as const;
