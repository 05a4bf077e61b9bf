/**
 * `createClient()`: the operation table turned into methods (`client.forum.subforum(…)`), plus
 * `credits()`, `request()`, `resume()`, `stats` and `events$`. Options are checked once, before
 * anything is opened (`client-options.ts`); a missing key or base URL fails at creation, before any
 * request could be made.
 */
import type { Observable } from 'rxjs';
import { type Checkpoint, checkCheckpoint } from './checkpoint.ts';
import { checkClientOptions, type ClientOptions } from './client-options.ts';
import { ResponseFormatError, ValidationError } from './errors.ts';
import { ThrottleGate } from './gates.ts';
import { type ClientEvent, type ClientStats, Meter } from './metering.ts';
import { checkParams, type ParamsOf, type ParamValue } from './operations/params.ts';
import { findOperation, type Operation, type OperationId, OPERATIONS } from './operations/table.ts';
import type { OperationSpec } from './operations/spec.ts';
import { strategyFor, type Strategy } from './pagination/index.ts';
import type { CreditBalance, PagesByOperation, RecordsByOperation } from './records/index.ts';
import { Requester, STOPPED } from './requester.ts';
import { retryPolicy } from './retry.ts';
import type { HeldPages } from './page-reader.ts';
import { RecordStream } from './stream.ts';
import type { StreamOptions } from './stream-options.ts';
import type { WalkStart } from './walk.ts';
import { keyScrubber } from './scrub.ts';
import { Transport } from './transport.ts';

export type { ClientOptions } from './client-options.ts';

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

/**
 * A client of the Social Data Extraction API: a method per operation (`client.forum.subforum(params,
 * options)`) returning a `RecordStream`, plus `credits()`, `request()`, `resume()`, `stats` and
 * `events$`. The key and address come from `options`, else from `SOCIALSTREAM_API_KEY` and
 * `SOCIALSTREAM_BASE_URL`; without a key it throws `AuthError`, before any request.
 */
export function createClient(options: ClientOptions = {}): Client {
  const client = new SocialstreamClient(options);
  const groups: Record<string, Record<string, (params?: unknown, options?: StreamOptions) => RecordStream<unknown>>> = {};
  for (const op of OPERATIONS) {
    groups[op.group] ??= {};
    groups[op.group][op.method] = (params, streamOptions) => client.stream(op.id, params, streamOptions);
  }
  // Methods work taken off the client too (`const { credits } = client`), as they did when it was a plain object.
  const bound = {
    stream: client.stream.bind(client),
    resume: client.resume.bind(client),
    credits: client.credits.bind(client),
    request: client.request.bind(client),
    close: client.close.bind(client),
  };
  return Object.assign(client, groups, bound) as unknown as Client;
}

/** What every client is; `createClient` adds a method per operation of the table to it. */
class SocialstreamClient {
  readonly operations = OPERATIONS;
  readonly events$: Observable<ClientEvent>;
  readonly #apiKey: string;
  readonly #signal: AbortSignal | undefined;
  readonly #meter = new Meter();
  readonly #transport: Transport;
  readonly #requester: Requester;
  readonly #scrub: (text: string) => string;
  /**
   * One strategy per operation: a strategy keeps no state of its own (a walk's state is JSON it is
   * handed), and building one is most of what opening a stream costs, a stream per `--inputs` line.
   */
  readonly #strategies = new Map<OperationSpec, Strategy<unknown>>();

  constructor(options: ClientOptions) {
    const settings = checkClientOptions(options);
    const clientGates = settings.rateLimit === undefined ? [] : [new ThrottleGate(settings.rateLimit.requestsPerSecond)];
    const policy = retryPolicy(settings.retry);
    // Only once every option passed: a refused option must not leave a connection pool behind.
    const { apiKey, baseUrl, timeoutMs, maxConcurrentRequests, maxBodyBytes } = settings;
    this.#apiKey = apiKey;
    this.#signal = settings.signal;
    this.#transport = new Transport({ baseUrl, apiKey, timeoutMs, connections: maxConcurrentRequests, maxBodyBytes });
    this.#scrub = keyScrubber(apiKey);
    this.#requester = new Requester(this.#transport, this.#meter, policy, maxConcurrentRequests, clientGates);
    this.events$ = this.#meter.events$;
  }

  /** Totals so far (a snapshot). */
  get stats(): Readonly<ClientStats> {
    return this.#meter.stats;
  }

  stream(id: string, params: unknown, options?: StreamOptions): RecordStream<unknown> {
    const op = findOperation(id);
    if (op === undefined) throw new ValidationError(`unknown operation ${JSON.stringify(id)}; see client.operations`, undefined, { endpoint: id });
    return this.#open(op, checkedParams(op, params, this.#apiKey), undefined, options);
  }

  resume(checkpoint: Checkpoint, options?: StreamOptions): RecordStream<unknown> {
    const cp = checkCheckpoint(checkpoint);
    const op = findOperation(cp.operation);
    if (op === undefined) throw new TypeError(`checkpoint.operation ${JSON.stringify(cp.operation)} is not an operation id`);
    return this.#open(op, checkedParams(op, cp.params, this.#apiKey), cp, options);
  }

  async credits(options: { signal?: AbortSignal } = {}): Promise<CreditBalance> {
    const body = await this.request('/v1/credits', {}, options);
    if (typeof (body as { credits?: unknown }).credits !== 'number') {
      throw new ResponseFormatError('credits: the response has no credits number', { endpoint: 'credits', status: 200 });
    }
    return body as CreditBalance;
  }

  async request(path: string, query: Record<string, ParamValue> = {}, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    if (typeof path !== 'string' || !/^\/v1\/[\w\-/.]*$/.test(path) || path.includes('..')) {
      throw new TypeError(`path must be a plain path under /v1/, got ${JSON.stringify(path)}`);
    }
    const wire: Record<string, string> = {};
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) wire[name] = String(value);
    const endpoint = path.replace(/^\/v1\/(scrape\/)?/, '');
    const scrape = path.startsWith('/v1/scrape/');
    const body = await this.#requester.send({ endpoint, path, query: wire, chargeable: scrape }, [], this.#signalOf(options.signal));
    if (body === STOPPED) throw new ResponseFormatError(`${endpoint}: the request was refused by a gate`, { endpoint });
    const envelope = body as { success?: unknown } | null;
    if (typeof envelope !== 'object' || envelope === null || (scrape && envelope.success !== true)) {
      throw new ResponseFormatError(`${endpoint}: the response is not a success envelope`, { endpoint, status: 200 });
    }
    return body;
  }

  close(): Promise<void> {
    return this.#transport.close();
  }

  /** A walk of `op` over `query`, from `start` (the beginning when undefined). */
  #open(op: OperationSpec, query: Record<string, string>, start: WalkStart | undefined, options: StreamOptions = {}, held?: HeldPages): RecordStream<unknown> {
    let strategy = this.#strategies.get(op);
    if (strategy === undefined) this.#strategies.set(op, (strategy = strategyFor(op)));
    const from = start ?? { pending: strategy.start(query), skip: 0, pagesDone: 0, recordsYielded: 0 };
    if (from.pending !== null && !strategy.isState(from.pending)) {
      throw new TypeError(`checkpoint.pending is not a continuation state of ${op.id}`);
    }
    const reopen = (checkpoint: Checkpoint | undefined, reopenOptions: StreamOptions, reopenHeld?: HeldPages, other = query): RecordStream<unknown> =>
      this.#open(op, other, checkpoint === undefined ? undefined : checkCheckpoint(checkpoint), reopenOptions, reopenHeld);
    const parts = { op, query, strategy, requester: this.#requester, meter: this.#meter, signal: this.#signalOf(options.signal), reopen, held, scrub: this.#scrub };
    return new RecordStream<unknown, unknown>(parts, from, options);
  }

  /** The client's signal and a call's, combined. */
  #signalOf(signal: AbortSignal | undefined): AbortSignal | undefined {
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
    if (signal === undefined || this.#signal === undefined) return signal ?? this.#signal;
    return AbortSignal.any([this.#signal, signal]);
  }
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
