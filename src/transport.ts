/**
 * HTTP on undici: one keep-alive `Pool` per client, the key in `X-API-Key` only (never a Bearer,
 * never the URL), a per-request timeout, and every response body read to the end or destroyed.
 * A response becomes an `Attempt`: the parsed body, or a typed error with whether a retry may help.
 * Messages are built from the operation id, the status and the service's `error` text, with the
 * key scrubbed out in case a service or proxy ever echoes it.
 *
 * A hostile or broken service must not be able to hang the client or exhaust its memory: the timeout
 * ends the attempt by its own timer (not only through undici's abort), and a body is read only up to
 * `maxBodyBytes`. (`parseExact` is not recursive; the walks over records bound their depth.) An
 * integer past 2^53 in a body becomes a `bigint`, with its digits (`exact-json.ts`).
 *
 * Bodies may come compressed (a proxy or CDN may compress unasked), so the client asks for gzip,
 * deflate and br and decodes them as they stream in; the size limit counts decoded bytes, so a small
 * compressed body cannot unpack into gigabytes. A body that cannot be decoded (an encoding the client
 * does not know, or data that is not what its header says) fails its attempt once: a second attempt
 * would get the same bytes and pay for them again.
 */
import { type Readable, pipeline, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Pool } from 'undici';
import {
  AuthError,
  InsufficientCreditsError,
  NetworkError,
  ResponseFormatError,
  ServiceConfigError,
  type SocialstreamError,
  UpstreamError,
  ValidationError,
} from './errors.ts';
import { parseExact } from './exact-json.ts';
import { keyScrubber } from './scrub.ts';
import { markServedAt } from './service-time.ts';

export type Attempt =
  | { ok: true; body: unknown }
  | {
      ok: false;
      error: SocialstreamError;
      /** A retry may succeed (network trouble, 5xx, upstream, a body cut short). */
      retry: boolean;
      /** From `Retry-After`, when the response had one. */
      retryAfterMs?: number;
      /** The service may have charged for it (a 200 whose body could not be read). */
      charged: boolean;
    };

export interface TransportOptions {
  baseUrl: URL;
  apiKey: string;
  timeoutMs: number;
  connections: number;
  maxBodyBytes: number;
}

export class Transport {
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #headers: Record<string, string>;
  readonly #scrub: (text: string) => string;
  readonly #timeoutMs: number;
  readonly #maxBodyBytes: number;

  constructor(options: TransportOptions) {
    this.#pool = new Pool(options.baseUrl.origin, { connections: options.connections });
    this.#basePath = options.baseUrl.pathname.replace(/\/+$/, '');
    this.#headers = { 'x-api-key': options.apiKey, accept: 'application/json', 'accept-encoding': ACCEPTED_ENCODINGS };
    const scrub = keyScrubber(options.apiKey);
    this.#scrub = (text) => scrub(text).slice(0, 300);
    this.#timeoutMs = options.timeoutMs;
    this.#maxBodyBytes = options.maxBodyBytes;
  }

  /**
   * One GET of `path` (from `/v1/…`). Resolves to an `Attempt` whatever the service answered;
   * rejects only with `signal`'s reason when the caller aborts. The timeout and the caller's abort
   * settle it by themselves, so an attempt ends on time even if undici never notices the abort.
   */
  async get(path: string, query: Record<string, string>, endpoint: string, signal?: AbortSignal): Promise<Attempt> {
    signal?.throwIfAborted();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const timedOut = new Promise<Attempt>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(TIMED_OUT);
        resolve(failed(new NetworkError(`${endpoint}: no complete response within ${this.#timeoutMs} ms`, { endpoint }), true));
      }, this.#timeoutMs);
    });
    // Only a caller's signal can abort: without one, the race is the answer against the timer.
    const aborted =
      signal === undefined
        ? undefined
        : new Promise<never>((_, reject) => {
            onAbort = () => {
              controller.abort(signal.reason);
              reject(signal.reason);
            };
            signal.addEventListener('abort', onAbort, { once: true });
          });
    const attempt = this.#attempt(path, query, endpoint, controller.signal);
    try {
      return await Promise.race(aborted === undefined ? [attempt, timedOut] : [attempt, timedOut, aborted]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      // Whatever lost the race ends in the background; make sure its socket and body are released.
      controller.abort(TIMED_OUT);
      aborted?.catch(() => undefined);
    }
  }

  /** The request and its body, read up to the size limit. Never rejects. */
  async #attempt(path: string, query: Record<string, string>, endpoint: string, signal: AbortSignal): Promise<Attempt> {
    const search = queryString(query);
    try {
      const response = await this.#pool.request({
        method: 'GET',
        path: this.#basePath + path + (search === '' ? '' : `?${search}`),
        headers: this.#headers,
        signal,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const codings = codingsOf(response.headers['content-encoding']);
      const unknown = codings.find((coding) => !(coding in DECODERS));
      if (unknown !== undefined) {
        response.body.destroy();
        return this.#undecodable(response.statusCode, `it is encoded as ${JSON.stringify(unknown.slice(0, 40))}, which the client cannot decode`, endpoint);
      }
      // Which stream failed first: the connection (the body was cut short) or a decoder (bad data).
      let brokeFirst: 'body' | 'decoder' | undefined;
      response.body.once('error', () => (brokeFirst ??= 'body'));
      const decoded = decodedBody(response.body, codings, () => (brokeFirst ??= 'decoder'));
      let text: string | undefined;
      try {
        text = await readBounded(decoded, response.headers['content-length'], this.#maxBodyBytes);
      } catch (error) {
        response.body.destroy();
        if (signal.aborted) throw error;
        if (brokeFirst === 'decoder') {
          const reason = error instanceof Error ? `: ${this.#scrub(error.message)}` : '';
          return this.#undecodable(response.statusCode, `it is not valid ${codings.join(' + ')} data${reason}`, endpoint);
        }
        return this.#cutShort(response.statusCode, error, endpoint);
      }
      if (text === undefined) {
        response.body.destroy();
        const error = new ResponseFormatError(
          `${endpoint}: the response body is larger than the limit of ${this.#maxBodyBytes} bytes; stopped reading it`,
          { endpoint, status: response.statusCode },
        );
        return { ok: false, error, retry: false, charged: response.statusCode === 200 };
      }
      const attempt = this.#classify(response.statusCode, response.headers['retry-after'], text, endpoint);
      return attempt.ok ? { ok: true, body: markServedAt(attempt.body, response.headers.date) } : attempt;
    } catch (error) {
      return failed(this.#networkError(error, endpoint), true);
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  #classify(status: number, retryAfter: string | string[] | undefined, text: string, endpoint: string): Attempt {
    let body: unknown;
    let parsed = true;
    try {
      body = parseExact(text);
    } catch {
      parsed = false;
    }
    const details = { endpoint, status };
    if (!parsed && status === 200) {
      // Charged (the service did the work) but unreadable: a body cut short is worth a retry.
      const error = new ResponseFormatError(`${endpoint}: the response body is not complete JSON (${text.length} byte${text.length === 1 ? '' : 's'})`, details);
      return { ok: false, error, retry: true, charged: true };
    }
    const message = errorText(body);
    if (status === 200 && message === undefined) return { ok: true, body };
    const said = `${message === undefined ? '' : `${this.#scrub(message)} `}(HTTP ${status}${parsed ? '' : ', body not JSON'})`;
    const retryAfterMs = parseRetryAfter(retryAfter);
    if (message?.startsWith('Failed to fetch')) {
      return { ok: false, error: new UpstreamError(`${endpoint}: ${said}`, details), retry: true, retryAfterMs, charged: false };
    }
    if (message === 'Service configuration error') return failed(new ServiceConfigError(`${endpoint}: ${said}`, details), false);
    switch (status) {
      case 200:
        return failed(new ResponseFormatError(`${endpoint}: a 200 response carrying an error: ${said}`, details), false);
      case 401:
        return failed(new AuthError(`${endpoint}: the API key was not accepted: ${said}`, details), false);
      case 402: {
        const { required, available } = (parsed && typeof body === 'object' && body !== null ? body : {}) as { required?: unknown; available?: unknown };
        return failed(new InsufficientCreditsError(`${endpoint}: ${said}`, numberOr(required, 1), numberOr(available, 0), details), false);
      }
      case 400:
      case 404:
        return failed(new ValidationError(`${endpoint}: ${said}`, paramOf(message), details), false);
      default: {
        const retry = status >= 500 || status === 429;
        return { ok: false, error: new UpstreamError(`${endpoint}: ${said}`, details), retry, retryAfterMs, charged: false };
      }
    }
  }

  /** The body cannot be decoded: the same bytes would come again, so one attempt is all it costs. */
  #undecodable(status: number, why: string, endpoint: string): Attempt {
    const error = new ResponseFormatError(`${endpoint}: the response body cannot be read (HTTP ${status}): ${why}`, { endpoint, status });
    return { ok: false, error, retry: false, charged: status === 200 };
  }

  /** The headers came but the connection broke in the body: the answer is incomplete, and a 200 was charged. */
  #cutShort(status: number, error: unknown, endpoint: string): Attempt {
    const cause = error instanceof Error ? error : undefined;
    const text = cause === undefined ? 'unknown failure' : this.#scrub(cause.message);
    const message = `${endpoint}: the response body was cut short (HTTP ${status}): ${text}`;
    return { ok: false, error: new ResponseFormatError(message, { endpoint, status, cause }), retry: true, charged: status === 200 };
  }

  #networkError(error: unknown, endpoint: string): NetworkError {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
    const text = error instanceof Error ? this.#scrub(error.message) : 'unknown failure';
    return new NetworkError(`${endpoint}: network failure${code === undefined ? '' : ` ${code}`}: ${text}`, {
      endpoint,
      cause: error instanceof Error ? error : undefined,
    });
  }
}

const TIMED_OUT = Symbol('timed out');

/**
 * The query as RFC 3986 percent-encoding of every name and value. Not `URLSearchParams`, which sends
 * a space as `+`: a server that percent-decodes without form rules would read a literal `+`. Here a
 * cursor the service sent (`a%2Fb+c=`) decodes back to exactly those bytes under either reading.
 */
function queryString(query: Record<string, string>): string {
  let search = '';
  for (const name in query) search += `${search === '' ? '' : '&'}${encodeURIComponent(name)}=${encodeURIComponent(query[name])}`;
  return search;
}

/** What the client asks for in `accept-encoding`: what Node decodes without a dependency. */
const ACCEPTED_ENCODINGS = 'gzip, deflate, br';

const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The codings of a `content-encoding` header, in the order they were applied (`identity` is none). */
function codingsOf(header: string | string[] | undefined): string[] {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  return value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** `body` with `codings` undone, last applied first; `onDecoderError` hears a decoder fail. */
function decodedBody(body: Readable, codings: readonly string[], onDecoderError: () => void): Readable {
  if (codings.length === 0) return body;
  const decoders = [...codings].reverse().map((coding) => DECODERS[coding]());
  for (const decoder of decoders) decoder.once('error', onDecoderError);
  // `pipeline` destroys every stream when one fails and hands the error to the last one, which is read.
  return pipeline([body, ...decoders], () => undefined) as unknown as Readable;
}

function failed(error: SocialstreamError, retry: boolean): Attempt {
  return { ok: false, error, retry, charged: false };
}

/**
 * The body as text, or undefined once it grows past `limit` bytes (then the rest is never read). A
 * `Content-Length` over the limit is refused before the first chunk.
 */
function readBounded(body: Readable, length: string | string[] | undefined, limit: number): Promise<string | undefined> {
  if (typeof length === 'string' && Number(length) > limit) return Promise.resolve(undefined);
  // Plain 'data' events rather than `for await`: a promise per chunk is a measurable share of a walk.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.removeAllListeners('data');
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    body.once('error', reject);
    body.once('end', () => {
      const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8');
      // As undici's own `body.text()` does: a byte-order mark is not part of the JSON.
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
  });
}

/** The `error` string of an error body, if the body is one. */
function errorText(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { error } = body as { error?: unknown };
  return typeof error === 'string' ? error : undefined;
}

/** The parameter a 400 message names (docs/wire.md message forms), when it names one. */
function paramOf(message: string | undefined): string | undefined {
  const match = message === undefined ? null : /^(?:Missing required parameter: |Invalid value for )(\w+)/.exec(message);
  return match?.[1];
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** `Retry-After` as milliseconds: delta seconds or an HTTP date. */
function parseRetryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
