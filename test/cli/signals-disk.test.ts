import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';
import { readNdjson } from './readers.ts';

// 2,000 trimmed posts (about 1.1 MB of NDJSON), 25 a page, slowed down so that a signal lands mid-walk.
const WALK = ['export', 'forum/subforum', 'subforum=signals-n2000', 'trim=true'];

let sandbox: Sandbox;
let reference: string;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 8, accounts: [{ apiKey: 'sk_live_sandbox_signals', credits: 100_000 }] });
  const out = join(tempDir(), 'reference.ndjson');
  const result = await runCli([...WALK, '--out', out], sandboxEnv(sandbox));
  expect(result.code, result.stderr).toBe(0);
  reference = readFileSync(out, 'utf8');
});
afterAll(() => sandbox.close());

/** The exit code of a run stopped by each signal: 128 + its number. */
const EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/**
 * Starts the walk, sends `signals` once it is under way, and checks what a signal must leave: the
 * run names the signal that stopped it and exits with its code. Signals sent back to back may be
 * taken in either order (each thread of the process can receive one), so with several it is
 * whichever came first, as long as the later ones change nothing.
 */
async function interrupt(signals: NodeJS.Signals[]): Promise<string> {
  const out = join(tempDir(), 'signalled.ndjson');
  const env = sandboxEnv(sandbox);
  const child = startCli([...WALK, '--out', out], env);
  const done = finished(child);
  await waitFor(`${out}.checkpoint.json`);
  await new Promise((resolve) => setTimeout(resolve, 150));
  for (const signal of signals) child.kill(signal);
  const result = await done;
  expect(result.stderr).toMatch(/stopped early; \d+ records \(\d+ pages\) to /);
  const named = /interrupted \((SIG[A-Z]+)\)/.exec(result.stderr)?.[1] as NodeJS.Signals | undefined;
  expect(signals, result.stderr).toContain(named);
  expect(result.code, result.stderr).toBe(EXIT_CODES[named!]);
  const partial = readNdjson(out);
  expect(partial.length).toBeGreaterThan(0);
  expect(reference.startsWith(readFileSync(out, 'utf8'))).toBe(true);
  const resumed = await runCli([...WALK, '--out', out, '--resume'], env);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(readFileSync(out, 'utf8')).toBe(reference);
  return out;
}

describe('an export stopped by a signal', () => {
  it('exits 143 on SIGTERM after saving like Ctrl-C, and --resume completes it', async () => {
    await interrupt(['SIGTERM']);
  });

  it('exits 129 on SIGHUP after saving like Ctrl-C, and --resume completes it', async () => {
    await interrupt(['SIGHUP']);
  });

  it('keeps saving through a second and third signal, and the output stays whole', async () => {
    await interrupt(['SIGINT', 'SIGTERM', 'SIGINT']);
  });
});

describe.skipIf(process.getuid?.() !== 0)('a disk that fills up', () => {
  it('ends with exit 6 and one line naming the disk and --resume, leaves no temporary file, and resumes once there is room', async () => {
    const disk = join(tempDir(), 'small');
    mkdirSync(disk);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=400k', 'tmpfs', disk]).status).toBe(0);
    try {
      const out = join(disk, 'posts.ndjson');
      const env = sandboxEnv(sandbox);
      const full = await runCli([...WALK, '--out', out], env);
      expect(full.code, full.stderr).toBe(6);
      const lines = full.stderr.trimEnd().split('\n');
      expect(lines.at(-1)).toMatch(new RegExp(`^socialstream: no space left on the disk holding ${disk} \\(writing ${disk}/[^)]+\\): free some space there\\. .*--resume`));
      // Whatever is there is whole: the spool and journal cut back to their last whole page.
      expect(readdirSync(disk).sort().filter((name) => name.endsWith('.tmp'))).toEqual([]);
      if (existsSync(out)) expect(reference.startsWith(readFileSync(out, 'utf8'))).toBe(true);
      expect(spawnSync('mount', ['-o', 'remount,size=8m', disk]).status).toBe(0);
      const resumed = await runCli([...WALK, '--out', out, '--resume'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe(reference);
      expect(readdirSync(disk).sort()).toEqual(['posts.ndjson', 'posts.ndjson.export.json']);
    } finally {
      spawnSync('umount', [disk]);
    }
  });
});
