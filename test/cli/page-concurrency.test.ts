import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir } from './helpers.ts';
import { readNdjson } from './readers.ts';

// A forum thread of 500 comments: about 150 requests, walked 16 pages at a time (the default).
const TREE = ['export', 'forum/post/comments', 'url=https://forum.example/r/x/comments/kill/thread-n500'];
const KILLS = 6;

let sandbox: Sandbox;
let reference: string;
const keys = Array.from({ length: KILLS + 2 }, (_, index) => `sk_live_sandbox_pages${index}`);

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 10, accounts: keys.map((apiKey) => ({ apiKey, credits: 100_000 })) });
  reference = join(tempDir(), 'reference.ndjson');
  const result = await runCli([...TREE, '--page-concurrency', '1', '--out', reference], sandboxEnv(sandbox, keys[0]));
  expect(result.code, result.stderr).toBe(0);
});
afterAll(() => sandbox.close());

async function waitFor(path: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('export with page concurrency', () => {
  it('writes a concurrent tree walk exactly as a one-page-at-a-time walk', async () => {
    const out = join(tempDir(), 'concurrent.ndjson');
    const result = await runCli([...TREE, '--out', out], sandboxEnv(sandbox, keys[1]));
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(reference, 'utf8'));
  });

  it(`resumed after kill -9 during a concurrent tree walk ends with exactly the uninterrupted result (${KILLS} kill points)`, async () => {
    let killedMidWalk = 0;
    for (let run = 0; run < KILLS; run++) {
      const key = keys[run + 2];
      const out = join(tempDir(), 'killed.ndjson');
      const env = sandboxEnv(sandbox, key);
      const child = startCli([...TREE, '--out', out], env);
      const done = finished(child);
      await waitFor(`${out}.checkpoint.json`);
      await new Promise((resolve) => setTimeout(resolve, 30 * run));
      child.kill('SIGKILL');
      const killed = await done;
      if (killed.signal === 'SIGKILL') {
        killedMidWalk++;
        const resumed = await runCli([...TREE, '--out', out, '--resume'], env);
        expect(resumed.code, `run ${run}: ${resumed.stderr}`).toBe(0);
      } else {
        expect(killed.code, `run ${run}: ${killed.stderr}`).toBe(0);
      }
      expect(readFileSync(out, 'utf8'), `run ${run}`).toBe(readFileSync(reference, 'utf8'));
      expect(existsSync(`${out}.checkpoint.json`)).toBe(false);
    }
    expect(killedMidWalk).toBeGreaterThanOrEqual(KILLS / 2);
  }, 240_000);

  it('with --overfetch reads web search pages ahead and says what the empty pages past the end cost', async () => {
    const out = join(tempDir(), 'search.ndjson');
    const args = ['export', 'search/search', 'query=overfetch-n57', '--page-concurrency', '11', '--overfetch', '--out', out];
    const result = await runCli(args, sandboxEnv(sandbox, keys[1]));
    expect(result.code, result.stderr).toBe(0);
    expect(readNdjson(out)).toHaveLength(57);
    expect(result.stderr).toContain('11 credits this run');
    expect(result.stderr).toContain('4 credits on pages bought ahead and never read');
  });

  it('refuses --page-concurrency 0 as a usage error', async () => {
    const result = await runCli([...TREE, '--page-concurrency', '0', '--out', join(tempDir(), 'x.ndjson')], sandboxEnv(sandbox, keys[1]));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--page-concurrency must be at least 1');
  });
});
