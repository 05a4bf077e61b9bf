/**
 * How a failed command ends: one line on stderr naming the problem and the fix, and the exit code
 * docs/guide/cli.md lists for it, read off the error's stable `code` (never off its message). Stack traces only
 * with `--debug`.
 */
import { AuthError, InsufficientCreditsError, SocialstreamError, StorageError, ValidationError } from '../errors.ts';
import { constants } from 'node:os';
import { UsageError } from './args.ts';

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  auth: 3,
  credits: 4,
  upstream: 5,
  diskFull: 6,
} as const;

/** SOCIALSTREAM_API_KEY or SOCIALSTREAM_BASE_URL cannot be used as it is: a usage error with its own fix. */
export class EnvironmentError extends UsageError {
  override readonly name = 'EnvironmentError';
}

/** The run was stopped by a signal (Ctrl-C, SIGTERM, SIGHUP); it saved what it had first. */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';

  constructor(readonly signal: NodeJS.Signals = 'SIGINT') {
    super('interrupted');
  }
}

/** Some parameter sets of `--inputs` were rejected by the service; the others were exported. */
export class RejectedInputsError extends Error {
  override readonly name = 'RejectedInputsError';
}

/**
 * Ends a run with what stopped it, unchanged (an error of ours, an abort's reason), with `resumeHint`
 * attached for the message when one is given.
 */
export function stopWith(failure: unknown, resumeHint?: string): never {
  if (resumeHint !== undefined && typeof failure === 'object' && failure !== null) Object.assign(failure, { resumeHint });
  throw failure;
}

/** The exit code of each error code (docs/guide/cli.md); a code not listed is a plain failure (1). */
const EXIT_OF_CODE: Record<string, number> = {
  VALIDATION: EXIT.usage,
  LOCKED: EXIT.usage,
  HELD_STATE: EXIT.usage,
  OTHER_EXPORT: EXIT.usage,
  STATE_DAMAGED: EXIT.usage,
  NOT_WRITABLE: EXIT.usage,
  STREAM_USED: EXIT.usage,
  AUTH: EXIT.auth,
  INSUFFICIENT_CREDITS: EXIT.credits,
  CREDIT_CAP: EXIT.credits,
  UPSTREAM: EXIT.upstream,
  NETWORK: EXIT.upstream,
  RESPONSE_FORMAT: EXIT.upstream,
  SERVICE_CONFIG: EXIT.upstream,
  PAGINATION_LOOP: EXIT.upstream,
  DISK_FULL: EXIT.diskFull,
  // A dataset that refuses the run as asked (a partition change, a field named as its Hive key, another writer's lock).
  DATASET: EXIT.usage,
  DATASET_LAYOUT: EXIT.usage,
  // The queue's address cannot work (docs/queue.md); a Redis that did not answer may later.
  QUEUE: EXIT.usage,
  QUEUE_NOT_REDIS: EXIT.usage,
  QUEUE_AUTH: EXIT.usage,
  QUEUE_DATABASE: EXIT.usage,
  QUEUE_TLS: EXIT.usage,
  QUEUE_UNREACHABLE: EXIT.upstream,
  // A dataset's store that cannot work as given (docs/storage.md); one that did not answer may later.
  STORAGE_ACCESS: EXIT.usage,
  STORAGE_NOT_FOUND: EXIT.usage,
  STORAGE_NO_CONDITIONAL_WRITES: EXIT.usage,
  STORAGE_SDK_MISSING: EXIT.usage,
  STORAGE_NAME: EXIT.usage,
  STORAGE_UNREACHABLE: EXIT.upstream,
};

export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof TypeError || error instanceof RejectedInputsError) return EXIT.usage;
  // A store that cannot be used (docs/storage.md: no such bucket, a refused credential, no endpoint, no conditional writes).
  if (error instanceof StorageError) return EXIT.usage;
  if (error instanceof SocialstreamError) return EXIT_OF_CODE[error.code] ?? EXIT.failure;
  // 128 + the signal's number, as shells report a process a signal ended: SIGHUP 129, SIGINT 130, SIGTERM 143.
  if (error instanceof InterruptedError) return 128 + constants.signals[error.signal];
  return EXIT.failure;
}

/** The one line a user reads: what went wrong and what to do next. */
export function explain(error: unknown, resumeHint: string | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  const resume = resumeHint ? ` ${resumeHint}` : '';
  if (error instanceof EnvironmentError) return `socialstream: ${message}`;
  if (error instanceof UsageError) return `socialstream: ${message} (see --help)`;
  if (error instanceof ValidationError) return `socialstream: invalid request: ${message}`;
  if (error instanceof AuthError && error.status === undefined) {
    return `socialstream: no API key: set SOCIALSTREAM_API_KEY to a key from your dashboard, or add --sandbox to try the built-in sandbox.`;
  }
  if (error instanceof AuthError) {
    return `socialstream: the API key was refused (${message}). Set SOCIALSTREAM_API_KEY to a key from your dashboard, or use --sandbox.${resume}`;
  }
  if (error instanceof InsufficientCreditsError) {
    return (
      `socialstream: out of credits: the balance is ${error.available}, the next request needs ${error.required}. ` +
      (resumeHint
        ? `Buy credits, then run the same command with --resume to continue without paying again for finished pages.`
        : `Buy credits, then run the command again.`)
    );
  }
  if (error instanceof InterruptedError) return `socialstream: interrupted (${error.signal}).${resume}`;
  if (error instanceof SocialstreamError && error.code === 'DISK_FULL') return `socialstream: ${message}: free some space there.${resume}`;
  if (error instanceof SocialstreamError && error.code === 'QUEUE_UNREACHABLE') return `socialstream: ${message}`;
  if (exitCodeOf(error) === EXIT.upstream) return `socialstream: the service failed after retries: ${message}.${resume}`;
  return `socialstream: ${message}`;
}
