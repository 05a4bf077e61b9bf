/**
 * How a failed command ends: one line on stderr naming the problem and the fix, and the exit code
 * DESIGN gives it. Stack traces only with `--debug`.
 */
import {
  AuthError,
  InsufficientCreditsError,
  PaginationLoopError,
  ResponseFormatError,
  ServiceConfigError,
  UpstreamError,
  ValidationError,
} from '../errors.ts';
import { UsageError } from './args.ts';

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  auth: 3,
  credits: 4,
  upstream: 5,
  interrupted: 130,
} as const;

export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';
}

/** Whether the output written so far was kept and `--resume` can continue after this failure. */
export function isResumable(code: number): boolean {
  return code === EXIT.auth || code === EXIT.credits || code === EXIT.upstream || code === EXIT.interrupted;
}

export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof ValidationError || error instanceof TypeError) return EXIT.usage;
  if (error instanceof AuthError) return EXIT.auth;
  if (error instanceof InsufficientCreditsError) return EXIT.credits;
  if (
    error instanceof UpstreamError ||
    error instanceof ResponseFormatError ||
    error instanceof ServiceConfigError ||
    error instanceof PaginationLoopError
  ) {
    return EXIT.upstream;
  }
  if (error instanceof InterruptedError) return EXIT.interrupted;
  return EXIT.failure;
}

/** The one line a user reads: what went wrong and what to do next. */
export function explain(error: unknown, resumeHint: string | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  const resume = resumeHint ? ` ${resumeHint}` : '';
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
      `Buy credits, then run the same command with --resume to continue without paying again for finished pages.`
    );
  }
  if (error instanceof InterruptedError) return `socialstream: interrupted.${resume}`;
  if (exitCodeOf(error) === EXIT.upstream) return `socialstream: the service failed after retries: ${message}.${resume}`;
  return `socialstream: ${message}`;
}
