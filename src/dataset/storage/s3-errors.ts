/**
 * An S3 request's failure as one of our typed errors, on one line. The message is built from the
 * location, the endpoint's host, what was being done and the error's name and status, never from
 * the SDK's message or the request: those can hold a signature, a string to sign or a signed URL,
 * and a credential must never reach a message.
 */
import { StorageAccessError, StorageError, StorageNotFoundError, StorageUnreachableError } from '../../errors.ts';
import { AWS_S3 } from './s3-client.ts';

const REFUSED_CREDENTIALS = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken', 'TokenRefreshRequired', 'AccessDenied', 'AllAccessDisabled', 'InvalidClientTokenId', 'UnrecognizedClientException']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** What a failed request tells: the SDK error's name, its HTTP status, and a system error code when the request never got an answer. */
interface Failure {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** The HTTP status of a failed request, when it got an answer. */
export function statusOf(error: unknown): number | undefined {
  return (error as Failure | undefined)?.$metadata?.httpStatusCode;
}

/** `error`, raised while `action` (`reading orders/x.parquet`) at `location` through `endpoint`, as a typed error. */
export function storageErrorOf(error: unknown, location: string, endpoint: string, action: string): StorageError {
  if (error instanceof StorageError) return error;
  const failure = (typeof error === 'object' && error !== null ? error : {}) as Failure;
  const name = failure.name ?? 'Error';
  const status = statusOf(error);
  const details = { cause: error, ...(status === undefined ? {} : { status }) };
  if (name === 'CredentialsProviderError') {
    return new StorageAccessError(`${location}: no AWS credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE`, location, details);
  }
  if (REFUSED_CREDENTIALS.has(name) || status === 403) {
    return new StorageAccessError(`${location}: ${endpoint} refused the credentials while ${action} (${name}, HTTP ${status ?? 403}); check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_PROFILE, and the bucket's permissions`, location, details);
  }
  if (name === 'NoSuchBucket') {
    return new StorageNotFoundError(`${location}: ${endpoint} has no such bucket`, location, details);
  }
  const system = failure.code ?? causeCode(error);
  if (status === undefined && (name === 'TimeoutError' || (system !== undefined && UNREACHABLE.has(system)))) {
    const check = endpoint === AWS_S3 ? 'the network' : 'AWS_ENDPOINT_URL_S3 and the network';
    return new StorageUnreachableError(`${location}: cannot reach ${endpoint} (${system ?? name}); check ${check}`, location, details);
  }
  if (status === undefined && /region is missing/i.test(failure.message ?? '')) {
    return new StorageError(`${location}: no AWS region set; set AWS_REGION`, location, details);
  }
  return new StorageError(`${location}: ${action} failed at ${endpoint} (${name}${status === undefined ? '' : `, HTTP ${status}`})`, location, details);
}

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}
