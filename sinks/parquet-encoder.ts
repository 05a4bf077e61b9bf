/**
 * Where a Parquet row group is encoded. Laying cells out into column chunks (dictionaries,
 * statistics, PLAIN bytes) and compressing the pages was more than half of the Parquet sink's work
 * on the writer's thread, so a large row group goes to one worker thread, which encodes it while
 * the writer maps the next rows. Nothing is copied on the way: the group's typed arrays and text
 * (`RowGroupCells`) lie on SharedArrayBuffers, which the worker reads in place (and which this
 * thread still holds, should the worker fail), and the encoded group comes back as one buffer on
 * shared memory too (never transferred: a detached buffer makes V8 drop the worker's optimized code).
 *
 * The worker is shared by every writer of the process, started on the first large row group, and
 * holds the process open only while it has groups to encode. If it cannot start, fails, or dies,
 * its groups are encoded here instead: slower, never lost. Small row groups (and so small files)
 * are encoded here and never start a thread.
 */
import { Worker } from 'node:worker_threads';
import { encodeRowGroup, type CompressedRowGroup } from './parquet-columns.ts';
import type { CellColumns, ColumnSpec, PlainColumns } from './parquet-types.ts';

/** What the writer asks the worker (`parquet-encoder-worker.ts`). */
export interface EncodeRequest {
  id: number;
  specs: readonly ColumnSpec[];
  cells: CellColumns;
  plain: PlainColumns;
}

/** The worker's answer: the encoded group, or none when encoding failed there (it is then done here). */
export interface EncodeReply {
  id: number;
  group?: CompressedRowGroup;
}

/**
 * The worker's garbage is short-lived (a group's value slices and page buffers). V8's default young
 * generation let it grow to about 130 MB; 4 MB held the Parquet sink's peak RSS near 225 MB on a
 * million records, at no measured cost in speed.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 };

/** Below this many cells a row group is encoded here: posting it would cost about what it saves. */
const WORKER_MIN_CELLS = 20_000;

/** Encodes one row group (`encodeRowGroup`), in the worker when the group is large enough. */
export function encodeRowGroupOffThread(specs: readonly ColumnSpec[], cells: CellColumns, plain: PlainColumns): Promise<CompressedRowGroup> {
  if (cells.rows * specs.length < WORKER_MIN_CELLS) return encodeRowGroup(specs, cells, plain);
  return encoderWorker().encode(specs, cells, plain);
}

/**
 * Starts the shared worker if it is not running. The writer calls it as soon as its first group is
 * sure to go to the worker (`workerRows`), so the thread's start (about 0.1 s: a thread and the
 * encoder's modules) passes while that group's rows are still being gathered.
 */
export function startEncoderWorker(): void {
  encoderWorker();
}

/** How many rows of `columns` columns make a group large enough to be encoded in the worker. */
export function workerRows(columns: number): number {
  return Math.ceil(WORKER_MIN_CELLS / Math.max(1, columns));
}

function encoderWorker(): EncoderWorker {
  shared ??= new EncoderWorker();
  return shared;
}

/**
 * Ends the shared worker now; groups it had not answered are encoded on this thread, and the next
 * large group starts a new worker. Resolves whether a worker was running. For tests, and for a host
 * that wants no thread left behind at a given moment (an idle worker never keeps a process alive).
 */
export async function stopEncoderWorker(): Promise<boolean> {
  const worker = shared;
  shared = undefined;
  return worker === undefined ? false : worker.stop();
}

/**
 * The worker's code: it loads the worker module, compiled (`dist`) or from TypeScript source through
 * tsx (tests, `npm run bench`), where Node alone cannot. Given as text so it runs the same under
 * a TypeScript loader, from `dist`, and inside test runners. A module that fails to load ends the
 * worker with an error, which sends its groups back to the writer's thread.
 */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
const loading = workerData.tsx === undefined
  ? import(workerData.entry)
  : import(workerData.tsx).then(({ tsImport }) => tsImport(workerData.entry, workerData.entry));
loading.catch((error) => process.nextTick(() => { throw error; }));
`;

/** Where the worker's module is, and the tsx API that loads it when it is TypeScript source. */
function workerData(): { entry: string; tsx?: string } {
  const source = import.meta.url.endsWith('.ts');
  const entry = new URL(`./parquet-encoder-worker.${source ? 'ts' : 'js'}`, import.meta.url).href;
  if (!source) return { entry };
  return { entry, tsx: import.meta.resolve('tsx/esm/api') };
}

interface Job {
  specs: readonly ColumnSpec[];
  cells: CellColumns;
  plain: PlainColumns;
  resolve: (group: CompressedRowGroup) => void;
  reject: (error: unknown) => void;
}

/** The worker thread and the groups it has not answered yet. */
class EncoderWorker {
  readonly #worker: Worker | undefined;
  readonly #jobs = new Map<number, Job>();
  #nextId = 0;
  #broken = false;

  constructor() {
    try {
      this.#worker = new Worker(BOOTSTRAP, {
        eval: true,
        workerData: workerData(),
        resourceLimits: WORKER_LIMITS,
        // The parent's loaders (`--import tsx` and the like) have nothing to load here, and each
        // would cost the thread its own copy.
        execArgv: [],
      });
    } catch {
      this.#broken = true;
      return;
    }
    this.#worker.unref();
    this.#worker.on('message', ({ id, group }: EncodeReply) => {
      const job = this.#take(id);
      if (job === undefined) return;
      if (group === undefined) encodeHere(job);
      else job.resolve(group);
    });
    // A worker that fails leaves its groups to this thread, and every later group too.
    const fail = (): void => {
      this.#broken = true;
      for (const id of [...this.#jobs.keys()]) encodeHere(this.#take(id)!);
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', fail);
  }

  encode(specs: readonly ColumnSpec[], cells: CellColumns, plain: PlainColumns): Promise<CompressedRowGroup> {
    if (this.#broken || this.#worker === undefined) return encodeRowGroup(specs, cells, plain);
    const worker = this.#worker;
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      if (this.#jobs.size === 0) worker.ref();
      this.#jobs.set(id, { specs, cells, plain, resolve, reject });
      // The cells' arrays lie on SharedArrayBuffers: posting them shares them, copying nothing.
      const request: EncodeRequest = { id, specs, cells, plain };
      worker.postMessage(request);
    });
  }

  async stop(): Promise<boolean> {
    if (this.#worker === undefined) return false;
    await this.#worker.terminate();
    return true;
  }

  #take(id: number): Job | undefined {
    const job = this.#jobs.get(id);
    this.#jobs.delete(id);
    // An idle worker must not keep the process alive.
    if (this.#jobs.size === 0) this.#worker?.unref();
    return job;
  }
}

function encodeHere({ specs, cells, plain, resolve, reject }: Job): void {
  encodeRowGroup(specs, cells, plain).then(resolve, reject);
}

let shared: EncoderWorker | undefined;
