/**
 * `exportTo` at the edges a script reaches: a resumed client stream, a `runId` handed out again with
 * other parameters, a `progress` callback that throws, a `transform` that returns what JSON cannot
 * hold. Against the sandbox over loopback; purchases counted on the sandbox's side.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { exportTo, TransformError, type ExportOptions } from '../../src/export/index.ts';
import { loadState } from '../../src/export/journal.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { readCsvWithPython, scratchDir } from '../sinks/helpers/files.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);
const ids = (path: string): string[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { id: string }).id);

let sandbox: Sandbox;
let client: Client;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

beforeAll(async () => ({ sandbox, client } = await startSandboxClient()));
afterAll(() => closeSandboxClient({ sandbox, client }));

/** The files this process holds open under `folder`. */
function openFilesUnder(folder: string): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(folder));
}

describe('exportTo of a stream resumed from a checkpoint', () => {
  it('continues from the checkpoint, buying none of the pages before it', async () => {
    const all = await exportTo(client.forum.subforum({ subforum: 'from-cp-n300' }), { out: fresh('all.ndjson') });
    expect(all.records).toBe(300);
    const allIds = ids(all.output);
    const stream = client.forum.subforum({ subforum: 'from-cp-n300' });
    let read = 0;
    for await (const _post of stream) if (++read === 110) break;
    const checkpoint = stream.checkpoint();
    const out = fresh('rest.ndjson');
    const before = charged();
    const summary = await exportTo(client.resume(checkpoint), { out });
    expect(summary).toMatchObject({ complete: true, records: 190 });
    expect(ids(out)).toEqual(allIds.slice(110));
    // Pages of 100 records: the page the checkpoint stands in (the 2nd) is read again, none before it.
    expect(charged() - before).toBe(2);
  });
});

describe('exportTo into a dataset with a runId handed out again', () => {
  it('walks a runId seen before with other parameters as a new run, never "complete" over its records', async () => {
    const dir = fresh('runs');
    const options = { dataset: dir, writer: 'walk-a', resume: true, runId: 'export-7:1' } as const;
    const first = await exportTo(client.forum.subforum({ subforum: 'runid-a-n60' }), options);
    expect(first).toMatchObject({ complete: true, records: 60 });
    const before = charged();
    const other = await exportTo(client.forum.subforum({ subforum: 'runid-b-n300' }), options);
    expect(other).toMatchObject({ complete: true, records: 300 });
    expect(charged() - before).toBe(3);
    // The same run with the same parameters is still recognised, and buys nothing.
    const again = await exportTo(client.forum.subforum({ subforum: 'runid-b-n300' }), options);
    expect(again).toMatchObject({ complete: true, records: 0, pages: 0 });
    expect(charged() - before).toBe(3);
  });
});

describe('exportTo with a progress callback that throws', () => {
  for (const format of ['ndjson', 'csv', 'parquet'] as const) {
    it(`fails with the callback's error and leaves no file of a ${format} export open`, async () => {
      const folder = fresh(`progress-${format}`);
      const failure = new Error('progress broke');
      let calls = 0;
      const options: ExportOptions = {
        out: join(folder, `posts.${format}`),
        progress: () => {
          if (++calls === 3) throw failure;
        },
      };
      const error = await exportTo(client.forum.subforum({ subforum: `progress-throws-${format}-n300` }), options).catch((thrown: unknown) => thrown);
      expect(error).toBe(failure);
      expect(openFilesUnder(folder)).toEqual([]);
    });
  }

  it('leaves no file open when it throws only on its last call, once the run stopped', async () => {
    const folder = fresh('progress-last');
    const failure = new Error('progress broke at the end');
    const error = await exportTo(client.forum.subforum({ subforum: 'progress-last-n300' }), {
      out: join(folder, 'posts.csv'),
      progress: (progress) => {
        if (progress.finished) throw failure;
      },
    }).catch((thrown: unknown) => thrown);
    expect(error).toBe(failure);
    expect(openFilesUnder(folder)).toEqual([]);
  });
});

describe('exportTo with a transform that returns what JSON cannot hold', () => {
  const cyclic = (): unknown => {
    const record: Record<string, unknown> = { id: 'c' };
    record.self = record;
    return record;
  };
  const cases: [string, (records: AsyncIterable<unknown>) => AsyncIterable<unknown>, RegExp][] = [
    ['undefined', async function* shapeUndefined(records) {
      for await (const _record of records) yield undefined;
    }, /shapeUndefined.*undefined/],
    ['a string', async function* shapeText(records) {
      for await (const record of records) yield JSON.stringify(record);
    }, /shapeText.*a string/],
    ['a cycle', async function* shapeCycle(records) {
      for await (const _record of records) yield cyclic();
    }, /shapeCycle.*refers to itself \(\.self\)/],
    ['a function', async function* shapeFunction(records) {
      for await (const record of records) yield { ...(record as object), format: () => 'x' };
    }, /shapeFunction.*a function at \.format/],
    ['a symbol', async function* shapeSymbol(records) {
      for await (const record of records) yield { ...(record as object), tags: ['a', Symbol('b')] };
    }, /shapeSymbol.*a symbol at \.tags\[1\]/],
  ];
  for (const [what, transform, message] of cases) {
    it(`fails with TransformError naming the transform and the record when it gives ${what}, before the next request`, async () => {
      const out = fresh('shaped.ndjson');
      const before = charged();
      const error = await exportTo(client.forum.subforum({ subforum: `bad-shape-n300` }), { out, transform }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(TransformError);
      expect((error as TransformError).code).toBe('TRANSFORM');
      expect((error as Error).message).toMatch(message);
      // Names the record: the first of page 1 of the walk.
      expect((error as Error).message).toMatch(/record 1 it gave for page 1 of forum\/subforum subforum=bad-shape-n300/);
      expect(charged() - before).toBe(1);
    });
  }

  it('fails with TransformError when transform returns no iterable at all', async () => {
    const before = charged();
    const noIterable = (() => undefined) as unknown as ExportOptions['transform'];
    const error = await exportTo(client.forum.subforum({ subforum: 'bad-shape-n300' }), { out: fresh('none.ndjson'), transform: noIterable }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TransformError);
    expect((error as Error).message).toMatch(/transform noIterable returned undefined, not an iterable/);
    expect(charged() - before).toBe(1);
  });

  it('does not refuse a bigint in a record as a value JSON cannot hold', async () => {
    const out = fresh('big.ndjson');
    const summary = await exportTo(client.forum.subforum({ subforum: 'big-shape-n30' }), {
      out,
      transform: async function* withBig(records) {
        for await (const record of records) yield { id: (record as { id: string }).id, big: 2n ** 64n };
      },
    }).catch((thrown: unknown) => thrown);
    expect(summary).not.toBeInstanceOf(TransformError);
  });
});

describe('exportTo resumed with a lower limit after a run that did not end', () => {
  /** The ids of a CSV or Parquet output, read back by python3's csv module or DuckDB. */
  async function idsIn(path: string): Promise<string[]> {
    if (path.endsWith('.csv')) {
      const [header, ...rows] = readCsvWithPython(path);
      return rows.map((row) => row[header.indexOf('id')]);
    }
    return (await query(`SELECT id FROM read_parquet(${sqlPath(path)})`)).map((row) => String(row.id));
  }

  for (const format of ['csv', 'parquet'] as const) {
    it(`writes only the lower limit into a ${format} output, and the next run writes what was staged past it first`, async () => {
      const params = { subforum: `lower-${format}-n3000`, trim: true };
      const reference = ids((await exportTo(client.forum.subforum(params), { out: fresh('reference.ndjson') })).output);
      const out = fresh(`lowered.${format}`);
      // A run that fails with 1,000+ records staged has not ended, as after a kill: its resume continues it.
      const failed = await exportTo(client.forum.subforum(params), {
        out,
        limit: 2500,
        progress: (progress) => {
          if (progress.records > 1000) throw new Error('stopped');
        },
      }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(Error);
      const before = charged();
      const lowered = await exportTo(client.forum.subforum(params), { out, resume: true, limit: 1000 });
      expect(lowered).toMatchObject({ stoppedBy: 'limit', records: 1000 });
      expect(charged()).toBe(before);
      expect(await idsIn(out)).toEqual(reference.slice(0, 1000));
      const rest = await exportTo(client.forum.subforum(params), { out, resume: true });
      expect(rest).toMatchObject({ complete: true, records: 2000 });
      expect(await idsIn(out)).toEqual(reference);
    });
  }
});

describe('exportTo into a dataset, resumed with a lower limit after a kill', () => {
  it('publishes only the lower limit, and the next run publishes what was staged past it first, buying no page again', async () => {
    // Slowed down, so the kill lands mid-walk.
    const slow = await startSandbox({ port: 0, latencyMs: 20 });
    const slowClient = createClient({ apiKey: slow.apiKey, baseUrl: slow.url });
    const paid = () => slow.requests.charged[slow.apiKey] ?? 0;
    try {
      const url = 'https://forum.example/r/x/comments/lower/thread-n1500';
      const reference = ids((await exportTo(slowClient.forum.postComments({ url }), { out: fresh('tree.ndjson') })).output);
      const pages = paid();
      const dir = fresh('lowered-dataset');
      const journal = join(dir, '_dataset', 'forum__post__comments', 'staging-all', 'checkpoint.json');
      const staged = async (): Promise<number> => (await loadState(journal).catch(() => undefined))?.records ?? 0;
      const idsIn = async (): Promise<string[]> =>
        (await query(`SELECT id FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`)).map((row) => String(row.id)).sort();

      const env = { ...process.env, SOCIALSTREAM_BASE_URL: slow.url, SOCIALSTREAM_API_KEY: slow.apiKey, CHILD_TREE_URL: url };
      const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'fixtures/export-child.ts'), JSON.stringify({ dataset: dir, limit: 1200 })], { env, stdio: 'ignore' });
      const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, signal) => done(signal)));
      while ((await staged()) <= 600) await new Promise((done) => setTimeout(done, 5));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const kept = await staged();
      expect(kept).toBeGreaterThan(600);
      expect(kept).toBeLessThan(1200);

      const killedAt = paid();
      const lowered = await exportTo(slowClient.forum.postComments({ url }), { dataset: dir, resume: true, limit: 400 });
      expect(lowered).toMatchObject({ complete: false, stoppedBy: 'limit', records: 400 });
      expect(paid()).toBe(killedAt);
      expect(await idsIn()).toEqual(reference.slice(0, 400).sort());
      expect(await staged()).toBe(kept);

      const rest = await exportTo(slowClient.forum.postComments({ url }), { dataset: dir, resume: true });
      expect(rest).toMatchObject({ complete: true, records: 1100 });
      expect(await idsIn()).toEqual([...reference].sort());
      // Every page once, but for those in flight at the kill (16 at most).
      expect(paid() - pages).toBeGreaterThanOrEqual(pages);
      expect(paid() - pages).toBeLessThanOrEqual(pages + 16);
    } finally {
      await slowClient.close();
      await slow.close();
    }
  });
});
