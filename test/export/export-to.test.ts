/**
 * `exportTo` from a script: the engine's guarantees without the CLI, against the sandbox over
 * loopback, every credit claim counted on the sandbox's side.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, filter, map, pipe, ResponseFormatError, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { exportTo, HeldStateError, LockedError, NotWritableError, StreamUsedError } from '../../src/export/index.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);
const lines = (path: string): { id: string }[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { id: string });

let sandbox: Sandbox;
let client: Client;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

beforeAll(async () => ({ sandbox, client } = await startSandboxClient()));
afterAll(() => closeSandboxClient({ sandbox, client }));

describe('exportTo a file', () => {
  it('writes every record of every walk once, and says what it did', async () => {
    const out = fresh('posts.ndjson');
    const before = charged();
    const summary = await exportTo([client.forum.subforum({ subforum: 'lib-a-n60' }), client.forum.subforum({ subforum: 'lib-b-n30' })], { out });
    expect(summary).toMatchObject({ complete: true, records: 90, received: 90, duplicates: 0, walks: { done: 2, total: 2 }, remaining: 0, output: out });
    expect(summary.credits).toBe(charged() - before);
    expect(new Set(lines(out).map((post) => post.id)).size).toBe(90);
    expect(existsSync(`${out}.checkpoint.json`) || existsSync(`${out}.spool.ndjson`) || existsSync(`${out}.lock`)).toBe(false);
  });

  it('writes a CSV or Parquet output while it stages pages, and publishes it whole under its own name', async () => {
    for (const format of ['csv', 'parquet'] as const) {
      const dir = fresh(`live-${format}`);
      mkdirSync(dir);
      const out = join(dir, `posts.${format}`);
      const during: string[][] = [];
      const summary = await exportTo(client.forum.subforum({ subforum: `lib-live-${format}-n500` }), {
        out,
        progress: () => void during.push(readdirSync(dir)),
      });
      expect(summary).toMatchObject({ complete: true, records: 500 });
      // Mid-run the sink's file is being written beside the staging; the output's name is not taken yet.
      expect(during.some((names) => names.some((name) => name.includes(`posts.${format}.live.${format}`)))).toBe(true);
      expect(during.every((names) => !names.includes(`posts.${format}`))).toBe(true);
      // CSV keeps its record of the export beside it; Parquet, in its footer.
      expect(readdirSync(dir).sort()).toEqual(format === 'csv' ? ['posts.csv', 'posts.csv.export.json'] : ['posts.parquet']);
    }
  });

  it('renders its summary in Jupyter as a table, and keeps the summary plain JSON', async () => {
    const summary = await exportTo(client.forum.subforum({ subforum: 'lib-shown-n30' }), { out: fresh('shown.ndjson') });
    const show = (summary as unknown as Record<symbol, () => { 'text/html': string; 'text/plain': string }>)[Symbol.for('Jupyter.display')];
    const bundle = show.call(summary);
    expect(bundle['text/html']).toMatch(/<table[\s\S]*30 written of 30 received/);
    expect(bundle['text/plain']).toMatch(/^wrote 30 records \(1 page\)/);
    expect(Object.keys(JSON.parse(JSON.stringify(summary)) as object)).toEqual(Object.keys(summary));
  });

  it('stops at maxCredits, and a resume is a new run that continues without buying a page again', async () => {
    const out = fresh('capped.ndjson');
    const before = charged();
    const walk = () => client.forum.subforum({ subforum: 'lib-cap-n2000' });
    const first = await exportTo(walk(), { out, maxCredits: 4 });
    expect(first).toMatchObject({ complete: false, stoppedBy: 'maxCredits', pages: 4, credits: 4 });
    expect(charged() - before).toBe(4);
    expect(lines(out)).toHaveLength(first.records);
    await expect(exportTo(walk(), { out })).rejects.toBeInstanceOf(HeldStateError);
    const second = await exportTo(walk(), { out, resume: true });
    expect(second).toMatchObject({ complete: true, resumed: true, records: 2000 - first.records });
    // Every page bought once: the resume bought only the pages the first run had not.
    expect(second.exportCredits).toBe(first.pages + second.pages);
    expect(charged() - before).toBe(first.pages + second.pages);
    expect(new Set(lines(out).map((post) => post.id)).size).toBe(2000);
  });

  it('shapes each staged page with transform, and limit counts what it wrote', async () => {
    const out = fresh('shaped.ndjson');
    const summary = await exportTo(client.forum.subforum({ subforum: 'lib-shape-n200' }), {
      out,
      limit: 30,
      transform: (records) =>
        pipe(
          records as AsyncIterable<{ id: string; score: number }>,
          filter((post) => post.score % 2 === 0),
          map((post) => ({ id: post.id, score: post.score })),
        ),
    });
    expect(summary).toMatchObject({ stoppedBy: 'limit', records: 30 });
    const written = lines(out) as unknown as { id: string; score: number }[];
    expect(written).toHaveLength(30);
    for (const row of written) expect(Object.keys(row)).toEqual(['id', 'score']);
    for (const row of written) expect(row.score % 2).toBe(0);
  });

  it('refuses a second export of the same output at once (LOCKED), spending nothing', async () => {
    const out = fresh('locked.ndjson');
    const slow = await startSandbox({ port: 0, latencyMs: 50 });
    const slowClient = createClient({ apiKey: slow.apiKey, baseUrl: slow.url });
    try {
      const first = exportTo(slowClient.forum.subforum({ subforum: 'lib-lock-n200' }), { out });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const before = charged();
      const second = exportTo(client.forum.subforum({ subforum: 'lib-lock-n200' }), { out });
      await expect(second).rejects.toBeInstanceOf(LockedError);
      await expect(second).rejects.toMatchObject({ code: 'LOCKED' });
      expect(charged()).toBe(before);
      expect(await first).toMatchObject({ complete: true, records: 200 });
    } finally {
      await slowClient.close();
      await slow.close();
    }
  });

  it('refuses a stream that was already iterated (STREAM_USED), and a path no file can be written to (NOT_WRITABLE)', async () => {
    const stream = client.forum.subforum({ subforum: 'lib-used-n10' });
    for await (const post of stream) void post;
    await expect(exportTo(stream, { out: fresh('used.ndjson') })).rejects.toBeInstanceOf(StreamUsedError);
    const before = charged();
    const refused = exportTo(client.forum.subforum({ subforum: 'lib-path-n10' }), { out: '/dev/null/x.ndjson' });
    await expect(refused).rejects.toBeInstanceOf(NotWritableError);
    await expect(refused).rejects.toThrow(/\/dev\/null is not a folder/);
    expect(charged()).toBe(before);
  });

  it('keeps one record per key by default on a feed whose pages shift, and counts the duplicates', async () => {
    const repeating = await startSandbox({ port: 0, faults: { duplicates: true } });
    const repeatingClient = createClient({ apiKey: repeating.apiKey, baseUrl: repeating.url });
    try {
      const out = fresh('shifting.ndjson');
      const summary = await exportTo(repeatingClient.forum.subforum({ subforum: 'lib-shift-n500' }), { out });
      const ids = lines(out).map((post) => post.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(summary.duplicates).toBeGreaterThan(0);
      expect(summary.received).toBe(summary.records + summary.duplicates);
      const kept = await exportTo(repeatingClient.forum.subforum({ subforum: 'lib-shift-n500' }), { out: fresh('all.ndjson'), keepDuplicates: true });
      expect(kept.duplicates).toBe(0);
      expect(kept.records).toBe(kept.received);
    } finally {
      await repeatingClient.close();
      await repeating.close();
    }
  });
});

describe('exportTo a dataset', () => {
  it('runs the shards of one dataset at once, an empty shard included', async () => {
    const dir = fresh('sharded');
    // One parameter set and two shares: one share is empty.
    const summaries = await Promise.all(
      [1, 2].map((index) => exportTo([client.forum.subforum({ subforum: 'lib-shard-n25' })], { dataset: dir, shard: { index, count: 2 } })),
    );
    expect(summaries.map((summary) => summary.walks.total).sort()).toEqual([0, 1]);
    for (const summary of summaries) expect(summary.complete).toBe(true);
    expect(summaries.reduce((sum, summary) => sum + (summary.dataset?.added ?? 0), 0)).toBe(25);
  });

  it('buys nothing for a run it already published complete (runId), and walks the next run as usual', async () => {
    const dir = fresh('runs');
    const walk = () => client.forum.subforum({ subforum: 'lib-runs-n60' });
    const options = { dataset: dir, writer: 'walk-a', resume: true } as const;
    const first = await exportTo(walk(), { ...options, runId: 'export-1:1' });
    expect(first).toMatchObject({ complete: true, records: 60 });
    // The same run handed out again (a queue job whose worker was lost before it said it was done).
    const before = charged();
    const again = await exportTo(walk(), { ...options, runId: 'export-1:1' });
    expect(again).toMatchObject({ complete: true, records: 0, pages: 0 });
    expect(charged()).toBe(before);
    // The next run is a run like any other: this listing is not newest first, so it is walked again.
    const next = await exportTo(walk(), { ...options, runId: 'export-1:2' });
    expect(next).toMatchObject({ complete: true, records: 60 });
    expect(charged()).toBeGreaterThan(before);
    await expect(exportTo(walk(), { out: join(dir, 'x.ndjson'), runId: 'r' })).rejects.toThrow(TypeError);
  });
});

describe('exportTo and a service that echoes the key', () => {
  const KEY = 'sk_live_echoed_key_0123456789';
  /** forum/subforum: page 1 echoes the key in a record, and with `cursor-echo` in its `after` too. */
  async function echoing(): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const subforum = url.searchParams.get('subforum');
      const after = url.searchParams.get('after');
      const posts = after === null ? [{ id: 'p1', created_utc: 1_700_000_000, title: `my key is ${KEY}` }] : [{ id: 'p2', created_utc: 1_700_000_100, title: 'two' }];
      const next = after !== null ? undefined : subforum === 'cursor-echo' ? `t3_${KEY}` : 't3_next';
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ success: true, data: { posts, ...(next === undefined ? {} : { after: next }) } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }
  const everything = (dir: string): string =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
      .join('\n');

  it('keeps the key out of every file it writes, for a file and a dataset', async () => {
    const service = await echoing();
    const echoClient = createClient({ apiKey: KEY, baseUrl: service.url, retry: { retries: 0 } });
    try {
      const dir = fresh('echo');
      const file = await exportTo(echoClient.forum.subforum({ subforum: 'record-echo' }), { out: join(dir, 'posts.ndjson') });
      expect(file.records).toBe(2);
      await exportTo(echoClient.forum.subforum({ subforum: 'record-echo' }), { dataset: join(dir, 'ds') });
      // CSV is written while the pages are staged: a page the key was scrubbed from is written as the spool holds it.
      await exportTo(echoClient.forum.subforum({ subforum: 'record-echo' }), { out: join(dir, 'posts.csv') });
      expect(everything(dir)).not.toContain(KEY);
      expect(readFileSync(join(dir, 'posts.ndjson'), 'utf8')).toContain('[redacted]');
      expect(readFileSync(join(dir, 'posts.csv'), 'utf8')).toContain('my key is [redacted]');
    } finally {
      await echoClient.close();
      await service.close();
    }
  });

  it('refuses a continuation that holds the key, and stages none of it', async () => {
    const service = await echoing();
    const echoClient = createClient({ apiKey: KEY, baseUrl: service.url, retry: { retries: 0 } });
    try {
      const dir = fresh('cursor-echo');
      const failure = await exportTo(echoClient.forum.subforum({ subforum: 'cursor-echo' }), { out: join(dir, 'posts.ndjson') }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ResponseFormatError);
      expect((failure as Error).message).toMatch(/continuation value that holds the API key/);
      expect((failure as Error).message).not.toContain(KEY);
      expect(everything(dir)).not.toContain(KEY);
    } finally {
      await echoClient.close();
      await service.close();
    }
  });
});
