/**
 * State an earlier version left: socialstream 0.1.0's checkpoint (format 2) is read and continued;
 * its dataset staging, which this version does not read, is refused in one line saying what to do.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { exportTo, HeldStateError } from '../../src/export/index.ts';
import { loadState, writeState } from '../../src/export/journal.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let sandbox: Sandbox;
let client: Client;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;

beforeAll(async () => ({ sandbox, client } = await startSandboxClient()));
afterAll(() => closeSandboxClient({ sandbox, client }));

describe('state written by socialstream 0.1.0', () => {
  it('continues a file export from a format 2 checkpoint without buying its pages again', async () => {
    const out = join(root, 'old.ndjson');
    const walk = () => client.forum.subforum({ subforum: 'old-n400', trim: true });
    const before = charged();
    const first = await exportTo(walk(), { out, maxCredits: 3 });
    expect(first.stoppedBy).toBe('maxCredits');
    // As 0.1.0 wrote it: format 2, totals over every run, no run of its own.
    const current = (await loadState(`${out}.checkpoint.json`))!;
    const { run: _run, ...rest } = current;
    await writeState(`${out}.checkpoint.json`, { ...rest, version: 2 } as unknown as typeof current);
    const resumed = await exportTo(walk(), { out, resume: true });
    expect(resumed).toMatchObject({ complete: true, resumed: true });
    const ids = readFileSync(out, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id);
    expect(new Set(ids).size).toBe(400);
    expect(ids).toHaveLength(400);
    expect(charged() - before).toBe(16);
  });

  it("refuses a dataset staging of 0.1.0 in one line saying what to do, and restart drops it", async () => {
    const dir = join(root, 'old-dataset');
    const staging = join(dir, '_dataset', 'forum__subforum', 'staging-all');
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, 'run.json'), JSON.stringify({ version: 1, operation: 'forum/subforum', format: 'parquet', mode: 'merge' }));
    const before = charged();
    const refused = exportTo(client.forum.subforum({ subforum: 'old-ds-n30' }), { dataset: dir, resume: true });
    await expect(refused).rejects.toBeInstanceOf(HeldStateError);
    await expect(refused).rejects.toThrow(/staged by socialstream 0\.1\.0.*--restart/);
    expect(charged()).toBe(before);
    const restarted = await exportTo(client.forum.subforum({ subforum: 'old-ds-n30' }), { dataset: dir, restart: true });
    expect(restarted).toMatchObject({ complete: true, records: 30 });
  });
});
