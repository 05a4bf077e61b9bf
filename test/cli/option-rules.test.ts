/**
 * One set of option rules: every contradiction and bad value `socialstream export` refuses is refused
 * by `exportTo` too, from the same rule, before any request. The CLI (a subprocess) exits 2 with the
 * library's message, each option spelled as its flag; `exportTo` rejects with an `OptionError` naming
 * the options. Neither touches the output or sends the sandbox a single request.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetLayoutError, OptionError } from '../../src/errors.ts';
import { compactDataset } from '../../src/dataset/compact.ts';
import { exportTo } from '../../src/export/index.ts';
import type { ExportOptions } from '../../src/export/types.ts';
import { createClient, type Client } from '../../src/index.ts';
import { enqueueExport } from '../../src/queue/enqueue.ts';
import { runWorker } from '../../src/queue/worker.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { runCli, sandboxEnv, tempDir } from './helpers.ts';

let sandbox: Sandbox;
let client: Client;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

/** Each option of these rules and its flag, written out here rather than read from the CLI's table. */
const FLAG_OF: Record<string, string> = {
  out: '--out',
  dataset: '--dataset',
  schema: '--schema',
  shard: '--shard',
  partition: '--partition',
  since: '--since',
  until: '--until',
  escapeFormulae: '--csv-escape-formulae',
  layout: '--layout',
  concurrency: '--concurrency',
  pageConcurrency: '--page-concurrency',
  limit: '--limit',
  maxPages: '--max-pages',
  maxCredits: '--max-credits',
  resume: '--resume',
  restart: '--restart',
  dedupe: '--dedupe',
  keepDuplicates: '--keep-duplicates',
};

interface Row {
  /** What is wrong, as the test's name says it. */
  what: string;
  /** The flags, `OUT` and `DIR` standing for paths in a fresh folder. */
  flags: string[];
  /** The same as `exportTo`'s options, the same stand-ins in `out` and `dataset`. */
  options: ExportOptions;
  /** The options the error names. */
  names: string[];
  /** An operation whose records carry no time, instead of forum/subforum. */
  timeless?: boolean;
}

const ROWS: Row[] = [
  { what: 'a file and a dataset at once', flags: ['--out', 'OUT.ndjson', '--dataset', 'DIR'], options: { out: 'OUT.ndjson', dataset: 'DIR' }, names: ['out', 'dataset'] },
  { what: 'neither a file nor a dataset', flags: [], options: {}, names: ['out', 'dataset'] },
  { what: 'a file name no format is known by', flags: ['--out', 'OUT.xlsx'], options: { out: 'OUT.xlsx' }, names: ['out'] },
  { what: 'an empty dedupe field', flags: ['--out', 'OUT.ndjson', '--dedupe', ''], options: { out: 'OUT.ndjson', dedupe: '' }, names: ['dedupe'] },
  { what: 'a dedupe field that is no dotted path', flags: ['--out', 'OUT.ndjson', '--dedupe', 'author..id'], options: { out: 'OUT.ndjson', dedupe: 'author..id' }, names: ['dedupe'] },
  { what: 'dedupe with keepDuplicates', flags: ['--out', 'OUT.ndjson', '--dedupe', 'id', '--keep-duplicates'], options: { out: 'OUT.ndjson', dedupe: 'id', keepDuplicates: true }, names: ['dedupe', 'keepDuplicates'] },
  { what: 'dedupe into a dataset', flags: ['--dataset', 'DIR', '--dedupe', 'id'], options: { dataset: 'DIR', dedupe: 'id' }, names: ['dedupe', 'dataset'] },
  { what: 'resume with restart', flags: ['--out', 'OUT.ndjson', '--resume', '--restart'], options: { out: 'OUT.ndjson', resume: true, restart: true }, names: ['resume', 'restart'] },
  { what: 'schema for a file', flags: ['--out', 'OUT.ndjson', '--schema', 'freeze'], options: { out: 'OUT.ndjson', schema: 'freeze' }, names: ['schema', 'dataset'] },
  { what: 'shard for a file', flags: ['--out', 'OUT.ndjson', '--shard', '1/2'], options: { out: 'OUT.ndjson', shard: { index: 1, count: 2 } }, names: ['shard', 'dataset'] },
  { what: 'partition for a file', flags: ['--out', 'OUT.ndjson', '--partition', 'day'], options: { out: 'OUT.ndjson', partition: 'day' }, names: ['partition', 'dataset'] },
  { what: 'since for a file', flags: ['--out', 'OUT.ndjson', '--since', '2025-10-01'], options: { out: 'OUT.ndjson', since: '2025-10-01' }, names: ['since', 'dataset'] },
  { what: 'until for a file', flags: ['--out', 'OUT.ndjson', '--until', '2025-10-01'], options: { out: 'OUT.ndjson', until: '2025-10-01' }, names: ['until', 'dataset'] },
  { what: 'an unknown schema policy', flags: ['--dataset', 'DIR', '--schema', 'thaw'], options: { dataset: 'DIR', schema: 'thaw' as 'freeze' }, names: ['schema'] },
  { what: 'an unknown partitioning', flags: ['--dataset', 'DIR', '--partition', 'week'], options: { dataset: 'DIR', partition: 'week' as 'day' }, names: ['partition'] },
  { what: 'a shard past the share count', flags: ['--dataset', 'DIR', '--shard', '3/2'], options: { dataset: 'DIR', shard: { index: 3, count: 2 } }, names: ['shard'] },
  { what: 'a since that is no date', flags: ['--dataset', 'DIR', '--since', 'last-month'], options: { dataset: 'DIR', since: 'last-month' }, names: ['since'] },
  { what: 'an until on a day no calendar has', flags: ['--dataset', 'DIR', '--until', '2025-02-30'], options: { dataset: 'DIR', until: '2025-02-30' }, names: ['until'] },
  {
    what: 'a since after its until',
    flags: ['--dataset', 'DIR', '--since', '2025-10-01', '--until', '2025-09-01T12:00Z'],
    options: { dataset: 'DIR', since: '2025-10-01', until: '2025-09-01T12:00Z' },
    names: ['since', 'until'],
  },
  { what: 'since for records that carry no time', flags: ['--dataset', 'DIR', '--since', '2025-10-01'], options: { dataset: 'DIR', since: '2025-10-01' }, names: ['since'], timeless: true },
  { what: 'escaping formulae in a dataset', flags: ['--dataset', 'DIR', '--csv-escape-formulae'], options: { dataset: 'DIR', escapeFormulae: true }, names: ['escapeFormulae', 'dataset'] },
  { what: 'escaping formulae in NDJSON', flags: ['--out', 'OUT.ndjson', '--csv-escape-formulae'], options: { out: 'OUT.ndjson', escapeFormulae: true }, names: ['escapeFormulae'] },
  { what: 'an unknown Parquet layout', flags: ['--out', 'OUT.parquet', '--layout', 'wide'], options: { out: 'OUT.parquet', layout: 'wide' as 'flat' }, names: ['layout'] },
  { what: 'a layout for a CSV file', flags: ['--out', 'OUT.csv', '--layout', 'flat'], options: { out: 'OUT.csv', layout: 'flat' }, names: ['layout'] },
  { what: 'an unknown layout for a dataset', flags: ['--dataset', 'DIR', '--layout', 'deep'], options: { dataset: 'DIR', layout: 'deep' as 'flat' }, names: ['layout'] },
  { what: 'no walk at a time', flags: ['--out', 'OUT.ndjson', '--concurrency', '0'], options: { out: 'OUT.ndjson', concurrency: 0 }, names: ['concurrency'] },
  { what: 'no page at a time', flags: ['--out', 'OUT.ndjson', '--page-concurrency', '0'], options: { out: 'OUT.ndjson', pageConcurrency: 0 }, names: ['pageConcurrency'] },
  { what: 'a negative limit', flags: ['--out', 'OUT.ndjson', '--limit', '-1'], options: { out: 'OUT.ndjson', limit: -1 }, names: ['limit'] },
  { what: 'a negative page cap', flags: ['--out', 'OUT.ndjson', '--max-pages', '-1'], options: { out: 'OUT.ndjson', maxPages: -1 }, names: ['maxPages'] },
  { what: 'a negative credit cap', flags: ['--out', 'OUT.ndjson', '--max-credits', '-5'], options: { out: 'OUT.ndjson', maxCredits: -5 }, names: ['maxCredits'] },
];

/** `options` with its stand-ins made paths in `dir`. */
function inside(dir: string, options: ExportOptions): ExportOptions {
  const path = (value: string | undefined) => (value === undefined ? {} : { [value.startsWith('DIR') ? 'dataset' : 'out']: join(dir, value) });
  return { ...options, ...path(options.out), ...path(options.dataset) };
}

/** What `exportTo` rejected with (or undefined when it did not). */
async function refusal(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the CLI and exportTo refuse the same options', () => {
  it.each(ROWS)('refuses $what, both of them before any request, naming the options and the flags', async ({ flags, options, names, timeless }) => {
    const dir = tempDir();
    const walk = () => (timeless === true ? client.shortvideo.popularVideos({}) : client.forum.subforum({ subforum: 'rules-n20' }));
    const op = timeless === true ? ['shortvideo/videos/popular'] : ['forum/subforum', 'subforum=rules-n20'];

    const error = await refusal(() => exportTo(walk(), inside(dir, options)));
    expect(error).toBeInstanceOf(OptionError);
    const refused = error as OptionError;
    expect(refused.code).toBe('OPTION');
    expect([...refused.options].sort()).toEqual([...names].sort());
    for (const name of names) expect(refused.message).toContain(name);

    const args = flags.map((flag) => (flag.startsWith('OUT') || flag.startsWith('DIR') ? join(dir, flag) : flag));
    const result = await runCli(['export', ...op, ...args], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(2);
    // The same rule's message, each option spelled as its flag.
    const inDir = (text: string) => text.replaceAll(dir, '<dir>');
    expect(inDir(result.stderr)).toContain(`socialstream: ${inDir(refused.describe((name) => FLAG_OF[name] ?? name))}`);
    expect(result.stdout).toBe('');

    expect(existsSync(join(dir, 'DIR')) || existsSync(join(dir, 'OUT.ndjson'))).toBe(false);
    expect(sandbox.requests).toEqual({ total: 0, charged: {} });
  });

  it('refuses an unknown partitioning for dataset compact as compactDataset does, naming --partition', async () => {
    const dir = tempDir();
    const error = await refusal(() => compactDataset(dir, { partition: 'week' as 'day' }));
    expect(error).toBeInstanceOf(OptionError);
    expect((error as OptionError).options).toEqual(['partition']);
    const result = await runCli(['dataset', 'compact', dir, '--partition', 'week'], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`socialstream: ${(error as OptionError).describe(() => '--partition')}`);
  });

  // A closed port: a rule that let a bad value through would show as a connection failure instead.
  const nowhere = 'redis://127.0.0.1:1/0';

  it.each([
    ['concurrency', '--concurrency'],
    ['leaseMs', '--lease'],
    ['parkMs', '--park'],
  ] as const)('refuses a worker %s of 0 as runWorker does, naming %s, before Redis is asked', async (name, flag) => {
    const error = await refusal(() => runWorker({ queue: nowhere, [name]: 0 }));
    expect(error).toBeInstanceOf(OptionError);
    expect((error as OptionError).options).toEqual([name]);
    const result = await runCli(['worker', '--queue', nowhere, flag, '0'], { SOCIALSTREAM_API_KEY: 'sk_test_0123456789' });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`socialstream: ${(error as OptionError).describe(() => flag)}`);
  });

  it('refuses a queued rate of 0 as enqueueExport does, naming --rate, before Redis is asked', async () => {
    const dir = tempDir();
    const options = { queue: nowhere, op: 'forum/subforum', inputs: [{ subforum: 'rules-n20' }], dataset: join(dir, 'DIR') };
    const error = await refusal(() => enqueueExport({ ...options, rate: 0 }));
    expect(error).toBeInstanceOf(OptionError);
    expect((error as OptionError).options).toEqual(['rate']);
    const result = await runCli(['export', 'forum/subforum', 'subforum=rules-n20', '--dataset', join(dir, 'DIR'), '--queue', nowhere, '--rate', '0'], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`socialstream: ${(error as OptionError).describe(() => '--rate')}`);
  });

  it("holds a queued export to the export's own rules: a since after its until is refused as exportTo refuses it", async () => {
    const dir = tempDir();
    const bounds = { since: '2025-10-01', until: '2025-09-01' };
    const error = await refusal(() => enqueueExport({ queue: nowhere, op: 'forum/subforum', inputs: [{ subforum: 'rules-n20' }], dataset: join(dir, 'DIR'), ...bounds }));
    expect(error).toBeInstanceOf(OptionError);
    expect([...(error as OptionError).options].sort()).toEqual(['since', 'until']);
    const flags = ['--since', bounds.since, '--until', bounds.until];
    const result = await runCli(['export', 'forum/subforum', 'subforum=rules-n20', '--dataset', join(dir, 'DIR'), '--queue', nowhere, ...flags], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('--since must be before --until');
  });

  it('refuses a queued layout for a dataset of NDJSON parts with the message exportTo gives, before Redis is asked', async () => {
    const dataset = join(tempDir(), 'DIR');
    const walk = () => client.forum.subforum({ subforum: 'rules-n20' });
    await exportTo(walk(), { dataset, format: 'ndjson' });
    const exported = await refusal(() => exportTo(walk(), { dataset, layout: 'nested' }));
    expect(exported).toBeInstanceOf(DatasetLayoutError);
    const queued = await refusal(() => enqueueExport({ queue: nowhere, op: 'forum/subforum', inputs: [{ subforum: 'rules-n20' }], dataset, layout: 'nested' }));
    expect(queued).toBeInstanceOf(DatasetLayoutError);
    expect((queued as Error).message).toBe((exported as Error).message);
    expect((queued as Error).message).toMatch(/ndjson part files/);
  });
});

