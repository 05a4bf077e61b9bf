/**
 * Leases of a local store that ran out, taken over by processes at once (docs/storage.md "Locks are
 * leases"): exactly one process gets each, never two, as a stale lock once could be taken twice.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../../src/dataset/storage/open.ts';
import type { Lease } from '../../src/dataset/storage/types.ts';
import { finished, tempDir } from './helpers.ts';

const TRIALS = 30;
const CHILDREN = 4;
const TAKER = resolve(import.meta.dirname, 'fixtures/lease-taker.ts');

describe('a local lease that ran out', () => {
  it('is taken over by exactly one of four processes trying at once, in every one of 30 trials, and its old holder hears it lost it', async () => {
    const root = tempDir();
    const location = join(root, 'store');
    const barrier = join(root, 'barrier');
    mkdirSync(barrier);
    const storage = await openStorage(location);
    const stale: Lease[] = [];
    for (let trial = 0; trial < TRIALS; trial++) stale.push((await storage.lock(`locks/trial-${trial}`, { leaseMs: 1 }))!);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 10));

    const children = Array.from({ length: CHILDREN }, () =>
      finished(spawn(process.execPath, ['--import', 'tsx', TAKER, location, barrier, String(TRIALS), String(CHILDREN)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 })),
    );
    const results = await Promise.all(children);
    expect(results.map((result) => result.stderr.trim())).toEqual(Array.from({ length: CHILDREN }, () => ''));
    const won = results.flatMap((result) => JSON.parse(result.stdout) as number[]).sort((a, b) => a - b);
    expect(won).toEqual(Array.from({ length: TRIALS }, (_, trial) => trial));
    for (const lease of stale) expect(await lease.renew()).toBe(false);
  });
});
