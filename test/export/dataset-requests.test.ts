/**
 * The requests a dataset export makes of its store for its JSON objects (schema, walk state,
 * writer's state, commit, claim, journal, receipt…), counted by the store itself
 * (`Storage.requests`, the destination's `paths.storage`). Pages are staged in the writer's spool,
 * so these objects cost nothing a page: a run reads and writes them when it opens and when it
 * publishes. The figures are the budget; a change that adds requests must change them here.
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
import { closeSandboxClient, startSandboxClient, type SandboxClient } from './helpers/sandbox-client.ts';

let context: SandboxClient;
beforeAll(async () => {
  context = await startSandboxClient();
});
afterAll(async () => {
  await closeSandboxClient(context);
});

/** One walk of `subforum` (25 posts a page) exported into `dir`: its pages and its store's requests. */
async function exportCounted(dir: string, subforum: string): Promise<{ pages: number; requests: RequestCounts }> {
  const walks = walksOf(context.client.forum.subforum({ subforum, sort: 'new', trim: true }));
  const destination = new DatasetDestination(dir, walks.op, { walks: walks.params });
  const summary = await exportInto(walks, destination, checkOptions({ dataset: dir }));
  return { pages: summary.pages, requests: destination.paths.storage.requests };
}

const fresh = () => mkdtemp(join(tmpdir(), 'dataset-requests-'));

describe("a local dataset's JSON objects", () => {
  it('cost a one-walk, two-page export 23 GETs, 11 PUTs (one the create that binds the settings), 5 LISTs, 6 HEADs and 4 DELETEs, none of them a page', async () => {
    const two = await exportCounted(await fresh(), 'budget-n50');
    expect(two.pages).toBe(2);
    expect(two.requests).toEqual({ GET: 23, PUT: 11, LIST: 5, DELETE: 4, HEAD: 6, MULTIPART: 0 });
    // Twice the pages, the same requests: nothing of it is a page's.
    const four = await exportCounted(await fresh(), 'budget-n100');
    expect(four.pages).toBe(4);
    expect(four.requests).toEqual(two.requests);
  });
});
