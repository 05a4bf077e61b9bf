/**
 * `createClient()`: the operation table turned into methods (`client.forum.subforum(…)`), plus
 * `credits()`, `request()`, `resume()`, `stats` and `events$`. Options are checked here, once; a
 * missing key or base URL fails at creation, before any request could be made.
 */
import type { Observable } from 'rxjs';
import { type Checkpoint, checkCheckpoint } from './checkpoint.ts';
import { AuthError, KeyFormatError, ResponseFormatError, ValidationError } from './errors.ts';
import { ThrottleGate } from './gates.ts';
import { type ClientEvent, type ClientStats, Meter } from './metering.ts';
import { checkParams, type ParamsOf, type ParamValue } from './operations/params.ts';
import { findOperation, type Operation, type OperationId, OPERATIONS } from './operations/table.ts';
import type { OperationSpec } from './operations/spec.ts';
import { strategyFor } from './pagination/index.ts';
import type { CreditBalance, PagesByOperation, RecordsByOperation } from './records/index.ts';
import { Requester, STOPPED } from './requester.ts';
import { MAX_TIMER_MS, type RetryOptions, retryPolicy } from './retry.ts';
import type { HeldPages } from './page-reader.ts';
import { RecordStream } from './stream.ts';
import type { StreamOptions } from './stream-options.ts';
import type { WalkStart } from './walk.ts';
import { keyScrubber } from './scrub.ts';
import { Transport } from './transport.ts';

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

/** The stream of one operation row: its records and raw pages typed from `records/`. */
export type OperationStream<Id extends OperationId> = RecordStream<RecordsByOperation[Id], PagesByOperation[Id]>;

type MethodOf<Op extends Operation> = Record<never, never> extends ParamsOf<Op>
  ? (params?: ParamsOf<Op>, options?: StreamOptions) => OperationStream<Op['id']>
  : (params: ParamsOf<Op>, options?: StreamOptions) => OperationStream<Op['id']>;

/** `client.<group>.<method>` for every row of the table. */
export type OperationGroups = {
  [G in Operation['group']]: { [Op in Extract<Operation, { group: G }> as Op['method']]: MethodOf<Op> };
};

export interface Client extends OperationGroups {
  /** The operation table, as data. */
  readonly operations: typeof OPERATIONS;
  /** Totals so far (a snapshot). */
  readonly stats: Readonly<ClientStats>;
  readonly events$: Observable<ClientEvent>;
  /** Any operation by id, e.g. `client.stream('forum/subforum', { subforum: 'x' })`. */
  stream<Id extends OperationId>(id: Id, params: ParamsOf<Extract<Operation, { id: Id }>>, options?: StreamOptions): OperationStream<Id>;
  /** A walk that continues after the last finished page of `checkpoint`. */
  resume(checkpoint: Checkpoint, options?: StreamOptions): RecordStream<unknown>;
  /** The balance of the key's account (E1). */
  credits(options?: { signal?: AbortSignal }): Promise<CreditBalance>;
  /** One GET of any `/v1/…` path: envelope checked, metered, retried like every request. */
  request(path: string, query?: Record<string, ParamValue>, options?: { signal?: AbortSignal }): Promise<unknown>;
  /** Closes the connection pool. */
  close(): Promise<void>;
}

export function createClient(options: ClientOptions = {}): Client {
  const {
    apiKey: givenKey = process.env.SOCIALSTREAM_API_KEY,
    baseUrl = process.env.SOCIALSTREAM_BASE_URL,
    timeoutMs = 60_000,
    maxBodyBytes = 64 * 1024 * 1024,
    retry,
    maxConcurrentRequests = 8,
    rateLimit,
    signal: clientSignal,
  } = options;
  const apiKey = checkApiKey(givenKey);
  const base = checkBaseUrl(baseUrl);
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMER_MS) {
    throw new TypeError(`timeoutMs must be a positive number of milliseconds up to ${MAX_TIMER_MS}, got ${String(timeoutMs)}`);
  }
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new TypeError(`maxBodyBytes must be a positive integer, got ${String(maxBodyBytes)}`);
  }
  if (!Number.isSafeInteger(maxConcurrentRequests) || maxConcurrentRequests < 1) {
    throw new TypeError(`maxConcurrentRequests must be a positive integer, got ${String(maxConcurrentRequests)}`);
  }
  if (clientSignal !== undefined && !(clientSignal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  if (rateLimit !== undefined && (typeof rateLimit !== 'object' || rateLimit === null)) {
    throw new TypeError('rateLimit must be an object: { requestsPerSecond }');
  }
  const clientGates = rateLimit === undefined ? [] : [new ThrottleGate(rateLimit.requestsPerSecond)];
  const policy = retryPolicy(retry);
  // Only once every option passed: a refused option must not leave a connection pool behind.
  const meter = new Meter();
  const transport = new Transport({ baseUrl: base, apiKey, timeoutMs, connections: maxConcurrentRequests, maxBodyBytes });
  const scrub = keyScrubber(apiKey);
  const requester = new Requester(transport, meter, policy, maxConcurrentRequests, clientGates);

  const signalOf = (signal: AbortSignal | undefined): AbortSignal | undefined => {
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
    if (signal === undefined || clientSignal === undefined) return signal ?? clientSignal;
    return AbortSignal.any([clientSignal, signal]);
  };

  const open = (op: OperationSpec, query: Record<string, string>, start: WalkStart | undefined, options: StreamOptions = {}, held?: HeldPages): RecordStream<unknown> => {
    const strategy = strategyFor(op);
    const from = start ?? { pending: strategy.start(query), skip: 0, pagesDone: 0, recordsYielded: 0 };
    if (from.pending !== null && !strategy.isState(from.pending)) {
      throw new TypeError(`checkpoint.pending is not a continuation state of ${op.id}`);
    }
    const reopen = (checkpoint: Checkpoint | undefined, reopenOptions: StreamOptions, reopenHeld?: HeldPages) =>
      open(op, query, checkpoint === undefined ? undefined : checkCheckpoint(checkpoint), reopenOptions, reopenHeld);
    const parts = { op, query, strategy, requester, meter, signal: signalOf(options.signal), reopen, held, scrub };
    return new RecordStream<unknown, unknown>(parts, from, options);
  };

  const stream = (id: string, params: unknown, options?: StreamOptions): RecordStream<unknown> => {
    const op = findOperation(id);
    if (op === undefined) throw new ValidationError(`unknown operation ${JSON.stringify(id)}; see client.operations`, undefined, { endpoint: id });
    return open(op, checkedParams(op, params, apiKey), undefined, options);
  };

  const request = async (path: string, query: Record<string, ParamValue> = {}, options: { signal?: AbortSignal } = {}): Promise<unknown> => {
    if (typeof path !== 'string' || !/^\/v1\/[\w\-/.]*$/.test(path) || path.includes('..')) {
      throw new TypeError(`path must be a plain path under /v1/, got ${JSON.stringify(path)}`);
    }
    const wire: Record<string, string> = {};
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) wire[name] = String(value);
    const endpoint = path.replace(/^\/v1\/(scrape\/)?/, '');
    const scrape = path.startsWith('/v1/scrape/');
    const body = await requester.send({ endpoint, path, query: wire, chargeable: scrape }, [], signalOf(options.signal));
    if (body === STOPPED) throw new ResponseFormatError(`${endpoint}: the request was refused by a gate`, { endpoint });
    const envelope = body as { success?: unknown } | null;
    if (typeof envelope !== 'object' || envelope === null || (scrape && envelope.success !== true)) {
      throw new ResponseFormatError(`${endpoint}: the response is not a success envelope`, { endpoint, status: 200 });
    }
    return body;
  };

  const groups: Record<string, Record<string, (params?: unknown, options?: StreamOptions) => RecordStream<unknown>>> = {};
  for (const op of OPERATIONS) {
    groups[op.group] ??= {};
    groups[op.group][op.method] = (params, streamOptions) => stream(op.id, params, streamOptions);
  }

  const client = {
    ...groups,
    operations: OPERATIONS,
    get stats() {
      return meter.stats;
    },
    events$: meter.events$,
    stream,
    resume(checkpoint: Checkpoint, streamOptions?: StreamOptions) {
      const cp = checkCheckpoint(checkpoint);
      const op = findOperation(cp.operation);
      if (op === undefined) throw new TypeError(`checkpoint.operation ${JSON.stringify(cp.operation)} is not an operation id`);
      return open(op, checkedParams(op, cp.params, apiKey), cp, streamOptions);
    },
    async credits(creditOptions: { signal?: AbortSignal } = {}) {
      const body = await request('/v1/credits', {}, creditOptions);
      if (typeof (body as { credits?: unknown }).credits !== 'number') {
        throw new ResponseFormatError('credits: the response has no credits number', { endpoint: 'credits', status: 200 });
      }
      return body as CreditBalance;
    },
    request,
    close: () => transport.close(),
  };
  return client as unknown as Client;
}

/** `checkParams`, with the key scrubbed from the message in case a caller passed it as a value. */
function checkedParams(op: OperationSpec, params: unknown, apiKey: string): Record<string, string> {
  try {
    return checkParams(op, params);
  } catch (error) {
    if (error instanceof ValidationError && error.message.includes(apiKey)) {
      throw new ValidationError(error.message.split(apiKey).join('[redacted]'), error.param, { endpoint: error.endpoint });
    }
    throw error;
  }
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
