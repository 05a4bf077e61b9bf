/**
 * The queue's own failures, each with a stable `code` (docs/queue.md lists the exit
 * code the CLI gives each). `QueueError` itself is a refusal: a bad address, a parameter holding the
 * API key. The subclasses say why Redis could not be used: every message names the address (its
 * password hidden) and the fix.
 */
import { SocialstreamError } from '../errors.ts';

/**
 * A queue's Redis address that cannot work, or a job refused; its subclasses say which
 * (`QueueUnreachableError`, …).
 */
export class QueueError extends SocialstreamError {
  readonly code: string = 'QUEUE';
}

/** Redis did not answer (refused, timed out, reset): worth trying again later, unlike the errors below. */
export class QueueUnreachableError extends QueueError {
  override readonly code = 'QUEUE_UNREACHABLE';
}

/** The peer at the address answered, but not as Redis does (an HTTP server, say). */
export class QueueNotRedisError extends QueueError {
  override readonly code = 'QUEUE_NOT_REDIS';
}

/** Redis refused the address's password, or needs one the address lacks. */
export class QueueAuthError extends QueueError {
  override readonly code = 'QUEUE_AUTH';
}

/** The address names a database index the server does not have (`redis://…/99` where Redis has 16). */
export class QueueDatabaseError extends QueueError {
  override readonly code = 'QUEUE_DATABASE';
  constructor(
    message: string,
    /** The index asked for. */
    readonly database: number,
  ) {
    super(message);
  }
}

/** `rediss://` to a server that speaks no TLS, or `redis://` to one that speaks only TLS. */
export class QueueTlsError extends QueueError {
  override readonly code = 'QUEUE_TLS';
}
