/**
 * The sandbox: a local server speaking the whole API of the API reference with synthetic, deterministic data, so
 * that everything runs and is tested without the network or credits.
 *
 * ```ts
 * const sandbox = await startSandbox({ port: 0 });
 * const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
 * await sandbox.close();
 * ```
 *
 * @module socialstream/sandbox
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { Accounts, type AccountSpec, type CreditBalance } from './accounts.ts';
import { SandboxClock } from './clock.ts';
import { DIALECTS, dialectOperations, type SandboxDialect } from './dialects/index.ts';
import { checkFaults, FaultInjector, type SandboxFaults } from './faults.ts';
import { operations, operationTable } from './platforms/index.ts';
import { createSandboxServer, type RequestCounters } from './server.ts';
// Shared with the library so every options object is refused alike; neither imports the client.
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';

export type { AccountSpec, CreditBalance } from './accounts.ts';
export type { SandboxClockReading } from './clock.ts';
export type { SandboxDialect } from './dialects/index.ts';
export type { SandboxFaults } from './faults.ts';
export type { SandboxOperation, SandboxRequest } from './platform.ts';
export { operations };

/** The key of the default account. */
export const DEFAULT_API_KEY = 'sk_live_sandbox';
/** The balance of the default account. */
export const DEFAULT_CREDITS = 10_000;

/**
 * Options of `startSandbox`: the port and host, the accounts (by default `sk_live_sandbox` with
 * 10,000 credits), latency, faults, the data's seed, the dialect.
 */
export interface SandboxOptions {
  /** TCP port; `0` (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1` (loopback only). */
  host?: string;
  /** Accounts replacing the default one (`sk_live_sandbox`, 10,000 credits); the first is `apiKey`. */
  accounts?: AccountSpec[];
  /**
   * Response time of every answer, in milliseconds: it leaves this long after its request arrived
   * (the sandbox's own work counts toward it, as a service's does). Default 0.
   */
  latencyMs?: number;
  /** Injected failures; all off by default. */
  faults?: SandboxFaults;
  /** Seed of all data and of the fault sequence. Default `sandbox`. */
  seed?: string | number;
  /** Extra delay of the slow AI transcript operations (API reference E14, E19), in milliseconds. Default 300. */
  slowMs?: number;
  /**
   * How bodies are written: `spec` (the default) as the API reference reads, `service` as the service answers in
   * practice (docs/wire.md "Service dialect"). Both serve the same records for the same requests.
   */
  dialect?: SandboxDialect;
}

/** The requests a sandbox served: in all, and those charged, by API key. */
export interface SandboxRequestCounts {
  /** Every HTTP request the server received. */
  total: number;
  /** Charged requests per API key. */
  charged: Record<string, number>;
}

/**
 * A running sandbox: its `url` and `apiKey` for `createClient`, its accounts' balances, faults,
 * request counts and virtual clock, and `close()`.
 */
export interface Sandbox {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:53122`; paths start with `/v1/`. */
  url: string;
  /** The key of the first account. */
  apiKey: string;
  /** Stops the server and drops open connections; resolves once it has stopped. Safe to call twice. */
  close(): Promise<void>;
  /** A completed credit-pack purchase on that account only: adds credits, marks it `active` with a `cs_` id. */
  purchase(apiKey: string, credits: number): CreditBalance;
  /** The balance record of a key, as `/v1/credits` would answer (for tests). */
  balance(apiKey: string): CreditBalance;
  /** Replaces the faults at run time (for tests that fail a walk half-way). */
  setFaults(faults: SandboxFaults): void;
  /** A snapshot of the request counters (for tests and benchmarks). */
  readonly requests: SandboxRequestCounts;
  /**
   * The virtual clock, in Unix milliseconds: 2025-11-22T00:00:00Z, where the seed's data ends, until
   * `advance()` moves it; never later than the machine's clock.
   */
  readonly now: number;
  /**
   * Time passes: the virtual clock moves on by a round, every paginated resource gains `records` new
   * newest records dated within it, in order, and counters of existing records (likes, score, views)
   * grow. Deterministic: the data depends only on the seed and the rounds so far (unless a round was
   * cut at the machine's clock).
   */
  advance(options: AdvanceOptions): void;
}

/**
 * One round of `sandbox.advance`: how many new records every paginated resource gains, over how
 * many seconds of the virtual clock (an hour by default).
 */
export interface AdvanceOptions {
  /** How many records every paginated resource gains (an identifier's `-n` count grows by as many). */
  records: number;
  /**
   * How long the round lasts, in seconds of virtual time: its records are dated inside it, a slot
   * each. Default an hour, or a second per record when that is longer. A round that would end after
   * the machine's clock ends at it.
   */
  seconds?: number;
}

function nonNegative(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative number of milliseconds, got ${inspect(value)}`);
  }
  return value;
}

/**
 * Starts the sandbox: an HTTP server (on loopback by default) that speaks the Social Data
 * Extraction API with synthetic, deterministic data (a name ending in `-n<digits>` has that many
 * records). `port: 0` takes a free port; pass `sandbox.url` and `sandbox.apiKey` to `createClient`,
 * and `close()` it when done.
 *
 * @example
 * ```ts
 * const sandbox = await startSandbox({ port: 0 });
 * const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
 * ```
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const { port, host, accountSpecs, seed, dialect, latencyMs, slowMs } = checkOptions(options);
  const accounts = new Accounts(accountSpecs);
  const faults = new FaultInjector(checkFaults(options.faults), seed);
  const counters: RequestCounters = { total: 0, charged: new Map() };
  const clock = new SandboxClock();
  const server = createSandboxServer({ operations: operationTable(dialectOperations(dialect, operations)), accounts, faults, seed, latencyMs, slowMs, counters, clock });
  const address = await listen(server, port, host);
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${address.port}`,
    apiKey: accountSpecs[0].apiKey,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
    purchase: (apiKey, credits) => accounts.purchase(apiKey, credits),
    balance: (apiKey) => accounts.balance(apiKey),
    setFaults(next) {
      faults.set(checkFaults(next));
    },
    get now() {
      return clock.now * 1000;
    },
    advance(options) {
      refuseUnknownOptions(options, ADVANCE_OPTIONS, 'sandbox.advance');
      advance(clock, options.records, options.seconds);
    },
    get requests() {
      return { total: counters.total, charged: Object.fromEntries(counters.charged) };
    },
  };
}

const SANDBOX_OPTIONS = {
  port: true,
  host: true,
  accounts: true,
  latencyMs: true,
  faults: true,
  seed: true,
  slowMs: true,
  dialect: true,
} as const satisfies KnownOptions<SandboxOptions>;

const ADVANCE_OPTIONS = { records: true, seconds: true } as const satisfies KnownOptions<AdvanceOptions>;

/** The options with their defaults, each checked (a `TypeError` naming it; an unknown name an `OptionError`). */
function checkOptions(options: SandboxOptions) {
  refuseUnknownOptions(options, SANDBOX_OPTIONS, 'startSandbox', { credits: 'the credits of a key go in accounts: [{ apiKey, credits }]' });
  const { port = 0, host = '127.0.0.1', accounts: accountSpecs = [{ apiKey: DEFAULT_API_KEY, credits: DEFAULT_CREDITS }], seed = 'sandbox', dialect = 'spec' } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new TypeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  if (typeof host !== 'string' || host === '') throw new TypeError('host must be a non-empty string');
  if (typeof seed !== 'string' && !(typeof seed === 'number' && Number.isFinite(seed))) {
    throw new TypeError(`seed must be a string or a finite number, got ${String(seed)}`);
  }
  if (!(DIALECTS as readonly unknown[]).includes(dialect)) {
    throw new TypeError(`dialect must be ${DIALECTS.join(' or ')}, got ${String(dialect)}`);
  }
  const latencyMs = nonNegative(options.latencyMs, 'latencyMs', 0);
  const slowMs = nonNegative(options.slowMs, 'slowMs', 300);
  return { port, host, accountSpecs, seed: String(seed), dialect, latencyMs, slowMs };
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function advance(clock: SandboxClock, records: number, seconds: number | undefined): void {
  if (!Number.isSafeInteger(records) || records < 0) {
    throw new TypeError(`advance: records must be a non-negative integer, got ${String(records)}`);
  }
  if (seconds !== undefined && (!Number.isSafeInteger(seconds) || seconds < 1)) {
    throw new TypeError(`advance: seconds must be a positive integer, got ${String(seconds)}`);
  }
  clock.advance(records, seconds);
}
