/**
 * A dataset's JSON objects through its `Storage` (src/dataset/objects.ts and the readers of
 * src/dataset/state.ts), against a local folder and s3rver: written whole, read back checked,
 * damage named by the location and the object's name, a missing object undefined.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateDamagedError } from '../../src/errors.ts';
import { walkName } from '../../src/operations/walk-name.ts';
import { commitsWaiting } from '../../src/dataset/commit.ts';
import { writeObject } from '../../src/dataset/objects.ts';
import { readWalkMarkFile } from '../../src/dataset/state.ts';
import { DatasetPaths } from '../../src/dataset/store.ts';
import { openStorage } from '../../src/dataset/storage/open.ts';
import type { Storage } from '../../src/dataset/storage/types.ts';
import { BUCKET, startS3, type S3Harness } from '../helpers/s3.ts';
import { bytes } from '../helpers/storage.ts';

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

const local = async () => openStorage(await mkdtemp(join(tmpdir(), 'objects-')));
const STORES: [string, () => Promise<Storage>][] = [
  ['a local folder', local],
  ['s3rver', () => openStorage(`s3://${BUCKET}/${randomUUID()}`, { env: s3.direct })],
];

const params = { subforum: 'rust', sort: 'new' };
const walk = walkName(params);
const mark = { version: 1, params, mark: 1_700_000_000_000, markTime: new Date(1_700_000_000_000).toISOString(), near: [['t3_a', null]] };

/** The paths of writer `all` of forum/subforum in `storage` (its folder, unused by these reads, is the location). */
const pathsIn = (storage: Storage) => new DatasetPaths(storage.location, 'forum/subforum', 'all', storage);

/** Where a user finds the walk's object: its file, or its S3 URL. */
function placeOf(storage: Storage): string {
  const name = `_dataset/forum__subforum/walks/${walk}.json`;
  return storage.location.startsWith('s3://') ? `${storage.location}/${name}` : join(storage.location, ...name.split('/'));
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(StateDamagedError);
  return error as Error;
}

describe.each(STORES)('a dataset object in %s', (_store, open) => {
  it('reads back checked as it was written', async () => {
    const paths = pathsIn(await open());
    await writeObject(paths.storage, paths.names.walkMark(walk), mark);
    expect(await readWalkMarkFile(paths, walk)).toEqual(mark);
  });

  it('is undefined when missing', async () => {
    expect(await readWalkMarkFile(pathsIn(await open()), walk)).toBeUndefined();
  });

  it('that is not JSON is STATE_DAMAGED, naming the location and the name', async () => {
    const paths = pathsIn(await open());
    await paths.storage.write(paths.names.walkMark(walk), bytes('{"version": 1, "par'));
    expect((await failure(readWalkMarkFile(paths, walk))).message).toBe(`${placeOf(paths.storage)} is not valid JSON (cut short or edited); delete it to walk this parameter set in full again`);
  });

  it('of the wrong shape is STATE_DAMAGED, naming the location, the name and the field', async () => {
    const paths = pathsIn(await open());
    await writeObject(paths.storage, paths.names.walkMark(walk), { ...mark, near: null });
    expect((await failure(readWalkMarkFile(paths, walk))).message).toBe(`${placeOf(paths.storage)} is damaged: near is null, not a list; delete it to walk this parameter set in full again`);
  });

  it('lists the commits waiting by writer, not the receipts, nor those an older version left beside them', async () => {
    const paths = pathsIn(await open());
    for (const name of [paths.names.commit('walk-b'), paths.names.commit('all'), paths.names.receipt('walk-c'), paths.names.legacyReceipt('walk-d')]) await writeObject(paths.storage, name, {});
    expect(await commitsWaiting(paths)).toEqual(['all', 'walk-b']);
  });
});

describe('a dataset object in a local folder', () => {
  it('is the file an older version wrote, at the same path and in the same JSON', async () => {
    const paths = pathsIn(await local());
    await writeObject(paths.storage, paths.names.walkMark(walk), mark);
    expect(await readFile(placeOf(paths.storage), 'utf8')).toBe(JSON.stringify(mark, null, 1));
  });
});
