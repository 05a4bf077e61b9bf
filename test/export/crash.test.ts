/**
 * `exportTo` under real crashes: a child script (`fixtures/export-child.ts`) exports a forum comment
 * tree, bought ahead 16 pages at a time, and is killed with SIGKILL mid-walk, then resumed. Every
 * credit claim is the sandbox's own charged counter, one account per scenario; outputs are read back
 * with JSON.parse and DuckDB and compared with an uninterrupted export done in-process.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { exportTo, NotWritableError, type ExportOptions, type ExportSummary } from '../../src/export/index.ts';
import { keyScrubber } from '../../src/scrub.ts';
import { finished, randomDelays, type CliResult } from '../cli/helpers.ts';
import { readNdjson } from '../cli/readers.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

// 1,500 comments: 414 pages, about 2 s at 30 ms a request and 16 pages in flight.
const TREE = 'https://forum.example/r/x/comments/crash/thread-n1500';
const CHILD = ['--import', 'tsx', resolve(import.meta.dirname, 'fixtures/export-child.ts')];
/** Pages a walk has in flight at most (the stream's default page concurrency). */
const IN_FLIGHT = 16;
const SCENARIOS = ['ndjson', 'parquet', 'dataset', 'cap-file', 'cap-dataset', 'race-a', 'race-b', 'secret-file', 'secret-dataset'] as const;
const keyOf = (scenario: (typeof SCENARIOS)[number]) => `sk_live_crash_${scenario.replace('-', '_')}_0123456789`;

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);

let sandbox: Sandbox;
let client: Client;
/** The uninterrupted export, in-process. */
const reference = { ids: [] as string[], pages: 0, dataset: '' };

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    latencyMs: 30,
    accounts: [{ apiKey: 'sk_live_crash_reference', credits: 100_000 }, ...SCENARIOS.map((scenario) => ({ apiKey: keyOf(scenario), credits: 100_000 }))],
  });
  client = createClient({ apiKey: 'sk_live_crash_reference', baseUrl: sandbox.url });
  const out = fresh('reference.ndjson');
  const summary = await exportTo(client.forum.postComments({ url: TREE }), { out });
  expect(summary).toMatchObject({ complete: true, records: 1500 });
  reference.ids = readNdjson(out).map((comment) => String(comment.id));
  reference.pages = summary.pages;
  expect(sandbox.requests.charged['sk_live_crash_reference']).toBe(reference.pages);
  reference.dataset = fresh('reference-dataset');
  expect(await exportTo(client.forum.postComments({ url: TREE }), { dataset: reference.dataset })).toMatchObject({ complete: true });
});
afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

const charged = (key: string) => sandbox.requests.charged[key] ?? 0;

interface ChildRun {
  child: ChildProcess;
  done: Promise<CliResult>;
}

function startChild(key: string, options: ExportOptions): ChildRun {
  const env = { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: key, CHILD_TREE_URL: TREE };
  const child = spawn(process.execPath, [...CHILD, JSON.stringify(options)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, done: finished(child) };
}

/** What the child printed: its summary, or the code of the error it ended with. */
function outcomeOf(result: CliResult): ExportSummary & { error?: { code: string; message: string } } {
  expect(result.stdout, result.stderr).toMatch(/^\{.*\}\n$/);
  return JSON.parse(result.stdout) as ExportSummary & { error?: { code: string; message: string } };
}

/** Runs the child to its end (no kill) and returns what it printed. */
async function runChild(key: string, options: ExportOptions): Promise<ReturnType<typeof outcomeOf>> {
  return outcomeOf(await startChild(key, options).done);
}

/**
 * Starts the child and kills it with SIGKILL once `key` has been charged `credits` more: a moment
 * mid-walk, whatever the machine's speed. True when the kill landed (the child had not ended first).
 */
async function killAfter(key: string, credits: number, options: ExportOptions): Promise<boolean> {
  const { child, done } = startChild(key, options);
  const target = charged(key) + credits;
  let ended = false;
  void done.then(() => (ended = true));
  while (!ended && charged(key) < target) await new Promise((resolve) => setTimeout(resolve, 1));
  if (!ended) child.kill('SIGKILL');
  const result = await done;
  if (result.signal === 'SIGKILL') return true;
  expect(result.code, result.stderr).toBe(0);
  return false;
}

async function datasetIds(dir: string): Promise<string[]> {
  const rows = await query(`SELECT id FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true) ORDER BY id`);
  return rows.map((row) => String(row.id));
}

async function parquetIds(path: string): Promise<string[]> {
  return (await query(`SELECT id FROM read_parquet(${sqlPath(path)})`)).map((row) => String(row.id));
}

/** Every file under `dir`, at any depth. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

describe('kill -9 of a script mid-export, then resume', () => {
  const KILLS = 3;
  const destinations: [string, (typeof SCENARIOS)[number], () => ExportOptions][] = [
    ['an NDJSON file', 'ndjson', () => ({ out: fresh('killed.ndjson') })],
    ['a Parquet file', 'parquet', () => ({ out: fresh('killed.parquet') })],
    ['a dataset', 'dataset', () => ({ dataset: fresh('killed-dataset') })],
  ];
  for (const [what, scenario, destination] of destinations) {
    it(`into ${what} ends with exactly the uninterrupted output, paying at most the requests in flight at each kill`, async () => {
      const key = keyOf(scenario);
      const options = { ...destination(), resume: true };
      const perKill: number[] = [];
      let kills = 0;
      for (const delay of randomDelays(20260 + SCENARIOS.indexOf(scenario), KILLS, 90)) {
        const before = charged(key);
        if (await killAfter(key, 10 + delay, options)) kills++;
        perKill.push(charged(key) - before);
      }
      expect(kills).toBe(KILLS);
      const last = await runChild(key, options);
      expect(last).toMatchObject({ complete: true, resumed: true });
      perKill.push(last.credits);
      console.log(`${what}: charged ${charged(key)} for ${reference.pages} pages over ${kills} kills (per run: ${perKill.join(', ')})`);
      expect(charged(key)).toBeLessThanOrEqual(reference.pages + IN_FLIGHT * kills);

      if (options.out?.endsWith('.ndjson')) expect(readNdjson(options.out).map((comment) => comment.id)).toEqual(reference.ids);
      else if (options.out !== undefined) expect(await parquetIds(options.out)).toEqual(reference.ids);
      else expect(await datasetIds(options.dataset!)).toEqual(await datasetIds(reference.dataset));
    });
  }
});

describe('maxCredits across kills', () => {
  const CAP = 120;
  const destinations: [string, (typeof SCENARIOS)[number], () => ExportOptions][] = [
    ['a file', 'cap-file', () => ({ out: fresh('capped.ndjson') })],
    ['a dataset', 'cap-dataset', () => ({ dataset: fresh('capped-dataset') })],
  ];
  for (const [what, scenario, destination] of destinations) {
    it(`maxCredits ${CAP} into ${what} charges at most ${CAP} over 3 kills and the resume that ends the run`, async () => {
      const key = keyOf(scenario);
      const options = { ...destination(), resume: true, maxCredits: CAP };
      let kills = 0;
      for (const delay of randomDelays(20261 + SCENARIOS.indexOf(scenario), 3, 15)) {
        if (await killAfter(key, 10 + delay, options)) kills++;
        expect(charged(key)).toBeLessThanOrEqual(CAP);
      }
      expect(kills).toBe(3);
      const last = await runChild(key, options);
      expect(last).toMatchObject({ complete: false, stoppedBy: 'maxCredits', resumed: true });
      expect(charged(key)).toBeLessThanOrEqual(CAP);
      // A kill does not end a run: the resume's run is the one that was killed, with the same cap.
      expect(last.credits).toBeLessThanOrEqual(CAP);
      // What was kept is the start of the export, each record once.
      if (options.out !== undefined) {
        const ids = readNdjson(options.out).map((comment) => String(comment.id));
        expect(ids).toEqual(reference.ids.slice(0, ids.length));
      } else {
        const ids = await datasetIds(options.dataset!);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.every((id) => reference.ids.includes(id))).toBe(true);
      }
    });
  }
});

describe('two runs on one output at once', () => {
  const destinations: [string, () => ExportOptions][] = [
    ['file', () => ({ out: fresh('shared.ndjson') })],
    ['dataset', () => ({ dataset: fresh('shared-dataset') })],
  ];
  for (const [what, destination] of destinations) {
    it(`one run on a ${what} is refused LOCKED and spends nothing, the other completes`, async () => {
      const options = { ...destination(), resume: true };
      const keys = [keyOf('race-a'), keyOf('race-b')];
      const before = keys.map(charged);
      const results = await Promise.all(keys.map((key) => runChild(key, options)));
      const refused = results.findIndex((result) => result.error !== undefined);
      expect(refused).not.toBe(-1);
      expect(results[refused].error?.code).toBe('LOCKED');
      expect(charged(keys[refused])).toBe(before[refused]);
      expect(results[1 - refused]).toMatchObject({ complete: true, records: 1500 });
    });
  }
});

describe('the API key', () => {
  it('is in no file an export stages or publishes, killed mid-walk or complete', async () => {
    const keys = [keyOf('secret-file'), keyOf('secret-dataset')];
    const scrubs = keys.map(keyScrubber);
    const folder = fresh('secret');
    const destinations: ExportOptions[] = [{ out: join(folder, 'comments.ndjson') }, { dataset: join(folder, 'dataset') }];
    const unchanged = (path: string) => {
      for (const scrub of scrubs) expect(scrub(readFileSync(path, 'latin1')), path).toBe(readFileSync(path, 'latin1'));
    };
    const options = destinations.map((destination) => ({ ...destination, resume: true }));
    expect(await Promise.all(options.map((each, index) => killAfter(keys[index], 60, each)))).toEqual([true, true]);
    const staged = filesUnder(folder);
    // Both were killed mid-walk, their staging there (a kill may also leave a temporary of a journal being rewritten).
    expect(staged.filter((path) => path.endsWith('checkpoint.json')), staged.join(' ')).toHaveLength(2);
    for (const path of staged) unchanged(path);
    for (const result of await Promise.all(options.map((each, index) => runChild(keys[index], each)))) expect(result).toMatchObject({ complete: true });
    for (const path of filesUnder(folder)) unchanged(path);
  });
});

describe.skipIf(process.getuid?.() !== 0)('a dataset on a file system that refuses it', () => {
  // No latency: these runs are not killed, and their requests are counted on a sandbox of their own.
  let fast: Sandbox;
  let fastClient: Client;
  beforeAll(async () => {
    fast = await startSandbox({ port: 0 });
    fastClient = createClient({ apiKey: fast.apiKey, baseUrl: fast.url });
  });
  afterAll(async () => {
    await fastClient?.close();
    await fast?.close();
  });

  /** A tmpfs mounted at a fresh folder with `options`, unmounted after `use`. */
  async function onTmpfs(options: string, use: (mount: string) => Promise<void>): Promise<void> {
    const mount = fresh('tmpfs');
    mkdirSync(mount);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', mount]).status).toBe(0);
    try {
      await use(mount);
    } finally {
      spawnSync('umount', [mount]);
    }
  }

  it('refuses a read-only dataset folder with NOT_WRITABLE before any request', async () => {
    await onTmpfs('ro,size=1m', async (mount) => {
      const before = fast.requests.total;
      const refused = exportTo(fastClient.forum.postComments({ url: TREE }), { dataset: join(mount, 'dataset') });
      await expect(refused).rejects.toBeInstanceOf(NotWritableError);
      await expect(refused).rejects.toMatchObject({ code: 'NOT_WRITABLE' });
      expect(fast.requests.total).toBe(before);
    });
  });

  // 800 comments: some 500 kB of records, twice what the disk holds.
  const SMALL = 'https://forum.example/r/x/comments/crash/disk-n800';

  it('rejects with DISK_FULL when the disk fills up, and once there is room a resume completes with every record once', async () => {
    await onTmpfs('size=256k', async (mount) => {
      const dataset = join(mount, 'dataset');
      const full = exportTo(fastClient.forum.postComments({ url: SMALL }), { dataset });
      await expect(full).rejects.toMatchObject({ code: 'DISK_FULL' });
      expect(spawnSync('mount', ['-o', 'remount,size=16m', mount]).status).toBe(0);
      // A clean stop part way, so the resume after it reads what this resume staged.
      const stop = new AbortController();
      const stopped = await exportTo(fastClient.forum.postComments({ url: SMALL }), {
        dataset,
        resume: true,
        signal: stop.signal,
        progress: (progress) => progress.pages >= 20 && stop.abort(),
      });
      expect(stopped).toMatchObject({ complete: false, stoppedBy: 'signal' });
      // Nothing the full disk left behind holds it up (a plain export of this tree takes well under a second).
      expect(stopped.elapsedMs).toBeLessThan(5_000);
      const last = await exportTo(fastClient.forum.postComments({ url: SMALL }), { dataset, resume: true });
      expect(last).toMatchObject({ complete: true });
      const expected: string[] = [];
      for await (const comment of fastClient.forum.postComments({ url: SMALL })) expected.push(comment.id);
      expect(await datasetIds(dataset)).toEqual(expected.sort());
    });
  });
});
