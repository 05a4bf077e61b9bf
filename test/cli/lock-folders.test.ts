/**
 * Lock folders a crash cannot split (issue 38, item 3; docs/datasets.md "Crash safety"): processes that
 * find the same lock folder of a dead owner at once take it one at a time, never two together.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finished, tempDir } from './helpers.ts';

const TRIALS = 50;
const CHILDREN = 4;
const TAKER = resolve(import.meta.dirname, 'fixtures/lock-taker.ts');

/** A pid no process has any more. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

describe('a lock folder left by a dead owner', () => {
  it('is held by one process at a time when four take it at once, in every one of 50 trials, and none fails', async () => {
    const root = tempDir();
    const locks = join(root, 'locks');
    const log = join(root, 'holders.log');
    mkdirSync(join(root, 'barrier'), { recursive: true });
    const dead = deadPid();
    for (let trial = 0; trial < TRIALS; trial++) {
      mkdirSync(join(locks, `trial-${trial}`), { recursive: true });
      // Half as an older version signed its locks (pid and host), half with a token as this one does.
      const owner = trial % 2 === 0 ? { pid: dead, host: hostname() } : { pid: dead, host: hostname(), token: `dead-${trial}` };
      writeFileSync(join(locks, `trial-${trial}`, 'owner.json'), JSON.stringify(owner));
    }
    writeFileSync(log, '');

    const children = Array.from({ length: CHILDREN }, () =>
      finished(spawn(process.execPath, ['--import', 'tsx', TAKER, locks, String(TRIALS), String(CHILDREN), log], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 })),
    );
    const results = await Promise.all(children);
    expect(results.map((result) => result.stderr.trim())).toEqual(Array.from({ length: CHILDREN }, () => ''));
    expect(results.map((result) => result.code)).toEqual(Array.from({ length: CHILDREN }, () => 0));

    const lines = readFileSync(log, 'utf8').trim().split('\n');
    const overlaps: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const events = lines.filter((line) => line.startsWith(`${trial} `)).map((line) => line.split(' '));
      expect(events.length).toBeGreaterThan(0);
      let holder: string | undefined;
      for (const [, event, pid] of events) {
        if (event === 'enter' && holder !== undefined) overlaps.push(`trial ${trial}: ${pid} entered while ${holder} held it`);
        holder = event === 'enter' ? pid : undefined;
      }
    }
    expect(overlaps).toEqual([]);
    // Every holder let go: no lock folder is left at any trial's name.
    expect(readdirSync(locks).filter((name) => /^trial-\d+$/.test(name))).toEqual([]);
  });
});
