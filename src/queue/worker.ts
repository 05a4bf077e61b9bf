/**
 * `runWorker`: takes walks from the queue and runs each through the export engine, into the dataset
 * the job names, until its signal aborts or its key is refused. Any number of workers, on any
 * number of machines, share one queue, one budget per run, and one dataset.
 *
 * - **A walk is a dataset writer of its own** (`walk-<walkName>`: its own staging and lock), publishing
 *   into the dataset's bucket parts with every walk that finishes at the same moment on any worker
 *   (group commit, docs/datasets.md). A walk that finishes while another publishes hands its pages to that
 *   publish and frees its slot; its job comes back a moment later and is counted done once the pages
 *   are in the dataset, so a finished run means a dataset that holds it. A worker that dies leaves the walk's pages and checkpoint staged on DIR;
 *   its job's lease (BullMQ's job lock, renewed while the worker lives) expires, the job goes back to
 *   the queue, and whichever worker takes it resumes the walk from its last staged page: no answered
 *   page is bought twice. BullMQ would fail a job whose worker died `maxStalledCount` times; here a
 *   walk survives any number of deaths. The walk's writer lock and the dataset's publish lock are
 *   Redis leases too (`RedisLocks`), not pid files, which mean nothing across machines; a dataset
 *   written so refuses writers that do not take them.
 * - **The budget** is a gate before every attempt (`BudgetGate`). A spent budget ends the walk
 *   cleanly (what it staged is published, its checkpoint kept) and parks its job; raising the
 *   budget (enqueueing the run again) takes the parked walks again at once.
 * - **The key stays here.** Each worker reads its own (`SOCIALSTREAM_API_KEY`, or `apiKey`); jobs,
 *   Redis and the dataset never hold it. A key that is missing stops the worker before it takes a
 *   walk; one refused (401) or out of credits (402) stops it after putting its walks back for the
 *   others, with the reason recorded for `status`: one bad machine never fails a run, and never
 *   retries in a loop.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { createClient } from '../client.ts';
import { AuthError, InsufficientCreditsError, LockedError, StorageError } from '../errors.ts';
import { commitWaits } from '../dataset/commit.ts';
import { DatasetStores } from '../dataset/stores.ts';
import { exportTo } from '../export-to.ts';
import { counted } from '../export/progress.ts';
import type { ExportSummary } from '../export/types.ts';
import type { OperationId } from '../operations/table.ts';
import { BudgetGate } from './budget.ts';
import { checkWorkerCounts, type WorkerCounts } from './worker-options.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';
import { shownUrl } from './address.ts';
import { connectQueue, lostConnection, PREFIX, QUEUE_NAME } from './connection.ts';
import { RedisLocks } from './lease-lock.ts';
import { publishedWalk } from './published.ts';
import { keys, walkOutlook, walkStopped, type WalkJob, type WalkReport } from './runs.ts';

export interface WorkerOptions extends WorkerCounts {
  /** `redis://HOST:PORT/DB`. */
  queue: string;
  /** Default: `SOCIALSTREAM_API_KEY`. */
  apiKey?: string;
  /** Default: `SOCIALSTREAM_BASE_URL`. */
  baseUrl?: string;
  /** Aborting stops the worker: its walks stop cleanly and go back to the queue. */
  signal?: AbortSignal;
  /** One line per event worth telling (a walk done, parked, failed; Redis away). Default: none. */
  log?: (line: string) => void;
  /** For datasets on a store: this worker's local working folder (`ExportOptions.work`). */
  work?: string;
}

/** How `runWorker` ended. */
export interface WorkerOutcome {
  id: string;
  /** Walks this worker finished. */
  walks: number;
  /** Why it stopped: its signal, or its key (`error` says how). */
  stoppedBy: 'signal' | 'key';
  error?: AuthError | InsufficientCreditsError;
}

/** How long a walk that handed its pages to a publish in progress waits before it looks whether they are published. */
const HANDED_OFF_MS = 250;

/**
 * Takes walks until `signal` aborts (or the key is refused), then resolves once its walks are back in
 * the queue or done. While Redis cannot be reached it waits, trying again every 5 s; an address that
 * cannot work (not Redis, a refused password, a database the server lacks, a TLS mismatch)
 * throws a `QueueError` subclass before any walk is taken.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerOutcome> {
  const settings = checkWorkerOptions(options);
  // A missing or malformed key stops the worker here, before it takes a walk.
  await createClient({ apiKey: settings.apiKey, baseUrl: settings.baseUrl }).close();
  return new WalkWorker(settings, options.signal).run();
}

type WorkerSettings = Required<Pick<WorkerOptions, 'queue' | 'concurrency' | 'leaseMs' | 'parkMs' | 'log'>> & Pick<WorkerOptions, 'apiKey' | 'baseUrl' | 'work'>;

const WORKER_OPTIONS = {
  queue: true,
  apiKey: true,
  baseUrl: true,
  signal: true,
  log: true,
  concurrency: true,
  leaseMs: true,
  parkMs: true,
  work: true,
} as const satisfies KnownOptions<WorkerOptions>;

function checkWorkerOptions(options: WorkerOptions): WorkerSettings {
  refuseUnknownOptions(options, WORKER_OPTIONS, 'runWorker');
  const { queue, concurrency = 4, leaseMs = 15_000, parkMs = 30_000, log = () => undefined } = options;
  checkWorkerCounts(options);
  return { queue, concurrency, leaseMs, parkMs, log, apiKey: options.apiKey ?? process.env.SOCIALSTREAM_API_KEY, baseUrl: options.baseUrl ?? process.env.SOCIALSTREAM_BASE_URL, work: options.work };
}

/** A walk's job as this worker holds it: the job, BullMQ's token for it, and the walk's name for the log. */
interface Held {
  job: Job<WalkJob>;
  token: string | undefined;
  walk: WalkJob;
  label: string;
}

/** One worker's life: connect, take walks (`process`), stop (`close`). */
class WalkWorker {
  readonly id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  readonly #settings: WorkerSettings;
  readonly #stopper = new AbortController();
  readonly #signal: AbortSignal;
  #redis: Redis | undefined;
  #stopError: AuthError | InsufficientCreditsError | undefined;
  #finished = 0;
  /** The datasets' stores this worker looks into (a walk's commit, its published run), each opened once. */
  readonly #stores = new DatasetStores();

  constructor(settings: WorkerSettings, signal: AbortSignal | undefined) {
    this.#settings = settings;
    this.#signal = signal === undefined ? this.#stopper.signal : AbortSignal.any([signal, this.#stopper.signal]);
  }

  get #log(): (line: string) => void {
    return this.#settings.log;
  }

  get redis(): Redis {
    return this.#redis!;
  }

  async run(): Promise<WorkerOutcome> {
    try {
      // Waits while Redis cannot be reached (the signal ends the wait); an address that cannot work throws.
      this.#redis = await connectQueue(this.#settings.queue, { persistent: true, signal: this.#signal, log: this.#log });
    } catch (error) {
      if (this.#signal.aborted) return this.#outcome();
      throw error;
    }
    const worker = this.#bullWorker();
    await this.#announce();
    const stopped = new Promise<void>((resolve) => {
      if (this.#signal.aborted) resolve();
      this.#signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const running = worker.run();
    await stopped;
    return this.#close(worker, running);
  }

  #bullWorker(): Worker<WalkJob> {
    const { concurrency, leaseMs } = this.#settings;
    const worker = new Worker<WalkJob>(QUEUE_NAME, (job, token) => this.process(job, token), {
      connection: this.redis,
      prefix: PREFIX,
      concurrency,
      lockDuration: leaseMs,
      stalledInterval: leaseMs,
      // A walk survives any number of worker deaths: its staging is the truth, not its attempts.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      autorun: false,
    });
    // While Redis is away its connection has said so, once: BullMQ's connections would repeat it every
    // attempt. One of them may see the loss first (a reset, a command on the closing connection), while
    // this connection still reads ready.
    worker.on('error', (error) => {
      if (this.redis.status === 'ready' && !lostConnection(error)) this.#log(`queue: ${error.message}`);
    });
    return worker;
  }

  /** A worker starting on a machine clears what earlier workers there reported (a key since fixed), then says it runs. */
  async #announce(): Promise<void> {
    for (const [other, text] of Object.entries(await this.redis.hgetall(keys.workers))) {
      if ((JSON.parse(text) as { host?: string }).host === hostname()) await this.redis.hdel(keys.workers, other);
    }
    await this.#report('running');
    this.#log(`worker ${this.id} takes walks from ${shownUrl(this.#settings.queue)} (${this.#settings.concurrency} at once)`);
  }

  /** BullMQ's processor: one walk's job, from the checks before it to what its end tells the queue. */
  async process(job: Job<WalkJob>, token?: string): Promise<unknown> {
    const walk = job.data;
    const held: Held = { job, token, walk, label: `walk ${walk.walk} (${Object.entries(walk.params).map(([name, value]) => `${name}=${value}`).join(' ')})` };
    const outlook = await walkOutlook(this.redis, walk);
    if (!outlook.current) return { skipped: 'a later run of its export has started' };
    if (outlook.ended) {
      this.#log(`${held.label}: already ended in this run (its job was taken again after its lease ran out); nothing to do`);
      return { skipped: 'the walk already ended in this run' };
    }
    if (this.#signal.aborted) return this.#back(held);
    // A walk whose pages wait for a publish is finished whatever the budget says now.
    if (outlook.budgetSpent && walk.handedOff === undefined) {
      this.#log(`${held.label}: the run's budget is spent; parked until it is raised`);
      return this.#park(held, this.#settings.parkMs);
    }
    // Handed off and since published (the usual case): done, without opening the dataset again.
    if (walk.handedOff !== undefined && !(await commitWaits(await this.#stores.paths(walk.dataset, walk.op, `walk-${walk.walk}`)))) return this.#done(held);
    const ran = await this.#walk(held);
    return 'summary' in ran ? this.#afterWalk(held, ran.summary, ran.gate, ran.signal) : ran.outcome;
  }

  /** Runs the walk through the export engine, into the job's dataset, as writer `walk-<walkName>`, under Redis leases and the run's budget. */
  async #walk(held: Held): Promise<{ summary: ExportSummary; gate: BudgetGate; signal: AbortSignal } | { outcome: unknown }> {
    const { walk, label } = held;
    const { apiKey, baseUrl, leaseMs } = this.#settings;
    // Ends this walk alone: its writer lock was taken over (this worker stalled past its lease).
    const lost = new AbortController();
    const locks = new RedisLocks(this.redis, this.id, leaseMs, (path) => {
      this.#log(`${label}: lost the lock ${path} to another worker; stopping this walk`);
      lost.abort(new Error('lock lost'));
    });
    const signal = AbortSignal.any([this.#signal, lost.signal]);
    const client = createClient({ apiKey, baseUrl, maxConcurrentRequests: Math.max(8, walk.pageConcurrency ?? 16) });
    const gate = new BudgetGate(this.redis, walk);
    const refunds = client.events$.subscribe((event) => gate.refund(event));
    try {
      const summary = await exportTo([client.stream(walk.op as OperationId, walk.params)], {
        dataset: walk.dataset,
        ...(this.#settings.work === undefined ? {} : { work: this.#settings.work }),
        writer: `walk-${walk.walk}`,
        // A job handed out again after its walk published (its worker killed before it could say so in Redis) buys nothing.
        runId: `${walk.exportId}:${walk.run}`,
        resume: true,
        // Its pages are left to a publish in progress: the job comes back to see them published (`#afterWalk`).
        handOff: true,
        concurrency: 1,
        gates: [gate],
        locks,
        signal,
        ...(walk.partition === undefined ? {} : { partition: walk.partition }),
        ...(walk.schema === undefined ? {} : { schema: walk.schema }),
        ...(walk.pageConcurrency === undefined ? {} : { pageConcurrency: walk.pageConcurrency }),
        ...(walk.layout === undefined ? {} : { layout: walk.layout }),
        ...(walk.since === undefined ? {} : { since: walk.since }),
        ...(walk.until === undefined ? {} : { until: walk.until }),
      });
      return { summary, gate, signal };
    } catch (error) {
      if (error instanceof AuthError || error instanceof InsufficientCreditsError) {
        this.#stop(error);
        return { outcome: await this.#back(held) };
      }
      // The walk's earlier holder is still finishing (its lease ran out while it lived): later.
      if (error instanceof LockedError) return { outcome: await this.#park(held, leaseMs) };
      // A dataset's store that did not answer (a connection reset, an endpoint away) may later: its staging is on it, so the walk waits.
      if (error instanceof StorageError && error.code === 'STORAGE_UNREACHABLE') {
        this.#log(`${label}: ${error.message}; back to the queue`);
        return { outcome: await this.#park(held, leaseMs) };
      }
      if (signal.aborted) return { outcome: await this.#back(held) };
      const message = error instanceof Error ? error.message : String(error);
      // The walk's run is in the dataset (another worker published it while this one stalled, say): done, whatever went wrong after.
      if ((await publishedWalk(walk, this.#stores)) !== undefined) return { outcome: await this.#done(held) };
      await this.#failed(held, message);
      throw new UnrecoverableError(message);
    } finally {
      refunds.unsubscribe();
      await client.close();
    }
  }

  /**
   * What the walk's end tells the queue. Finished and published: done. Finished with its pages
   * handed to a publish in progress: the job waits `HANDED_OFF_MS` and comes back, and is done once
   * they are published (the run is finished only when the dataset holds every walk). Stopped early:
   * counted, and back to the queue or parked.
   */
  async #afterWalk(held: Held, summary: ExportSummary, gate: BudgetGate, signal: AbortSignal): Promise<unknown> {
    const { job, walk, label } = held;
    const counts = { records: summary.records, pages: summary.pages };
    if (summary.complete && summary.dataset === undefined && walk.handedOff === undefined) {
      await job.updateData({ ...walk, handedOff: true });
      return this.#park(held, HANDED_OFF_MS);
    }
    if (summary.complete) return this.#done(held, counts);
    if (summary.rejected.length > 0) {
      const { message } = summary.rejected[0];
      await this.#failed(held, `rejected by the service: ${message}`, counts);
      throw new UnrecoverableError(message);
    }
    await this.#count(held, { counts, how: 'add' });
    if (summary.stoppedBy === 'balance') {
      this.#stop(new InsufficientCreditsError('out of credits', summary.balance?.required ?? 1, summary.balance?.available ?? 0));
      return this.#back(held);
    }
    if (gate.refused > 0 && !signal.aborted) {
      this.#log(`${label}: the run's budget is spent after ${counted(summary.pages, 'page')}; parked until it is raised`);
      return this.#park(held, this.#settings.parkMs);
    }
    return this.#back(held);
  }

  /**
   * The walk ended with its pages in the dataset: counted done with the records and pages the dataset
   * recorded for its run (every worker's that staged them), and the run finished when it was the last.
   * `published` is what this worker's own run published: added instead, for a run recorded without its totals.
   */
  async #done(held: Held, published = { records: 0, pages: 0 }): Promise<{ records: number; pages: number }> {
    const { totals } = (await publishedWalk(held.walk, this.#stores)) ?? {};
    const counts = totals ?? published;
    const said = await this.#count(held, { counts, how: totals === undefined ? 'add' : 'set', end: { as: 'done' } });
    if (said === 'not-held') return counts;
    this.#finished++;
    this.#log(`${held.label} done: ${counted(counts.records, 'record')}, ${counted(counts.pages, 'page')}${said === 'finished' ? '; the run is finished' : ''}`);
    return counts;
  }

  /** The walk failed, its run not in the dataset: listed with its error, and counted with what it published. */
  async #failed(held: Held, error: string, published = { records: 0, pages: 0 }): Promise<void> {
    if ((await this.#count(held, { counts: published, how: 'add', end: { as: 'failed', error } })) === 'not-held') return;
    this.#log(`${held.label} failed: ${error}`);
  }

  /**
   * Tells Redis what the walk published and how it ended, as the holder of its job. A worker that
   * stalled past its lease while another took the walk over is told so, and counts nothing.
   */
  async #count(held: Held, report: Omit<WalkReport, 'token'>): Promise<'finished' | 'counted' | 'not-held'> {
    const said = await walkStopped(this.redis, held.walk, { ...report, token: held.token });
    if (said === 'not-held') this.#log(`${held.label}: another worker took it over (this one stalled past its lease); that one counts it`);
    return said;
  }

  /** Back to the queue for any worker. */
  async #back({ job, token }: Held): Promise<never> {
    await job.moveToWait(token);
    throw new WaitingError();
  }

  /** Back to the queue after `ms`. */
  async #park({ job, token }: Held, ms: number): Promise<never> {
    await job.moveToDelayed(Date.now() + ms, token);
    throw new DelayedError();
  }

  #report(state: string, error?: string): Promise<unknown> {
    const said = { host: hostname(), pid: process.pid, state, ...(error === undefined ? {} : { error }), at: new Date().toISOString() };
    return this.redis.hset(keys.workers, this.id, JSON.stringify(said)).catch(() => undefined);
  }

  #stop(error: AuthError | InsufficientCreditsError): void {
    this.#stopError ??= error;
    this.#stopper.abort(error);
  }

  #outcome(): WorkerOutcome {
    const stopError = this.#stopError;
    return { id: this.id, walks: this.#finished, stoppedBy: stopError === undefined ? 'signal' : 'key', ...(stopError === undefined ? {} : { error: stopError }) };
  }

  async #close(worker: Worker<WalkJob>, running: Promise<unknown>): Promise<WorkerOutcome> {
    try {
      return await this.#closeQueue(worker, running);
    } finally {
      await this.#stores.close();
    }
  }

  async #closeQueue(worker: Worker<WalkJob>, running: Promise<unknown>): Promise<WorkerOutcome> {
    const redis = this.redis;
    if (redis.status !== 'ready') {
      // Redis away: nothing BullMQ or this worker would wait for can reach it, so it stops without
      // them; its walks' jobs go back to the queue when their leases run out, as after a kill.
      redis.disconnect();
      await worker.close(true);
      return this.#outcome();
    }
    await worker.close();
    await running.catch(() => undefined);
    // A worker that stopped for its key stays listed for `status`; one stopped by its signal leaves no trace.
    if (this.#stopError === undefined) await redis.hdel(keys.workers, this.id).catch(() => undefined);
    else await this.#report('stopped', whyStopped(this.#stopError));
    await redis.quit().catch(() => redis.disconnect());
    return this.#outcome();
  }
}

function whyStopped(error: AuthError | InsufficientCreditsError): string {
  return error instanceof AuthError
    ? `its API key was refused (${error.message}): set SOCIALSTREAM_API_KEY on that machine; its walks went back to the queue`
    : `its account is out of credits: buy credits for that key; its walks went back to the queue`;
}
