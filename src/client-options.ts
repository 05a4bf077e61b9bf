/**
 * `createClient`'s options, checked in one place before anything is opened: a bad value is a
 * `TypeError` naming it, a missing or malformed key an `AuthError`, an unusable address a
 * `BaseUrlError`, so a refused option never leaves a connection pool behind.
 */
import { AuthError, KeyFormatError } from './errors.ts';
import { refuseUnknownOptions, type KnownOptions } from './known-options.ts';
import { MAX_TIMER_MS, type RetryOptions } from './retry.ts';

/**
 * Options of `createClient`: the key and address (by default from `SOCIALSTREAM_API_KEY` and
 * `SOCIALSTREAM_BASE_URL`), timeouts, retries, concurrency and rate. docs/reference.md lists each
 * with its default.
 */
export interface ClientOptions {
  /**
   * Default: the `SOCIALSTREAM_API_KEY` environment variable. Never printed or logged. Surrounding
   * white space (a trailing `\r` from a Windows `.env` too) is trimmed; a key with a control character
   * inside is refused with an `AuthError` before any request.
   */
  apiKey?: string;
  /** Default: the `SOCIALSTREAM_BASE_URL` environment variable. HTTPS, or plain HTTP on loopback only. */
  baseUrl?: string | URL;
  /** Per attempt, from sending to the last byte of the body. Default 60,000 (transcripts take 10-30 s). */
  timeoutMs?: number;
  /**
   * The largest response body read, in bytes. A larger one fails the attempt with a
   * `ResponseFormatError` (not retried) and the rest of it is never read. Default 67,108,864 (64 MiB).
   */
  maxBodyBytes?: number;
  retry?: RetryOptions;
  /** Requests in flight at once across the whole client. Default 8. */
  maxConcurrentRequests?: number;
  /** Spaces every request of the client at least `1 / requestsPerSecond` apart. */
  rateLimit?: { requestsPerSecond: number };
  /** Aborting ends every request, wait and walk of the client. */
  signal?: AbortSignal;
}

/** `ClientOptions` checked, with their defaults. */
export interface ClientSettings {
  apiKey: string;
  baseUrl: URL;
  timeoutMs: number;
  maxBodyBytes: number;
  retry: RetryOptions | undefined;
  maxConcurrentRequests: number;
  rateLimit: { requestsPerSecond: number } | undefined;
  signal: AbortSignal | undefined;
}

const CLIENT_OPTIONS = {
  apiKey: true,
  baseUrl: true,
  timeoutMs: true,
  maxBodyBytes: true,
  retry: true,
  maxConcurrentRequests: true,
  rateLimit: true,
  signal: true,
} as const satisfies KnownOptions<ClientOptions>;

export function checkClientOptions(options: ClientOptions): ClientSettings {
  refuseUnknownOptions(options, CLIENT_OPTIONS, 'createClient');
  const {
    apiKey = process.env.SOCIALSTREAM_API_KEY,
    baseUrl = process.env.SOCIALSTREAM_BASE_URL,
    timeoutMs = 60_000,
    maxBodyBytes = 64 * 1024 * 1024,
    retry,
    maxConcurrentRequests = 8,
    rateLimit,
    signal,
  } = options;
  const settings = { apiKey: checkApiKey(apiKey), baseUrl: checkBaseUrl(baseUrl), timeoutMs, maxBodyBytes, retry, maxConcurrentRequests, rateLimit, signal };
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMER_MS) {
    throw new TypeError(`timeoutMs must be a positive number of milliseconds up to ${MAX_TIMER_MS}, got ${String(timeoutMs)}`);
  }
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new TypeError(`maxBodyBytes must be a positive integer, got ${String(maxBodyBytes)}`);
  }
  if (!Number.isSafeInteger(maxConcurrentRequests) || maxConcurrentRequests < 1) {
    throw new TypeError(`maxConcurrentRequests must be a positive integer, got ${String(maxConcurrentRequests)}`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  if (rateLimit !== undefined && (typeof rateLimit !== 'object' || rateLimit === null)) {
    throw new TypeError('rateLimit must be an object: { requestsPerSecond }');
  }
  return settings;
}

/**
 * The key as sent: trimmed, and refused if a control character remains, which no real key holds and
 * which no HTTP header may carry. The message gives its position, never the key.
 */
function checkApiKey(value: string | undefined): string {
  const key = typeof value === 'string' ? value.trim() : '';
  if (key === '') throw new AuthError('No API key: pass createClient({ apiKey }) or set the SOCIALSTREAM_API_KEY environment variable');
  for (let index = 0; index < key.length; index++) {
    const code = key.charCodeAt(index);
    if (!isControl(code)) continue;
    const hex = code.toString(16).toUpperCase().padStart(4, '0');
    throw new KeyFormatError(`holds a control character (U+${hex} at position ${index + 1}); copy the key again`);
  }
  return key;
}

/** C0 and C1 control characters, DEL included: none belongs in a key or an HTTP header. */
function isControl(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** The base URL as a URL: HTTPS anywhere, plain HTTP only on loopback (the sandbox). */
function checkBaseUrl(value: string | URL | undefined): URL {
  if (value === undefined || value === '') {
    throw new BaseUrlError(undefined, 'No base URL: pass createClient({ baseUrl }) or set the SOCIALSTREAM_BASE_URL environment variable');
  }
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new BaseUrlError(`is not a URL: ${JSON.stringify(String(value))}`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new BaseUrlError('must not carry credentials, a query or a fragment');
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && LOOPBACK.test(url.hostname)) return url;
  throw new BaseUrlError(`must use https (plain http is allowed on loopback only), got ${url.protocol}//${url.host}`);
}

/**
 * A base URL that cannot be used (a programming error, so a `TypeError`). `problem` says what is
 * wrong with it (undefined when there is none), so a caller that took it from elsewhere (the CLI, from
 * SOCIALSTREAM_BASE_URL) can name its own source.
 */
export class BaseUrlError extends TypeError {
  override readonly name = 'BaseUrlError';
  constructor(
    readonly problem: string | undefined,
    message = `baseUrl ${problem}`,
  ) {
    super(message);
  }
}
