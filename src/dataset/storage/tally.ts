/** The count of a store's requests by kind (`Storage.requests`), kept by each implementation as it sends them. */
import type { RequestCounts, RequestKind } from './types.ts';

export class RequestTally {
  readonly #counts: Record<RequestKind, number> = { GET: 0, PUT: 0, LIST: 0, DELETE: 0, HEAD: 0, MULTIPART: 0 };

  /** Counts one request of `kind`. */
  count(kind: RequestKind): void {
    this.#counts[kind] += 1;
  }

  /** The counts so far (a copy: later requests do not change it). */
  get counts(): RequestCounts {
    return { ...this.#counts };
  }
}
