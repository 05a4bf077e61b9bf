/**
 * What both stores check of a `readTail` before they read: a count of bytes a footer check can ask
 * for. Kept apart so the local folder and S3 refuse the same counts the same way.
 */
import { OptionError } from '../../errors.ts';

/** Refuses a tail of no bytes, or of a count that is not a whole number (`Range: bytes=-0` means nothing to S3). */
export function checkTailBytes(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new OptionError([{ option: 'bytes' }, ` of a tail must be a whole number of at least 1, not ${String(bytes)}`]);
}
