/**
 * A staging folder deleted while an export runs: the run notices before its next request, stops with
 * a typed error naming the folder, and offers a remedy that works. Purchases are counted on the
 * sandbox's side.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { exportTo, NotWritableError, type ExportOptions } from '../../src/export/index.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let counter = 0;

let sandbox: Sandbox;
let client: Client;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

beforeAll(async () => ({ sandbox, client } = await startSandboxClient()));
afterAll(() => closeSandboxClient({ sandbox, client }));

/**
 * Exports 50 pages into `target(folder)`, deleting `doomed(folder)` once 3 pages are staged, and
 * returns the failure, the folder deleted and the pages bought after the deletion.
 */
async function deletedMidRun(
  target: (folder: string) => Pick<ExportOptions, 'out' | 'dataset'>,
  doomed: (folder: string) => string,
): Promise<{ error: unknown; deleted: string; boughtAfter: number; options: ExportOptions; subforum: string }> {
  const folder = join(root, `${++counter}-run`);
  mkdirSync(folder);
  const subforum = `gone-${counter}-n1250`;
  let boughtAt: number | undefined;
  const options: ExportOptions = {
    ...target(folder),
    progress: (progress) => {
      if (progress.pages === 3 && boughtAt === undefined) {
        rmSync(doomed(folder), { recursive: true, force: true });
        boughtAt = charged();
      }
    },
  };
  const error = await exportTo(client.forum.subforum({ subforum }), options).catch((failure: unknown) => failure);
  expect(boughtAt).toBeDefined();
  return { error, deleted: doomed(folder), boughtAfter: charged() - boughtAt!, options, subforum };
}

function expectNoticed({ error, deleted, boughtAfter }: Awaited<ReturnType<typeof deletedMidRun>>): void {
  expect(error).toBeInstanceOf(NotWritableError);
  expect((error as NotWritableError).path).toBe(deleted);
  expect((error as Error).message).toContain(deleted);
  // The remedy offered exists: no checkpoint is left to resume or restart.
  expect((error as Error).message).not.toMatch(/--restart|--resume|checkpoint\.json/);
  expect((error as Error).message).toMatch(/run the export again/);
  expect(boughtAfter).toBeLessThanOrEqual(1);
  // Nothing was published into a folder made anew.
  expect(existsSync(deleted)).toBe(false);
}

describe('a staging folder deleted mid-run', () => {
  for (const format of ['ndjson', 'parquet'] as const) {
    it(`stops an export to ${format} before its next request, naming the folder, and a plain re-run completes it`, async () => {
      const outcome = await deletedMidRun((folder) => ({ out: join(folder, `posts.${format}`) }), (folder) => folder);
      expectNoticed(outcome);
      const again = await exportTo(client.forum.subforum({ subforum: outcome.subforum }), { ...outcome.options, progress: false });
      expect(again).toMatchObject({ complete: true, records: 1250 });
    });
  }

  it("stops a dataset export whose writer's staging folder went, naming that folder, and a plain re-run completes it", async () => {
    const staging = (folder: string) => join(folder, 'data', '_dataset', 'forum__subforum', 'staging-solo');
    const outcome = await deletedMidRun((folder) => ({ dataset: join(folder, 'data'), writer: 'solo' }), staging);
    expectNoticed(outcome);
    const again = await exportTo(client.forum.subforum({ subforum: outcome.subforum }), { ...outcome.options, progress: false });
    expect(again).toMatchObject({ complete: true });
  });

  it('stops a dataset export whose whole directory went, naming the directory', async () => {
    const outcome = await deletedMidRun((folder) => ({ dataset: join(folder, 'data') }), (folder) => join(folder, 'data'));
    expectNoticed(outcome);
  });
});
