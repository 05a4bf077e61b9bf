/**
 * A writer's staging log on s3rver (src/dataset/staging-log.ts): local append-mostly files mirrored
 * as ordered delta objects, one PUT a sync and no GET, and rebuilt from them in a working folder
 * that lacks them or holds more than the store vouched for.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COMPACT_AFTER, replaceStaging, StagingLog } from '../../src/dataset/staging-log.ts';
import { openStorage } from '../../src/dataset/storage/open.ts';
import type { Storage } from '../../src/dataset/storage/types.ts';
import { BUCKET, startS3, type S3Harness } from '../helpers/s3.ts';
import { bytes, names } from '../helpers/storage.ts';

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

const opened: Storage[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((storage) => storage.close()));
});

const PREFIX = '_dataset/op/staging-all/log/';
const FILES = ['checkpoint.json', 'spool.ndjson'];

async function store(): Promise<Storage> {
  const storage = await openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct });
  opened.push(storage);
  return storage;
}

const folder = async () => join(await mkdtemp(join(tmpdir(), 'staging-log-')), 'staging-all');
const read = (dir: string, file: string) => readFile(join(dir, file), 'utf8');

describe("a writer's staging log on a store", () => {
  it('stores what the files gained in one PUT a sync, reading nothing, and nothing when they did not change', async () => {
    const storage = await store();
    const dir = await folder();
    const log = await StagingLog.open(storage, PREFIX, dir, FILES);
    await writeFile(join(dir, 'spool.ndjson'), '{"a":1}\n');
    await writeFile(join(dir, 'checkpoint.json'), 'line 1\n');
    const before = { ...storage.requests };
    await log.sync();
    await appendFile(join(dir, 'spool.ndjson'), '{"a":2}\n');
    await log.sync();
    await log.sync();
    expect(storage.requests.PUT - before.PUT).toBe(2);
    expect(storage.requests.GET - before.GET).toBe(0);
    expect(await names(storage, PREFIX)).toHaveLength(2);
  });

  it('rebuilds the files in a working folder that lacks them, a rewritten file whole and an appended one from its deltas', async () => {
    const storage = await store();
    const dir = await folder();
    const log = await StagingLog.open(storage, PREFIX, dir, FILES);
    await writeFile(join(dir, 'spool.ndjson'), '{"a":1}\n');
    await writeFile(join(dir, 'checkpoint.json'), 'old journal\n');
    await log.sync();
    await appendFile(join(dir, 'spool.ndjson'), '{"a":2}\n');
    // A journal compacted: a new file renamed over the old one.
    await writeFile(join(dir, 'new'), 'compacted\n');
    await rename(join(dir, 'new'), join(dir, 'checkpoint.json'));
    await log.sync();
    const elsewhere = await folder();
    await StagingLog.open(storage, PREFIX, elsewhere, FILES);
    expect(await read(elsewhere, 'spool.ndjson')).toBe('{"a":1}\n{"a":2}\n');
    expect(await read(elsewhere, 'checkpoint.json')).toBe('compacted\n');
  });

  it('drops the bytes a working folder holds past what the store holds, with one LIST and no GET', async () => {
    const storage = await store();
    const dir = await folder();
    const log = await StagingLog.open(storage, PREFIX, dir, FILES);
    await writeFile(join(dir, 'spool.ndjson'), '{"a":1}\n');
    await log.sync();
    // Staged, never stored: a page in flight when the writer was killed.
    await appendFile(join(dir, 'spool.ndjson'), '{"a":2}\n');
    const before = { ...storage.requests };
    await StagingLog.open(storage, PREFIX, dir, FILES);
    expect(await read(dir, 'spool.ndjson')).toBe('{"a":1}\n');
    expect({ LIST: storage.requests.LIST - before.LIST, GET: storage.requests.GET - before.GET }).toEqual({ LIST: 1, GET: 0 });
  });

  it(`replaces itself by one object of whole files past ${COMPACT_AFTER} objects, which a rebuild reads alone`, async () => {
    const storage = await store();
    const dir = await folder();
    const log = await StagingLog.open(storage, PREFIX, dir, FILES);
    await mkdir(dir, { recursive: true });
    for (let page = 0; page <= COMPACT_AFTER; page++) {
      await appendFile(join(dir, 'spool.ndjson'), `{"page":${page}}\n`);
      await log.sync();
    }
    expect(await names(storage, PREFIX)).toHaveLength(1);
    const before = { ...storage.requests };
    const elsewhere = await folder();
    await StagingLog.open(storage, PREFIX, elsewhere, FILES);
    expect(storage.requests.GET - before.GET).toBe(1);
    expect((await read(elsewhere, 'spool.ndjson')).split('\n')).toHaveLength(COMPACT_AFTER + 2);
  });

  it('stores the files whole again only once the objects after the last whole one weigh as much as it', async () => {
    const storage = await store();
    const dir = await folder();
    const log = await StagingLog.open(storage, PREFIX, dir, FILES);
    const page = async (text: string) => {
      await appendFile(join(dir, 'spool.ndjson'), text);
      await log.sync();
    };
    // A large spool, then small pages until the first whole object replaces the log.
    await mkdir(dir, { recursive: true });
    await page(`${JSON.stringify({ big: 'x'.repeat(100_000) })}\n`);
    for (let each = 0; each < COMPACT_AFTER; each++) await page(`{"page":${each}}\n`);
    expect(await names(storage, PREFIX)).toHaveLength(1);
    // As many small pages again: their objects weigh far less than the whole one, which stays.
    for (let each = 0; each < COMPACT_AFTER + 5; each++) await page(`{"again":${each}}\n`);
    expect(await names(storage, PREFIX)).toHaveLength(COMPACT_AFTER + 6);
    const elsewhere = await folder();
    await StagingLog.open(storage, PREFIX, elsewhere, FILES);
    expect(await read(elsewhere, 'spool.ndjson')).toBe(await read(dir, 'spool.ndjson'));
  });

  it("takes the staging a publish pass replaced through the log when its writer catches up, and removes files the pass said went", async () => {
    const storage = await store();
    const dir = await folder();
    const log = await StagingLog.open(storage, PREFIX, dir, FILES);
    await writeFile(join(dir, 'spool.ndjson'), '{"a":1}\n');
    await writeFile(join(dir, 'checkpoint.json'), 'before the publish\n');
    await log.sync();
    await replaceStaging(storage, PREFIX, { 'checkpoint.json': bytes('after the publish\n'), 'spool.ndjson': null });
    await log.catchUp();
    expect(await read(dir, 'checkpoint.json')).toBe('after the publish\n');
    expect(existsSync(join(dir, 'spool.ndjson'))).toBe(false);
    // What it stores next follows the pass's object.
    await writeFile(join(dir, 'spool.ndjson'), '{"b":1}\n');
    await log.sync();
    const elsewhere = await folder();
    await StagingLog.open(storage, PREFIX, elsewhere, FILES);
    expect(await read(elsewhere, 'spool.ndjson')).toBe('{"b":1}\n');
    expect(await read(elsewhere, 'checkpoint.json')).toBe('after the publish\n');
  });
});
