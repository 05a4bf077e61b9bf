/**
 * The real `redis-server` of an end-to-end suite: whether this machine has one (without it the suite
 * is skipped, saying so; on CI, where `.ci/run` installs it, a missing one fails), and one server on
 * a loopback port of the suite's own, started before its tests, each test taking a database of its own.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { freePort, spawnRedis } from '../../bench/_cluster.ts';
import { tempDir } from '../cli/helpers.ts';

/** Whether `redis-server` runs here; `suite` names the file in the line that says it is skipped. */
export function redisServerHere(suite: string): boolean {
  const found = spawnSync('redis-server', ['--version']).status === 0;
  if (!found && process.env.CI !== undefined) throw new Error('redis-server is missing: CI installs it (.ci/run)');
  if (!found) console.warn(`test/e2e/${suite}: skipped, no redis-server on this machine (apt-get install redis-server)`);
  return found;
}

/** Starts the suite's server (when `available`); `nextUrl()` names a fresh database of it. */
export function redisForSuite(available: boolean): { nextUrl(): string } {
  let server: ChildProcess | undefined;
  let port = 0;
  let nextDb = 0;
  beforeAll(async () => {
    if (!available) return;
    port = await freePort();
    server = await spawnRedis(port, tempDir());
  });
  afterAll(() => {
    server?.kill('SIGKILL');
  });
  return { nextUrl: () => `redis://127.0.0.1:${port}/${nextDb++}` };
}
