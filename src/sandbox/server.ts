/**
 * The sandbox's HTTP core (node:http). For every request, in this order: route (404, 405) → auth
 * (401) → the handler's validation (400, free) → credit check (402) → latency and faults → charge one
 * credit and answer 200. Handlers only build bodies; everything the same for every operation is here.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Accounts } from './accounts.ts';
import type { SandboxClock } from './clock.ts';
import type { FaultInjector } from './faults.ts';
import { toJson } from './json.ts';
import { SandboxValidationError, type SandboxOperation } from './platform.ts';

/** Counters kept for tests and benchmarks. */
export interface RequestCounters {
  /** Every HTTP request the server answered or dropped. */
  total: number;
  /** Charged requests (200s of scrape operations) per API key. */
  charged: Map<string, number>;
}

export interface ServerConfig {
  operations: ReadonlyMap<string, SandboxOperation>;
  accounts: Accounts;
  faults: FaultInjector;
  seed: string;
  latencyMs: number;
  slowMs: number;
  counters: RequestCounters;
  /** The virtual clock `advance()` moves: read on every request, so a running server grows. */
  clock: SandboxClock;
}

/** Where the API reference's 401 bodies point ({docs_url}); the sandbox has no docs site of its own. */
export const AUTH_DOCS_URL = 'https://docs.socialstream.invalid/authentication';

const SCRAPE_PREFIX = '/v1/scrape/';
const JSON_TYPE = 'application/json; charset=utf-8';

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** When each request arrived: its latency runs from then. */
const arrivals = new WeakMap<ServerResponse, number>();

/**
 * Waits until the answer to `res` is due: `delayMs` after its request arrived. The time the sandbox
 * spent building the answer counts toward it, as a service's own work counts toward its response
 * time; so requests that arrive together are answered together, not one build after another.
 */
async function due(res: ServerResponse, delayMs: number): Promise<void> {
  if (delayMs <= 0) return;
  const left = delayMs - (performance.now() - (arrivals.get(res) ?? performance.now()));
  if (left > 0) await sleep(left);
}

/** What a proxy in front of the service sends when the service behind it fails (the `html` fault). */
const BAD_GATEWAY_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>' +
  '<body><h1>502 Bad Gateway</h1><p>The upstream server returned an invalid response.</p></body></html>\n';

/** The platform word of an operation id: `forum/subforum` → `forum`. */
function platformOf(id: string): string {
  return id.split('/', 1)[0];
}

/** A query string that cannot be decoded is refused before any handler sees it. */
function isMalformedQuery(raw: string): boolean {
  if (!raw.includes('%')) return false;
  try {
    decodeURIComponent(raw.replace(/\+/g, ' '));
    return false;
  } catch {
    return true;
  }
}

export function createSandboxServer(config: ServerConfig): Server {
  const sandbox = new SandboxHandler(config);
  return createServer((req, res) => sandbox.serve(req, res));
}

async function send(res: ServerResponse, status: number, body: string, contentType: string, delayMs: number, extraHeaders?: Record<string, string>): Promise<void> {
  await due(res, delayMs);
  if (res.destroyed) return;
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    ...extraHeaders,
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown, delayMs: number): Promise<void> {
  return send(res, status, JSON.stringify(body), JSON_TYPE, delayMs);
}

/** Every request's way through the sandbox, a step a method: route, authenticate, build, charge, answer. */
class SandboxHandler {
  constructor(private readonly config: ServerConfig) {}

  serve(req: IncomingMessage, res: ServerResponse): void {
    this.#route(req, res).catch((error: unknown) => {
      // A handler bug must not take the server down: answer 500 JSON and say where on stderr.
      process.stderr.write(`sandbox: internal error on ${clip(req.url?.split('?')[0] ?? '')}: ${String(error)}\n`);
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'Content-Type': JSON_TYPE });
        res.end(JSON.stringify({ error: 'Internal sandbox error' }));
      } else {
        res.destroy();
      }
    });
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { config } = this;
    arrivals.set(res, performance.now());
    config.counters.total += 1;
    const target = req.url ?? '/';
    const mark = target.indexOf('?');
    const path = mark === -1 ? target : target.slice(0, mark);
    const rawQuery = mark === -1 ? '' : target.slice(mark + 1);

    const operation = path.startsWith(SCRAPE_PREFIX) ? config.operations.get(path.slice(SCRAPE_PREFIX.length)) : undefined;
    if (operation === undefined && path !== '/v1/credits') return sendJson(res, 404, { error: 'Not found', path: clip(path) }, config.latencyMs);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, 405, JSON.stringify({ error: 'Method not allowed' }), JSON_TYPE, config.latencyMs, { Allow: 'GET' });
    }
    const auth = this.#authenticate(req);
    if ('refused' in auth) return sendJson(res, 401, { error: auth.refused, docs: AUTH_DOCS_URL }, config.latencyMs);
    if (operation === undefined) return sendJson(res, 200, config.accounts.balance(auth.apiKey), config.latencyMs);
    await this.#scrape(req, res, operation, auth.apiKey, rawQuery);
  }

  /** The account key of a request, or the 401 message that refuses it. */
  #authenticate(req: IncomingMessage): { apiKey: string } | { refused: string } {
    const authorization = req.headers.authorization;
    const key = req.headers['x-api-key'];
    // API reference 5.2: Bearer is reserved for dashboard sessions, so it is refused even beside a good key.
    if (authorization !== undefined && /^\s*bearer\b/i.test(authorization)) return { refused: 'Invalid API key' };
    if (typeof key !== 'string' || key.trim() === '') return { refused: 'Invalid or missing API key' };
    if (!this.config.accounts.has(key)) return { refused: 'Invalid API key' };
    return { apiKey: key };
  }

  /** A scrape request: validated (400, free), then paid for (402), then answered through the faults. */
  async #scrape(req: IncomingMessage, res: ServerResponse, operation: SandboxOperation, apiKey: string, rawQuery: string): Promise<void> {
    const { accounts, latencyMs } = this.config;
    const built = this.#build(operation, rawQuery);
    if ('refused' in built) return sendJson(res, 400, built.refused, latencyMs);
    const credit = accounts.reserve(apiKey);
    if (!credit.ok) return sendJson(res, 402, { error: 'Insufficient credits', required: 1, available: credit.available }, latencyMs);
    const body = toJson(operation.settle === undefined ? built.result : operation.settle(built.result, credit.available - 1));
    await this.#answer(req, res, operation, apiKey, body);
  }

  /** The handler's result for the query, or the 400 body that refuses it (free). */
  #build(operation: SandboxOperation, rawQuery: string): { result: unknown } | { refused: Record<string, unknown> } {
    if (isMalformedQuery(rawQuery)) return { refused: { error: 'Malformed query string', endpoint: operation.id, credits_required: 1 } };
    const { seed, faults, clock } = this.config;
    try {
      return { result: operation.handle({ query: new URLSearchParams(rawQuery), seed, duplicates: faults.duplicates, growth: clock.records, clock, feed: faults.feed }) };
    } catch (error) {
      if (error instanceof SandboxValidationError) return { refused: { error: error.message, endpoint: operation.id, credits_required: 1, ...error.extra } };
      throw error;
    }
  }

  /** Sends a paid answer, or the fault drawn for it: the failures a service does not charge for are refunded. */
  async #answer(req: IncomingMessage, res: ServerResponse, operation: SandboxOperation, apiKey: string, body: string): Promise<void> {
    const { accounts, faults, counters } = this.config;
    const delayMs = this.config.latencyMs + (operation.slow === true ? this.config.slowMs : 0);
    switch (faults.draw()) {
      case 'upstream':
        accounts.refund(apiKey);
        return sendJson(res, 500, { error: `Failed to fetch ${platformOf(operation.id)} ${operation.operation}` }, delayMs);
      case 'reset':
        accounts.refund(apiKey);
        await due(res, delayMs);
        req.socket.destroy();
        return;
      case 'html':
        accounts.refund(apiKey);
        return send(res, 502, BAD_GATEWAY_PAGE, 'text/html; charset=utf-8', delayMs);
      case 'truncate':
        // A complete HTTP response whose JSON stops mid-way: charged, as the service did the work.
        body = body.slice(0, Math.max(1, Math.floor(body.length / 2)));
        break;
      case 'none':
        break;
    }
    counters.charged.set(apiKey, (counters.charged.get(apiKey) ?? 0) + 1);
    await send(res, 200, body, JSON_TYPE, delayMs);
  }
}
