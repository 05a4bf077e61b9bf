/**
 * `socialstream export` used carelessly or unluckily: its staging folder deleted mid-run, an output
 * name too long for its side files, a refused partition change. The CLI as a subprocess against a
 * sandbox over loopback; purchases counted on the sandbox's side.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';
import { readNdjson } from './readers.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 5, accounts: [{ apiKey: 'sk_live_sandbox_edges', credits: 100_000 }] });
});
afterAll(() => sandbox.close());
const charged = () => sandbox.requests.charged['sk_live_sandbox_edges'] ?? 0;

describe('socialstream export, its staging folder deleted mid-run', () => {
  it('exits 2 before its next request with one line naming the folder and a remedy that works', async () => {
    const folder = join(tempDir(), 'out');
    mkdirSync(folder);
    const out = join(folder, 'posts.ndjson');
    const walk = ['export', 'forum/subforum', 'subforum=cli-gone-n1250', '--out', out];
    const env = sandboxEnv(sandbox, 'sk_live_sandbox_edges');
    const child = startCli(walk, env);
    const done = finished(child);
    await waitFor(`${out}.checkpoint.json`);
    rmSync(folder, { recursive: true, force: true });
    const boughtAt = charged();
    const result = await done;
    expect(result.code, result.stderr).toBe(2);
    const last = result.stderr.trimEnd().split('\n').at(-1)!;
    expect(last).toMatch(new RegExp(`^socialstream: ${folder} was removed while the export was staging into it`));
    expect(last).not.toMatch(/--restart|--resume|checkpoint\.json/);
    // The request in flight when the folder went may be answered; none is sent after.
    expect(charged() - boughtAt).toBeLessThanOrEqual(1);
    expect(existsSync(folder)).toBe(false);
    const again = await runCli(walk, env);
    expect(again.code, again.stderr).toBe(0);
    expect(readNdjson(out)).toHaveLength(1250);
    expect(readdirSync(folder)).toEqual(['posts.ndjson']);
  });
});
