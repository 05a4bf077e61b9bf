/**
 * The gates every walk of an export passes before each request attempt: `WalkHalt`, which stops
 * every walk cleanly once one fails or the run has what it wants, and `AttemptLedger`, which counts
 * (and caps) the attempts that may be charged, on disk before they are sent.
 */
import type { RequestGate } from '../control.ts';
import { NetworkError, ValidationError, type SocialstreamError } from '../errors.ts';
import type { ClientEvent } from '../metering.ts';
import type { ExportState } from './journal.ts';

/**
 * Stops every walk of an export once one fails (or `halt()` is called: a limit reached, a signal),
 * without losing what the others already bought: they request no further page (this gate refuses,
 * so they end cleanly, their checkpoints at their next page), and the pages they had in flight still
 * arrive and are staged. Ending them by aborting instead would drop those paid pages. A parameter set
 * the service rejects (400, 404) fails alone: the other walks go on.
 */
export class WalkHalt implements RequestGate {
  /** The first failure of any walk, other than a rejected parameter set. */
  failure: unknown;
  /** The walks whose parameters the service rejected, with its error. */
  readonly rejected = new Map<number, ValidationError>();
  #halted = false;

  fail(walk: number, error: unknown): void {
    if (error instanceof ValidationError) {
      this.rejected.set(walk, error);
      return;
    }
    if (this.#halted && this.failure !== undefined) return;
    this.#halted = true;
    this.failure ??= error;
  }

  halt(): void {
    this.#halted = true;
  }

  get halted(): boolean {
    return this.#halted;
  }

  acquire(): Promise<boolean> {
    return Promise.resolve(!this.#halted);
  }
}

/**
 * Counts the attempts of a run that may be charged and, under a cap, records each one on disk before
 * it is sent, then refuses every attempt past the cap: a crash can lose the page an attempt bought,
 * never the count of it, so no number of crashes lets the cap be passed (a crash does not end a run).
 * Attempts known to have cost nothing (see `isFree`) are given back. It must be the last gate of a
 * walk's stream: an attempt it lets through is sent.
 */
export class AttemptLedger implements RequestGate {
  /** Attempts refused for the cap. */
  refused = 0;

  constructor(
    private readonly state: ExportState,
    /** Attempts this run may make. */
    readonly max: number | undefined,
    private readonly record: () => Promise<void>,
  ) {}

  async acquire(): Promise<boolean> {
    // Counted synchronously, before any await: concurrent walks can never both take the last credit.
    if (this.max !== undefined && this.state.run.credits >= this.max) {
      this.refused++;
      return false;
    }
    this.state.run.credits++;
    this.state.credits++;
    if (this.max !== undefined) await this.record();
    return true;
  }

  /** Gives back an attempt the client reports as answered with an error or never sent (`isFree`). */
  refund(event: ClientEvent): void {
    if ((event.type === 'retry' || event.type === 'error') && isFree(event.error)) {
      this.state.run.credits--;
      this.state.credits--;
    }
  }
}

/** Only a 200 costs a credit (docs/wire.md): an error answer did not, nor did a connection never made. */
export function isFree(error: SocialstreamError): boolean {
  if (error.status !== undefined) return error.status !== 200;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return error instanceof NetworkError && typeof code === 'string' && NEVER_CONNECTED.has(code);
}

const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
