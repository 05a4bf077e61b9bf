/**
 * The contract between the sandbox's HTTP core (`server.ts`) and its platform modules
 * (`platforms/*.ts`). A platform module exports an array of `SandboxOperation`s; the core routes
 * `GET /v1/scrape/<id>` to the one with that id and takes care of everything that is the same for
 * every operation: authentication, the credit check and charge, faults, latency, JSON encoding.
 * A handler only validates its query and builds the 200 body, so it stays pure and deterministic.
 */
import type { SandboxClockReading } from './clock.ts';

/** The fault kinds that shape a newest-first listing's records (`feed.ts`). */
export const FEED_FAULTS = ['pinned', 'garbageTime', 'futureTime', 'outOfOrder', 'keyless'] as const;
export type FeedFault = (typeof FEED_FAULTS)[number];
export type FeedFaults = Partial<Record<FeedFault, boolean>>;

/** What a handler knows about the request it answers. */
export interface SandboxRequest {
  /** The query string, already parsed. Repeated keys keep their first value. */
  query: URLSearchParams;
  /** The sandbox seed: data is a pure function of (seed, operation, query). */
  seed: string;
  /** Duplicate fault on: every page after the first starts with the last record of the page before. */
  duplicates: boolean;
  /** Records added by `advance()` so far: every paginated resource lists that many before its first. */
  growth: number;
  /** The virtual clock: its time now, and the times of the records `advance()` added. */
  clock: SandboxClockReading;
  /** Feed faults on (pinned, garbage, far-future and out-of-order times); none when absent. */
  feed?: FeedFaults;
}

/** Thrown by a handler to answer 400 (costs no credit). */
export class SandboxValidationError extends Error {
  constructor(
    message: string,
    /** Extra fields of the error body, e.g. `{ endpoint: 'comment_replies' }` for E5. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** One operation the sandbox serves, as its platform module defines it. */
export interface SandboxOperation {
  /**
   * The path below `/v1/scrape/`, e.g. `forum/subforum`. It is also the `endpoint` of validation
   * errors (API reference 2.1: `<platform>/<operation>`), and its first segment is the platform.
   */
  id: string;
  /** Words of the upstream fault message: `Failed to fetch <platform> <operation>`. */
  operation: string;
  /** AI transcript operations answer more slowly than the rest (API reference E14, E19). */
  slow?: boolean;
  /** Validates the query (throwing `SandboxValidationError`) and returns the whole 200 body. */
  handle(request: SandboxRequest): unknown;
  /** Completes a body once its credit is charged, e.g. with the balance left (the `service` dialect). */
  settle?(body: unknown, creditsRemaining: number): unknown;
}
