/**
 * Queue addresses that cannot work, and a Redis that cannot be reached, met by `worker`, `export
 * --queue` and `status` as real CLI processes and by the library: a real `redis-server` on a loopback
 * port (one with a password), a tiny HTTP server where Redis should be, `rediss://` against the plain
 * Redis, and a port nobody listens on. Each gets one clear line and a documented exit code (README
 * "Beyond one machine"); a worker waiting for Redis logs one line per attempt and stops at once on
 * SIGINT or SIGTERM.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueAuthError, QueueDatabaseError, QueueNotRedisError, QueueTlsError, QueueUnreachableError } from '../../src/queue/errors.ts';
import { enqueueExport, queueStatus, runWorker } from '../../src/queue/index.ts';
import { finished, runCli, startCli, tempDir, type CliResult } from '../cli/helpers.ts';
import { freePort, spawnRedis } from '../../bench/_cluster.ts';
import { redisServerHere } from './redis-server.ts';

const KEY = 'sk_live_sandbox_queue_connections';
const PASSWORD = 'open-sesame-4711';
const haveRedis = redisServerHere('redis-connections');

const servers: { plain: ChildProcess | undefined; guarded: ChildProcess | undefined; http: Server | undefined; silent: NetServer | undefined; tls: NetServer | undefined } = {
  plain: undefined,
  guarded: undefined,
  http: undefined,
  silent: undefined,
  tls: undefined,
};
const at = { plain: 0, guarded: 0, http: 0, silent: 0, tls: 0, closed: 0 };
// The key is never read here: workers stop on their address before they take a walk.
const env = { ...process.env, SOCIALSTREAM_API_KEY: KEY, SOCIALSTREAM_BASE_URL: 'http://127.0.0.1:9' };

beforeAll(async () => {
  if (!haveRedis) return;
  [at.plain, at.guarded, at.http, at.silent, at.tls, at.closed] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  servers.plain = await spawnRedis(at.plain, tempDir());
  servers.guarded = await spawnRedis(at.guarded, tempDir());
  const admin = new Redis(`redis://127.0.0.1:${at.guarded}/0`);
  await admin.config('SET', 'requirepass', PASSWORD);
  admin.disconnect();
  servers.http = createServer((_request, response) => response.end('not redis'));
  await new Promise<void>((resolve) => servers.http!.listen(at.http, '127.0.0.1', resolve));
  // Takes connections and never says a word.
  servers.silent = createNetServer(() => undefined);
  await new Promise<void>((resolve) => servers.silent!.listen(at.silent, '127.0.0.1', resolve));
  // A TLS server (a certificate of its own, from openssl), as a Redis with TLS only would be.
  const dir = tempDir();
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]);
  if (made.status !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr?.toString() ?? made.error?.message}`);
  servers.tls = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (socket) => socket.end());
  await new Promise<void>((resolve) => servers.tls!.listen(at.tls, '127.0.0.1', resolve));
});
afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
  servers.plain?.kill('SIGKILL');
  servers.guarded?.kill('SIGKILL');
  servers.http?.close();
  servers.silent?.close();
  servers.tls?.close();
});

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

function inputsFile(): string {
  const path = join(tempDir(), 'inputs.txt');
  writeFileSync(path, 'subforum=a\nsubforum=b\n');
  return path;
}

/** The three queue commands against `url`. */
const COMMANDS: [string, (url: string) => string[]][] = [
  ['worker', (url) => ['worker', '--queue', url]],
  ['export --queue', (url) => ['export', 'forum/subforum', '--inputs', inputsFile(), '--dataset', tempDir(), '--queue', url]],
  ['status', (url) => ['status', '--queue', url]],
];

/** Runs each queue command against `url` at once; a worker that would wait for ever fails the test by its timeout. */
function allCommands(url: string, commands = COMMANDS): Promise<[string, CliResult][]> {
  return Promise.all(commands.map(async ([name, args]) => [name, await runCli(args(url), env)] as [string, CliResult]));
}

/** Sends `signal` and resolves with how long the process took to end, and how it ended. */
async function stop(child: ChildProcess, done: Promise<CliResult>, signal: NodeJS.Signals): Promise<{ ms: number; result: CliResult }> {
  const sent = Date.now();
  child.kill(signal);
  const result = await done;
  return { ms: Date.now() - sent, result };
}

/** Processes `start` started, killed after the tests in case one failed before stopping its own. */
const started: ChildProcess[] = [];

/** A CLI process, its end, and a wait for its first lines on stderr. */
function start(args: string[]): { child: ChildProcess; done: Promise<CliResult>; linesWritten: (count: number) => Promise<void> } {
  const child = startCli(args, env);
  started.push(child);
  const done = finished(child);
  let text = '';
  child.stderr?.on('data', (chunk: string) => (text += chunk));
  let ended = false;
  void done.then(() => (ended = true));
  return {
    child,
    done,
    linesWritten: async (count) => {
      while (lines(text).length < count) {
        if (ended) throw new Error(`ended before writing ${count} lines: ${text}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

describe.skipIf(!haveRedis)('a worker that cannot reach Redis', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('logs one line per attempt, 5 s apart, and %s ends it within 1 s', async (signal, code) => {
    const { child, done, linesWritten } = start(['worker', '--queue', `redis://127.0.0.1:${at.closed}/0`]);
    await linesWritten(1);
    // Attempts at 0 s and 5 s fall in this wait; on a busy machine fewer, never more.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const { ms, result } = await stop(child, done, signal);
    expect(ms).toBeLessThan(1_000);
    expect(result.code).toBe(code);
    const [...attempts] = lines(result.stderr).slice(0, -1);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    expect(attempts.length).toBeLessThanOrEqual(2);
    for (const line of attempts) expect(line).toBe(`socialstream worker: cannot reach Redis at redis://127.0.0.1:${at.closed}/0: connect ECONNREFUSED 127.0.0.1:${at.closed}; trying again in 5 s`);
    expect(lines(result.stderr).at(-1)).toBe(`socialstream: interrupted (${signal}).`);
  });

  it('whose Redis goes away mid-run logs it once and stops within 1 s on SIGTERM', async () => {
    const own = await freePort();
    const server = await spawnRedis(own, tempDir());
    const url = `redis://127.0.0.1:${own}/0`;
    const { child, done, linesWritten } = start(['worker', '--queue', url]);
    try {
      await linesWritten(1);
      server.kill('SIGKILL');
      await linesWritten(2);
      // Its connection retries meanwhile, backing off to 5 s.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const { ms, result } = await stop(child, done, 'SIGTERM');
      expect(ms).toBeLessThan(1_000);
      expect(result.code).toBe(143);
      const [started, ...rest] = lines(result.stderr);
      expect(started).toMatch(/^socialstream worker: worker \S+ takes walks from /);
      // One line, whichever error of whichever connection saw Redis go first: a reset or broken socket (a
      // command was in flight), a command on the closing connection, or a refused reconnection.
      const away = rest.slice(0, -1);
      expect(away, away.join('\n')).toHaveLength(1);
      const gone = ['read ECONNRESET', 'write ECONNRESET', 'write EPIPE', 'Connection is closed.', `connect ECONNREFUSED 127.0.0.1:${own}`];
      expect(gone.map((error) => `socialstream worker: Redis at ${url}: ${error}`)).toContain(away[0]);
      expect(rest.at(-1)).toBe('socialstream: interrupted (SIGTERM).');
    } finally {
      server.kill('SIGKILL');
    }
  });

});

describe.skipIf(!haveRedis)('a queue command waiting for a TLS handshake a plain Redis never answers', () => {
  it.each(COMMANDS)('%s stops within 1 s on SIGTERM', async (_name, args) => {
    const { child, done } = start(args(`rediss://127.0.0.1:${at.plain}/0`));
    // Within the 5 s the handshake is given: the process has started (on a busy machine: is starting) and waits.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const { ms, result } = await stop(child, done, 'SIGTERM');
    expect(ms).toBeLessThan(1_000);
    // Caught (143), or ended by the signal itself (before the command set its handlers, or where it sets none).
    expect(result.code === 143 || result.signal === 'SIGTERM', JSON.stringify(result)).toBe(true);
  });
});

describe.skipIf(!haveRedis)('queue commands against an address that cannot work: one line and exit 2', () => {
  it('an HTTP server where Redis should be', async () => {
    const url = `redis://127.0.0.1:${at.http}/0`;
    for (const [name, result] of await allCommands(url)) {
      expect(result.code, name).toBe(2);
      expect(lines(result.stderr), name).toEqual([`socialstream: ${url} is not Redis: its answer began with "H", as an HTTP server does. Check the host and port of --queue`]);
    }
  });

  it('a password Redis refuses, never shown', async () => {
    const url = `redis://:wrong-${PASSWORD}@127.0.0.1:${at.guarded}/0`;
    for (const [name, result] of await allCommands(url)) {
      expect(result.code, name).toBe(2);
      expect(lines(result.stderr), name).toEqual([
        `socialstream: Redis at redis://:***@127.0.0.1:${at.guarded}/0 refused the password (WRONGPASS): check the user and password in --queue (redis://[USER]:PASSWORD@HOST:PORT/DB)`,
      ]);
      expect(result.stderr, name).not.toContain(PASSWORD);
    }
  });

  it('no password where Redis needs one', async () => {
    const url = `redis://127.0.0.1:${at.guarded}/0`;
    for (const [name, result] of await allCommands(url)) {
      expect(result.code, name).toBe(2);
      expect(lines(result.stderr), name).toEqual([`socialstream: Redis at ${url} needs a password: give it in --queue as redis://:PASSWORD@HOST:PORT/DB`]);
    }
  });

  it('rediss:// to a plain Redis', async () => {
    const url = `rediss://127.0.0.1:${at.plain}/0`;
    for (const [name, result] of await allCommands(url)) {
      expect(result.code, name).toBe(2);
      expect(lines(result.stderr), name).toEqual([`socialstream: ${url} asks for TLS, but the server there speaks plain Redis: use redis:// (or turn TLS on in Redis)`]);
    }
  });

  it('redis:// to a server that speaks only TLS', async () => {
    const url = `redis://127.0.0.1:${at.tls}/0`;
    for (const [name, result] of await allCommands(url)) {
      expect(result.code, name).toBe(2);
      expect(lines(result.stderr), name).toEqual([`socialstream: ${url} is plain, but the server there speaks TLS: use rediss://`]);
    }
  });

  it.each([99, 16])('a database index the server lacks (/%i of 16), with nothing written to database 0', async (database) => {
    const url = `redis://127.0.0.1:${at.plain}/${database}`;
    const zero = new Redis(`redis://127.0.0.1:${at.plain}/0`);
    try {
      await zero.set('socialstream:probe', 'db 0');
      for (const [name, result] of await allCommands(url)) {
        expect(result.code, name).toBe(2);
        expect(lines(result.stderr), name).toEqual([`socialstream: Redis at ${url} has no database ${database} (it has 16: 0 to 15): pick one it has in --queue`]);
      }
      expect(await zero.keys('*')).toEqual(['socialstream:probe']);
    } finally {
      await zero.flushdb();
      zero.disconnect();
    }
  });
});

describe.skipIf(!haveRedis)('enqueue and status when Redis cannot be reached', () => {
  it('exit 5 with one line naming the address', async () => {
    const url = `redis://127.0.0.1:${at.closed}/0`;
    for (const [name, result] of await allCommands(url, COMMANDS.filter(([name]) => name !== 'worker'))) {
      expect(result.code, name).toBe(5);
      expect(lines(result.stderr), name).toEqual([`socialstream: cannot reach Redis at ${url}: connect ECONNREFUSED 127.0.0.1:${at.closed}`]);
    }
  });
});

describe.skipIf(!haveRedis)('enqueue and status against a peer that takes the connection and says nothing', () => {
  it('exit 5 with one line, after the 5 s an attempt is given', async () => {
    const url = `redis://127.0.0.1:${at.silent}/0`;
    for (const [name, result] of await allCommands(url, COMMANDS.filter(([name]) => name !== 'worker'))) {
      expect(result.code, name).toBe(5);
      expect(lines(result.stderr), name).toEqual([`socialstream: cannot reach Redis at ${url}: no answer within 5 s`]);
    }
  });
});

describe.skipIf(!haveRedis)('the library raises a typed error for each', () => {
  const calls: [string, (url: string) => Promise<unknown>][] = [
    ['enqueueExport', (url) => enqueueExport({ queue: url, op: 'forum/subforum', inputs: [{ subforum: 'a' }], dataset: tempDir() })],
    ['queueStatus', (url) => queueStatus(url)],
    ['runWorker', (url) => runWorker({ queue: url, apiKey: KEY, baseUrl: 'http://127.0.0.1:9' })],
  ];
  const cases: [string, () => string, new (...args: never[]) => Error, string][] = [
    ['an HTTP server', () => `redis://127.0.0.1:${at.http}/0`, QueueNotRedisError, 'QUEUE_NOT_REDIS'],
    ['a refused password', () => `redis://:wrong@127.0.0.1:${at.guarded}/0`, QueueAuthError, 'QUEUE_AUTH'],
    ['a missing password', () => `redis://127.0.0.1:${at.guarded}/0`, QueueAuthError, 'QUEUE_AUTH'],
    ['database 99 of 16', () => `redis://127.0.0.1:${at.plain}/99`, QueueDatabaseError, 'QUEUE_DATABASE'],
    ['rediss:// to a plain Redis', () => `rediss://127.0.0.1:${at.plain}/0`, QueueTlsError, 'QUEUE_TLS'],
    ['redis:// to a TLS server', () => `redis://127.0.0.1:${at.tls}/0`, QueueTlsError, 'QUEUE_TLS'],
  ];
  it.each(cases)('%s', async (_case, url, type, code) => {
    const errors = await Promise.all(calls.map(([, call]) => call(url()).then(() => undefined, (failure: unknown) => failure)));
    for (const [index, error] of errors.entries()) {
      expect(error, calls[index][0]).toBeInstanceOf(type);
      expect(error, calls[index][0]).toMatchObject({ code });
    }
  });

  it('an unreachable Redis: enqueueExport and queueStatus at once, runWorker not before its signal', async () => {
    const url = `redis://127.0.0.1:${at.closed}/0`;
    for (const [name, call] of calls.slice(0, 2)) {
      const error = await call(url).then(() => undefined, (failure: unknown) => failure);
      expect(error, name).toBeInstanceOf(QueueUnreachableError);
      expect(error, name).toMatchObject({ code: 'QUEUE_UNREACHABLE' });
    }
    const logged: string[] = [];
    const outcome = await runWorker({ queue: url, apiKey: KEY, baseUrl: 'http://127.0.0.1:9', signal: AbortSignal.timeout(300), log: (line) => logged.push(line) });
    expect(outcome).toMatchObject({ walks: 0, stoppedBy: 'signal' });
    expect(logged).toEqual([`cannot reach Redis at ${url}: connect ECONNREFUSED 127.0.0.1:${at.closed}; trying again in 5 s`]);
  });
});
