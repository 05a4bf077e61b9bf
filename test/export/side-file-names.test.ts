/**
 * Output names whose side files (checkpoint, spool, temporary names) would pass the file system's
 * 255-byte limit on a name, and runs that cannot prove their output holds every record they staged.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { exportTo, HeldStateError, NotWritableError, StateDamagedError } from '../../src/export/index.ts';
import { loadState, writeState } from '../../src/export/journal.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let counter = 0;
const freshFolder = (): string => {
  const folder = join(root, `${++counter}`);
  mkdirSync(folder);
  return folder;
};

let sandbox: Sandbox;
let client: Client;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

beforeAll(async () => ({ sandbox, client } = await startSandboxClient()));
afterAll(() => closeSandboxClient({ sandbox, client }));

describe('an output name its side files cannot carry', () => {
  it('is refused before any request for every length from 225 to 232 bytes, leaving nothing behind', async () => {
    for (let bytes = 225; bytes <= 232; bytes++) {
      for (const extension of ['.ndjson', '.parquet']) {
        const folder = freshFolder();
        const out = join(folder, `${'é'.repeat(Math.floor((bytes - extension.length) / 2))}${'x'.repeat((bytes - extension.length) % 2)}${extension}`);
        expect(Buffer.byteLength(out.slice(folder.length + 1))).toBe(bytes);
        const before = charged();
        const error = await exportTo(client.forum.subforum({ subforum: `long-${bytes}-n300` }), { out }).catch((failure: unknown) => failure);
        expect(error).toBeInstanceOf(NotWritableError);
        expect((error as Error).message).toMatch(new RegExp(`is ${bytes} bytes long.*255 bytes`));
        expect(charged()).toBe(before);
        expect(readdirSync(folder)).toEqual([]);
      }
    }
  });

  it('is accepted up to the longest name whose side files fit, and exported whole', async () => {
    const folder = freshFolder();
    const out = join(folder, `${'p'.repeat(221 - 8)}.parquet`);
    const summary = await exportTo(client.forum.subforum({ subforum: 'long-fits-n300' }), { out });
    expect(summary).toMatchObject({ complete: true, records: 300 });
    expect(readdirSync(folder)).toEqual([out.slice(folder.length + 1)]);
  });
});

describe('a resume that cannot prove the output whole', () => {
  it('refuses an output left beside a spool but no checkpoint, naming the spool, instead of calling it complete', async () => {
    const folder = freshFolder();
    const out = join(folder, 'posts.ndjson');
    const walk = () => client.forum.subforum({ subforum: 'stray-n300' });
    // What a run that staged a page but could never write its checkpoint left (issue 29's long name).
    await exportTo(walk(), { out, limit: 100 });
    rmSync(`${out}.checkpoint.json`);
    const before = charged();
    const error = await exportTo(walk(), { out, resume: true }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(HeldStateError);
    expect((error as Error).message).toContain(`${out}.spool.ndjson`);
    expect((error as Error).message).toMatch(/restart/);
    expect(charged()).toBe(before);
    const restarted = await exportTo(walk(), { out, restart: true });
    expect(restarted).toMatchObject({ complete: true, records: 300 });
    expect(existsSync(`${out}.spool.ndjson`)).toBe(false);
  });
});

describe('a run that only has its publishing left', () => {
  it('refuses a spool cut short since its checkpoint said every page was staged, instead of publishing it as complete', async () => {
    const folder = freshFolder();
    const out = join(folder, 'posts.csv');
    const walk = () => client.forum.subforum({ subforum: 'finished-n300' });
    await exportTo(walk(), { out, maxPages: 2 });
    // What a kill right after the last page was staged leaves: a journal that says only publishing is left.
    const state = (await loadState(`${out}.checkpoint.json`))!;
    await writeState(`${out}.checkpoint.json`, { ...state, finished: true });
    const spool = `${out}.spool.ndjson`;
    const text = readFileSync(spool, 'utf8');
    writeFileSync(spool, text.slice(0, text.indexOf('\n') + 1));
    const error = await exportTo(walk(), { out, resume: true }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(StateDamagedError);
    expect((error as Error).message).toContain(spool);
    expect((error as Error).message).toMatch(/--restart/);
  });
});
