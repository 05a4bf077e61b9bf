/**
 * One credit budget (and optionally one request rate) for every worker of a run, in Redis. Each
 * request attempt reserves its credit with one script (`RESERVE`), atomic on the server, before it is
 * sent: no two workers can both take the last credit, and a worker killed after reserving leaves the
 * credit counted (it may have been charged), so the budget holds across crashes. An attempt that
 * provably cost nothing (the same rule as the engine's ledger: `isFree`) gives its credit back.
 * One round trip per attempt; a refund is a second one, for failed attempts only.
 */
import type { Redis } from 'ioredis';
import type { RequestGate } from '../control.ts';
import { isFree } from '../export/ledger.ts';
import type { ClientEvent } from '../metering.ts';
import { keys, type WalkJob } from './runs.ts';

/**
 * KEYS[1] the run's hash, KEYS[2] the prefix of its rate windows. Returns 0: reserved; -1: the
 * budget is spent; n > 0: the rate's window is full, try again in n ms (nothing reserved).
 */
const RESERVE = `
local run = redis.call('HMGET', KEYS[1], 'budget', 'spent', 'rate')
local budget, spent, rate = tonumber(run[1]), tonumber(run[2] or '0'), tonumber(run[3])
if budget ~= nil and spent >= budget then return -1 end
if rate ~= nil and rate > 0 then
  local now = redis.call('TIME')
  local window = KEYS[2] .. ':' .. now[1]
  local used = redis.call('INCR', window)
  if used == 1 then redis.call('EXPIRE', window, 2) end
  if used > rate then return 1000 - math.floor(tonumber(now[2]) / 1000) end
end
redis.call('HINCRBY', KEYS[1], 'spent', 1)
return 0`;

/** The run's budget as a gate in front of every request attempt of a walk. */
export class BudgetGate implements RequestGate {
  /** Attempts refused because the budget was spent. */
  refused = 0;
  readonly #run: string;
  readonly #rate: string;

  constructor(
    private readonly redis: Redis,
    job: WalkJob,
  ) {
    this.#run = keys.run(job.exportId, job.run);
    this.#rate = keys.rate(job.exportId, job.run);
  }

  async acquire(signal?: AbortSignal): Promise<boolean> {
    for (;;) {
      signal?.throwIfAborted();
      const answer = Number(await this.redis.eval(RESERVE, 2, this.#run, this.#rate));
      if (answer === 0) return true;
      if (answer < 0) {
        this.refused++;
        return false;
      }
      await pause(answer, signal);
    }
  }

  /** Gives back an attempt the client reports as answered with an error or never sent. */
  refund(event: ClientEvent): void {
    if ((event.type === 'retry' || event.type === 'error') && isFree(event.error)) {
      // Lost (Redis away): the credit stays counted, the safe side of a budget.
      this.redis.hincrby(this.#run, 'spent', -1).catch(() => undefined);
    }
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted(): void {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
