/**
 * Records of a test's own making as a client stream: a tiny service on loopback answers one page of
 * them (the operation's own envelope, no continuation) for a resource name, so a test of what the
 * engine does with odd records (a field named `_date`, a time no date can hold, a lone surrogate)
 * still goes through real HTTP, the client and the engine, never around them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Client, type RecordStream } from '../../../src/index.ts';
import { exportTo, toDataset, type DatasetChanges, type ExportOptions, type ExportSummary } from '../../../src/export/index.ts';

/** Where each operation this helper serves keeps its records, and which parameter names the resource. */
const SHAPES: Record<string, { param: string; wrap: (records: unknown[]) => unknown }> = {
  'forum/subforum': { param: 'subforum', wrap: (posts) => ({ success: true, data: { posts } }) },
  'videosite/video/comments': { param: 'url', wrap: (comments) => ({ success: true, data: { comments } }) },
};

export interface ServedRecords {
  /** Where it listens, for a client of another process (the CLI). */
  readonly url: string;
  /** Serves `records` as `operation` (default `forum/subforum`) answers them, under resource `name`, from now on. */
  serve(name: string, records: readonly object[], operation?: keyof typeof SHAPES): void;
  /** A fresh stream of `records` as `operation` (default `forum/subforum`) answers them, under resource `name`. */
  stream(name: string, records: readonly object[], operation?: keyof typeof SHAPES): RecordStream<unknown>;
  close(): Promise<void>;
}

/** `date`, when given, is the `Date` header of every answer (Node's own, the time now, otherwise). */
export async function serveRecords(options: { date?: string } = {}): Promise<ServedRecords> {
  const held = new Map<string, readonly object[]>();
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const operation = url.pathname.replace(/^\/v1\/scrape\//, '');
    const shape = SHAPES[operation];
    const records = shape === undefined ? undefined : held.get(`${operation} ${url.searchParams.get(shape.param)}`);
    response.setHeader('content-type', 'application/json');
    if (options.date !== undefined) response.setHeader('date', options.date);
    if (shape === undefined || records === undefined) {
      response.statusCode = 404;
      response.end(JSON.stringify({ success: false, error: 'not found' }));
      return;
    }
    response.end(JSON.stringify(shape.wrap([...records])));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client: Client = createClient({ apiKey: 'sk_test_served_records', baseUrl: `http://127.0.0.1:${port}`, retry: { retries: 0 } });
  const serve = (name: string, records: readonly object[], operation: keyof typeof SHAPES = 'forum/subforum') => held.set(`${operation} ${name}`, records);
  return {
    url: `http://127.0.0.1:${port}`,
    serve,
    stream(name, records, operation = 'forum/subforum') {
      serve(name, records, operation);
      return (client.stream as (id: string, params: Record<string, string>) => RecordStream<unknown>)(operation, { [SHAPES[operation].param]: name });
    },
    async close() {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the dataset tests of records read off a summary: its counts, and the dataset's changes beside them. */
export type FlatSummary = ExportSummary & DatasetChanges;

/**
 * `toDataset` of a test's records: `options.operation` and `options.params` (its `subforum` or `url`
 * names the resource) say what they are, the rest are the engine's options. One service serves every
 * call; close it with `closeServed()` after the suite.
 */
export async function recordsIntoDataset(
  records: readonly object[],
  dir: string,
  options: { operation?: keyof typeof SHAPES; params?: Record<string, string> } & Omit<ExportOptions, 'out' | 'dataset'> = {},
): Promise<FlatSummary> {
  const { operation = 'forum/subforum', params = {}, ...engine } = options;
  served ??= serveRecords();
  const name = params[SHAPES[operation].param] ?? 'records';
  const summary = await toDataset((await served).stream(name, records, operation), dir, engine);
  return { ...summary, ...summary.dataset! };
}

/** `exportTo` of a test's records into the file `out` (its format by extension), served as `recordsIntoDataset` serves them. */
export async function recordsIntoFile(
  records: readonly object[],
  out: string,
  options: { operation?: keyof typeof SHAPES; params?: Record<string, string> } & Omit<ExportOptions, 'out' | 'dataset'> = {},
): Promise<ExportSummary> {
  const { operation = 'forum/subforum', params = {}, ...engine } = options;
  served ??= serveRecords();
  const name = params[SHAPES[operation].param] ?? 'records';
  return exportTo((await served).stream(name, records, operation), { ...engine, out });
}

let served: Promise<ServedRecords> | undefined;

export async function closeServed(): Promise<void> {
  await (await served)?.close();
  served = undefined;
}
