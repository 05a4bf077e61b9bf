/**
 * What a client has done: running totals (`client.stats`) and a live feed of typed events
 * (`client.events$`). Every attempt is counted as a request, because the service may charge any
 * attempt it answered; `credits` counts what responses said they charged (a 200 whose body was cut
 * short counts 1: the service charged it).
 */
import { Observable, Subject } from 'rxjs';
import type { OperatorEvent } from './control.ts';
import type { SocialstreamError } from './errors.ts';

/**
 * The client's totals so far (`client.stats`): requests, pages, records, credits, retries,
 * duplicates dropped, pages bought ahead and never read, continuations ignored.
 */
export interface ClientStats {
  /** HTTP requests sent, retries included. */
  requests: number;
  /** Pages read successfully. */
  pages: number;
  /** Records yielded to callers. */
  records: number;
  /** Credits the service reported charging (`credits_used`, `data.credits_charged`). */
  credits: number;
  /** Attempts that were retries. */
  retries: number;
  /** Records operators reported as duplicates (e.g. `dedupe`). */
  duplicates: number;
  /**
   * Credits spent on pages bought ahead that their walk never read: past its end (web search's empty
   * pages with `overfetch`, a total that promised more than there was) or past where its reader
   * stopped (`break`, `take`, `limit`). Reported when the walk ends or its reader stops.
   */
  overfetched: number;
  /** Those pages: bought ahead and never read. */
  overfetchedPages: number;
  /** Walks that met a continuation their rule does not follow (once per walk): their output may be short. */
  ignoredContinuations: number;
}

/**
 * What `client.events$` emits: each request, retry, page, error, duplicate dropped, pages bought
 * ahead and never read, and continuation ignored.
 */
export type ClientEvent =
  | { type: 'request'; endpoint: string; attempt: number }
  | { type: 'retry'; endpoint: string; attempt: number; delayMs: number; error: SocialstreamError }
  | { type: 'page'; endpoint: string; records: number; credits: number }
  | { type: 'error'; endpoint: string; error: SocialstreamError }
  | { type: 'duplicate'; operator: string; count: number }
  /** A walk ended, or its reader stopped, with `pages` bought ahead and never read, which cost `credits`. */
  | { type: 'overfetch'; endpoint: string; pages: number; credits: number }
  /** A page offered a continuation the operation's rule does not follow (`detail`: what and where); once per walk. */
  | { type: 'ignored-continuation'; endpoint: string; detail: string };

export class Meter {
  readonly #stats: ClientStats = { requests: 0, pages: 0, records: 0, credits: 0, retries: 0, duplicates: 0, overfetched: 0, overfetchedPages: 0, ignoredContinuations: 0 };
  readonly #events = new Subject<ClientEvent>();
  readonly events$: Observable<ClientEvent> = this.#events.asObservable();

  /** A snapshot: the totals so far. */
  get stats(): Readonly<ClientStats> {
    return { ...this.#stats };
  }

  request(endpoint: string, attempt: number): void {
    this.#stats.requests++;
    if (attempt > 0) this.#stats.retries++;
    this.#events.next({ type: 'request', endpoint, attempt });
  }

  retry(endpoint: string, attempt: number, delayMs: number, error: SocialstreamError): void {
    this.#events.next({ type: 'retry', endpoint, attempt, delayMs, error });
  }

  charged(credits: number): void {
    this.#stats.credits += credits;
  }

  page(endpoint: string, records: number, credits: number): void {
    this.#stats.pages++;
    this.#events.next({ type: 'page', endpoint, records, credits });
  }

  records(count: number): void {
    this.#stats.records += count;
  }

  ignoredContinuation(endpoint: string, detail: string): void {
    this.#stats.ignoredContinuations++;
    this.#events.next({ type: 'ignored-continuation', endpoint, detail });
  }

  error(endpoint: string, error: SocialstreamError): void {
    this.#events.next({ type: 'error', endpoint, error });
  }

  /** A walk ended with `pages` bought ahead and never read, which cost `credits`. */
  overfetched(endpoint: string, pages: number, credits: number): void {
    this.#stats.overfetched += credits;
    this.#stats.overfetchedPages += pages;
    this.#events.next({ type: 'overfetch', endpoint, pages, credits });
  }

  operator(event: OperatorEvent): void {
    if (event.type === 'duplicate') this.#stats.duplicates += event.count;
    this.#events.next({ type: event.type, operator: event.operator, count: event.count });
  }
}
