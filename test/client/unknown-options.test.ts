/**
 * Every public options object refuses a name it does not know with an `OptionError` naming it, before
 * anything is opened, written or asked of a server: a misspelt option is never ignored in silence.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { of } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, creditCap, dedupe, fromObservable, mergeMap, OptionError, throttle, type Client } from '../../src/index.ts';
import { compactDataset, exportTo, toDataset } from '../../src/export/index.ts';
import { enqueueExport, queueStatus, runWorker } from '../../src/queue/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { toCsv, toParquet, writeRecords } from '../../sinks/index.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

// Nothing listens here: a call that got past its options would fail otherwise, never with an OptionError.
const NO_SERVER = 'http://127.0.0.1:9';
const NO_REDIS = 'redis://127.0.0.1:9/0';

let sandbox: Sandbox;
let client: Client;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createClient({ apiKey: sandbox.apiKey, baseUrl: NO_SERVER });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

const dir = scratchDir();

/** What `call` threw or rejected with; undefined if it did neither. */
async function failureOf(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  return undefined;
}

// [where, the call with one unknown option, the option, what the message suggests]
const CASES: [string, () => unknown, string, string][] = [
  ['createClient', () => createClient({ apiKey: 'sk_live_x', baseUrl: NO_SERVER, timeout: 5 } as never), 'timeout', 'did you mean timeoutMs?'],
  ['a walk', () => client.forum.subforum({ subforum: 'a' }, { limt: 5 } as never), 'limt', 'did you mean limit?'],
  ['dedupe', () => dedupe('id', { maxKey: 3 } as never), 'maxKey', 'did you mean maxKeys?'],
  ['throttle', () => throttle({ requestsPerSecond: 1, sigal: undefined } as never), 'sigal', 'did you mean signal?'],
  ['creditCap', () => creditCap(10, { oncap: 'throw' } as never), 'oncap', 'did you mean onCap?'],
  ['mergeMap', () => mergeMap(() => [], { concurency: 2 } as never), 'concurency', 'did you mean concurrency?'],
  ['fromObservable', () => fromObservable(of(1), { buffersize: 3 } as never), 'buffersize', 'did you mean bufferSize?'],
  ['toCsv', () => toCsv([], join(dir, 'a.csv'), { escapeFormula: true } as never), 'escapeFormula', 'did you mean escapeFormulae?'],
  ['toParquet', () => toParquet([], join(dir, 'a.parquet'), { pageSize: 5 } as never), 'pageSize', 'known: columns, sampleSize, maxDepth, kinds, layout, rowGroupSize'],
  ['writeRecords', () => writeRecords([], join(dir, 'b.csv'), { compresion: 'gzip' } as never), 'compresion', 'did you mean compression?'],
  ['exportTo', () => exportTo(client.forum.subforum({ subforum: 'a' }), { out: join(dir, 'c.ndjson'), maxCredit: 3 } as never), 'maxCredit', 'did you mean maxCredits?'],
  ['toDataset', () => toDataset(client.forum.subforum({ subforum: 'a' }), join(dir, 'set'), { partitions: 'day' } as never), 'partitions', 'did you mean partition?'],
  ['compactDataset', () => compactDataset(join(dir, 'set'), { layot: 'flat' } as never), 'layot', 'did you mean layout?'],
  [
    'enqueueExport',
    () => enqueueExport({ queue: NO_REDIS, op: 'forum/subforum', inputs: [{ subforum: 'a' }], dataset: join(dir, 'queued'), maxCredit: 3 } as never),
    'maxCredit',
    'did you mean maxCredits?',
  ],
  ['runWorker', () => runWorker({ queue: NO_REDIS, apiKey: 'sk_live_x', baseUrl: NO_SERVER, leases: 5 } as never), 'leases', 'did you mean leaseMs?'],
  ['queueStatus', () => queueStatus(NO_REDIS, { sinal: undefined } as never), 'sinal', 'did you mean signal?'],
  ['startSandbox', () => startSandbox({ credits: 3 } as never), 'credits', 'accounts: [{ apiKey, credits }]'],
  ['sandbox.advance', () => sandbox.advance({ records: 1, second: 5 } as never), 'second', 'did you mean seconds?'],
];

describe('an options object with a name its function does not know', () => {
  it.each(CASES)('%s refuses it with an OptionError naming it and the near name', async (where, call, name, suggestion) => {
    const error = await failureOf(call);
    expect(error).toBeInstanceOf(OptionError);
    expect((error as OptionError).options).toEqual([name]);
    const { message } = error as OptionError;
    expect(message.startsWith(where)).toBe(true);
    expect(message).toContain(`unknown option ${name} (`);
    expect(message).toContain(suggestion);
  });

  it('leaves no file or dataset behind when refused', () => {
    expect(readdirSync(dir)).toEqual([]);
  });
});
