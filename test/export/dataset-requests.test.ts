/**
 * The requests a dataset export makes of its store, counted by the store itself (`Storage.requests`,
 * the destination's `paths.storage`): for its JSON objects (schema, walk state, writer's state,
 * commit, claim, journal, receipt…) and its part files (listed, read back to merge, uploaded staged,
 * moved into place; docs/storage.md). Pages are staged in the writer's spool, so none of it is a
 * page's: a run reads and writes these when it opens and when it publishes, and a publish pays per
 * part it writes. The figures are the budget; a change that adds requests must change them here.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetDestination } from '../../src/dataset/destination.ts';
import { exportInto } from '../../src/export/engine.ts';
import { checkOptions } from '../../src/export/options.ts';
import { walksOf } from '../../src/export/sources.ts';
import type { RequestCounts } from '../../src/dataset/storage/types.ts';
import type { PartitionBy } from '../../src/dataset/store.ts';
import { closeSandboxClient, startSandboxClient, type SandboxClient } from './helpers/sandbox-client.ts';

let context: SandboxClient;
beforeAll(async () => {
  context = await startSandboxClient();
});
afterAll(async () => {
  await closeSandboxClient(context);
});

/** The walks of `subforums` (25 posts a page) exported into `dir`, partitioned `partition`: their pages, the part files the dataset then holds, and its store's requests. */
async function exportCounted(dir: string, subforums: string[], partition: PartitionBy = 'none'): Promise<{ pages: number; parts: number; requests: RequestCounts }> {
  const streams = subforums.map((subforum) => context.client.forum.subforum({ subforum, sort: 'new', trim: true }));
  const walks = walksOf(streams.length === 1 ? streams[0] : streams);
  const destination = new DatasetDestination(dir, walks.op, { walks: walks.params, partition });
  const summary = await exportInto(walks, destination, checkOptions({ dataset: dir }));
  let parts = 0;
  for await (const { name } of destination.paths.storage.list('forum/')) if (name.endsWith('.parquet')) parts++;
  return { pages: summary.pages, parts, requests: destination.paths.storage.requests };
}

const fresh = () => mkdtemp(join(tmpdir(), 'dataset-requests-'));

/**
 * A one-walk export into one partition: its JSON objects, its one part, and the schema as a Parquet
 * file (see the top of this file). Of its LISTs, 3 look at `publishing/` for passes at work: the
 * open's check, and once per pass formed (the second finds no commit left).
 */
const ONE_PART = { GET: 22, PUT: 17, LIST: 17, DELETE: 8, HEAD: 6, MULTIPART: 0 };

describe("a local dataset's store", () => {
  it('is asked 22 GETs, 17 PUTs (one the create that binds the settings), 17 LISTs, 6 HEADs and 8 DELETEs by a one-walk export into one partition, whatever its pages', async () => {
    const two = await exportCounted(await fresh(), ['budget-n50']);
    expect(two).toMatchObject({ pages: 2, parts: 1 });
    expect(two.requests).toEqual(ONE_PART);
    // Twice the pages, the same requests: nothing of it is a page's.
    const four = await exportCounted(await fresh(), ['budget-n100']);
    expect(four).toMatchObject({ pages: 4, parts: 1 });
    expect(four.requests).toEqual(ONE_PART);
  });

  it('is asked one LIST, five PUTs and three DELETEs more for each partition a pass writes a new part in', async () => {
    // By month, the same two pages fall in dozens of partitions.
    const { parts, requests } = await exportCounted(await fresh(), ['budget-n50'], 'month');
    expect(parts).toBe(45);
    // Per part: its partition listed; the part, its key index and where the pass places its keys
    // uploaded (3 PUTs); the part and its index moved into place (a PUT and a DELETE each); the pass's
    // key index removed with its folder.
    const more = parts - 1;
    expect(requests).toEqual({ ...ONE_PART, LIST: ONE_PART.LIST + more, PUT: ONE_PART.PUT + 5 * more, DELETE: ONE_PART.DELETE + 3 * more });
  });

  it('reads a part and its key index back once each when a later export merges into it, though the pass looks at the indexes twice', async () => {
    const dir = await fresh();
    await exportCounted(dir, ['budget-n50']);
    const later = await exportCounted(dir, ['budget-n100']);
    expect(later.parts).toBe(1);
    // Against a new dataset: the part and its index read (2 GETs; the index is not read again when
    // the pass looks a second time, holding its locks, and finds it unchanged), the part's end read
    // once on open to check it (a GET), the schema read once less (a GET); the schema neither bound
    // by a create nor written again, nor its Parquet file (3 PUTs), which is looked for (a HEAD); and
    // two LISTs less: the operation is not listed for a part while its schema is missing (2), nor the
    // dataset for another operation's partition column (1), and the partition of undated records of
    // an older layout is looked for on open (1).
    expect(later.requests).toEqual({ ...ONE_PART, GET: ONE_PART.GET + 2, PUT: ONE_PART.PUT - 3, LIST: ONE_PART.LIST - 2, HEAD: ONE_PART.HEAD + 1 });
  });

  it('is asked for a two-walk export into one partition only the second walk\'s state more: 3 GETs and a PUT', async () => {
    const both = await exportCounted(await fresh(), ['budget-n50', 'budget-n100']);
    expect(both).toMatchObject({ pages: 6, parts: 1 });
    expect(both.requests).toEqual({ ...ONE_PART, GET: ONE_PART.GET + 3, PUT: ONE_PART.PUT + 1 });
  });
});
