/** The queue's own failures: Redis unreachable, a bad address, a run that cannot be enqueued. */
import { SocialstreamError } from '../errors.ts';

export class QueueError extends SocialstreamError {
  readonly code = 'QUEUE';
}
