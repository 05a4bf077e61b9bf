/**
 * Page compression, off the writer's thread where it can be. Snappy (snappyjs: pure JavaScript) took
 * a fifth of the Parquet sink's time on sandbox posts, all of it on the thread that lays rows out; so
 * larger snappy pages go to one worker thread, which compresses a row group while the writer lays
 * out the next. GZIP uses zlib's own thread pool; UNCOMPRESSED is the page itself.
 *
 * The worker is shared by every writer of the process, started on the first large page, and holds
 * the process open only while it has pages to compress. If it cannot start or dies, pages are
 * compressed here instead: slower, never lost.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { gzip } from 'node:zlib';
import snappy from 'snappyjs';

/** Compresses one page with the column chunk's codec. */
export type CompressPage = (page: Buffer) => Promise<Buffer>;

/** Below this, a page is compressed here: posting it to the worker and back costs about as much. */
const WORKER_MIN_BYTES = 16 * 1024;

/** Parquet codec name (`SNAPPY`, `GZIP`, `UNCOMPRESSED`) → how its pages are compressed. */
export function pageCompressor(codec: string): CompressPage {
  switch (codec) {
    case 'SNAPPY':
      return (page) => (page.length < WORKER_MIN_BYTES ? Promise.resolve(snappyHere(page)) : snappyWorker().compress(page));
    case 'GZIP':
      return (page) =>
        new Promise((resolve, reject) => {
          gzip(page, (error, compressed) => (error === null ? resolve(compressed) : reject(error)));
        });
    case 'UNCOMPRESSED':
      return (page) => Promise.resolve(page);
    default:
      throw new TypeError(`unknown Parquet codec ${codec}`);
  }
}

function snappyHere(page: Buffer): Buffer {
  const compressed = snappy.compress(page);
  return Buffer.isBuffer(compressed) ? compressed : Buffer.from(compressed.buffer, compressed.byteOffset, compressed.byteLength);
}

/**
 * The worker's code: snappyjs from the path this module resolves (so it is the same copy), a page
 * in, its compressed bytes out. Plain CommonJS given as text, so it runs the same from `src` under
 * a TypeScript loader, from `dist`, and inside test runners.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const snappy = require(workerData.snappyjs);
parentPort.on('message', ({ id, page }) => {
  parentPort.postMessage({ id, compressed: snappy.compress(Buffer.from(page.buffer, page.byteOffset, page.byteLength)) });
});
`;

interface Job {
  page: Buffer;
  resolve: (compressed: Buffer) => void;
}

class SnappyWorker {
  readonly #worker: Worker | undefined;
  readonly #jobs = new Map<number, Job>();
  #nextId = 0;
  #broken = false;

  constructor() {
    try {
      const snappyjs = createRequire(import.meta.url).resolve('snappyjs');
      this.#worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { snappyjs } });
    } catch {
      this.#broken = true;
      return;
    }
    this.#worker.unref();
    this.#worker.on('message', ({ id, compressed }: { id: number; compressed: Uint8Array }) => {
      const job = this.#jobs.get(id);
      if (job === undefined) return;
      this.#settled(id);
      job.resolve(Buffer.from(compressed.buffer, compressed.byteOffset, compressed.byteLength));
    });
    // A worker that fails leaves its pages to this thread, and every later page too.
    const fail = (): void => {
      this.#broken = true;
      for (const [id, job] of this.#jobs) {
        this.#settled(id);
        job.resolve(snappyHere(job.page));
      }
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', fail);
  }

  compress(page: Buffer): Promise<Buffer> {
    if (this.#broken || this.#worker === undefined) return Promise.resolve(snappyHere(page));
    return new Promise((resolve) => {
      const id = this.#nextId++;
      if (this.#jobs.size === 0) this.#worker!.ref();
      this.#jobs.set(id, { page, resolve });
      // Posted as a copy (structured clone): the writer may reuse nothing it handed over, and the
      // copy costs a small part of compressing it.
      this.#worker!.postMessage({ id, page });
    });
  }

  /** An idle worker must not keep the process alive. */
  #settled(id: number): void {
    this.#jobs.delete(id);
    if (this.#jobs.size === 0) this.#worker?.unref();
  }
}

let shared: SnappyWorker | undefined;

function snappyWorker(): SnappyWorker {
  shared ??= new SnappyWorker();
  return shared;
}
