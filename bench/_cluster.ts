/**
 * A cluster on one machine, for `bench/cluster.ts` and `npm run demo:cluster`: a redis-server on a
 * free loopback port, the sandbox, and `socialstream worker` processes: the CLI from its sources, or
 * the built one (`dist/`, what `npx socialstream worker` runs on a real machine).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { describeStatus, queueStatus } from '../src/queue/index.ts';

// tsx by its resolved URL: a worker may run in a folder of its own, where `--import tsx` would not resolve.
const SOURCE_CLI = ['--import', import.meta.resolve('tsx'), resolve(import.meta.dirname, '../src/cli/main.ts')];
const BUILT_CLI = [resolve(import.meta.dirname, '../dist/src/cli/main.js')];

/** The built CLI (`npm run build`; `npm run bench` builds first), refused when missing rather than run stale or from sources. */
export function builtCli(): string[] {
  if (!existsSync(BUILT_CLI[0])) throw new Error(`${BUILT_CLI[0]} is missing: npm run build`);
  return BUILT_CLI;
}

export const haveRedis = (): boolean => spawnSync('redis-server', ['--version']).status === 0;

export interface LocalRedis {
  url: string;
  /** Commands Redis has processed so far (`INFO stats`), those run inside scripts included. */
  commands(): Promise<number>;
  /** Starts counting the round trips of every client but `except` (local ports); `stop` says how many. */
  countRoundTrips(except: readonly number[]): Promise<{ stop(): number }>;
  stop(): Promise<void>;
}

/**
 * A redis-server on loopback `port`, without snapshots, its files in `dir` (`options`: more of its
 * flags, e.g. AOF), resolved once it answers. The e2e tests start theirs with it too.
 */
export async function spawnRedis(port: number, dir: string, options: readonly string[] = ['--appendonly', 'no']): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...options], { stdio: 'ignore' });
  // Ready once it answers: ioredis retries the connection until then.
  const probe = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 50, maxRetriesPerRequest: null });
  probe.on('error', () => undefined);
  try {
    await probe.ping();
  } finally {
    probe.disconnect();
  }
  return child;
}

export async function startRedis(): Promise<LocalRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-redis-'));
  const child = await spawnRedis(port, dir);
  const admin = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 50, maxRetriesPerRequest: null });
  admin.on('error', () => undefined);
  await admin.ping();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    commands: async () => Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))?.[1] ?? 0),
    countRoundTrips: async (except) => {
      const monitor = await admin.monitor();
      const ignored = new Set(except.map((local) => `127.0.0.1:${local}`));
      // MONITOR shows each command a client sent, and those scripts ran (source `lua`). A client's
      // round trip is one command, or one MULTI … EXEC block (a pipeline of them counts each).
      const inMulti = new Set<string>();
      let count = 0;
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source === 'lua' || ignored.has(source)) return;
        const command = args[0]?.toLowerCase();
        if (command === 'multi') inMulti.add(source);
        else if (command === 'exec' || command === 'discard') inMulti.delete(source);
        if (!inMulti.has(source) || command === 'multi') count++;
      });
      return {
        stop: () => {
          monitor.disconnect();
          return count;
        },
      };
    },
    stop: async () => {
      admin.disconnect();
      child.kill('SIGKILL');
      await new Promise((done) => child.once('close', done));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What sets a worker apart from the others, as on a machine of its own: its folder, more of its environment, more flags (its `--work`). */
export interface OwnWorker {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  args: string[];
}

/**
 * Starts `count` workers (the CLI from its sources, or `cli`), each in the folder `own(index)` gives
 * (else this process's) with its flags; `stop` ends them with SIGTERM (their walks go back to the queue).
 */
export function startWorkers(
  url: string,
  count: number,
  env: NodeJS.ProcessEnv,
  concurrency: number,
  log = false,
  cli = SOURCE_CLI,
  own: (index: number) => OwnWorker = () => ({ cwd: process.cwd(), args: [] }),
): { stop(): Promise<void> } {
  const workers: ChildProcess[] = Array.from({ length: count }, (_, index) => {
    const { cwd, args, env: more } = own(index);
    const child = spawn(process.execPath, [...cli, 'worker', '--queue', url, '--concurrency', String(concurrency), ...args], { env: { ...env, ...more }, cwd, stdio: ['ignore', 'ignore', log ? 'pipe' : 'ignore'] });
    child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[worker ${index + 1}] ${chunk.toString()}`));
    return child;
  });
  return {
    stop: async () => {
      await Promise.all(
        workers.map(async (child) => {
          if (child.exitCode !== null) return;
          const closed = new Promise((done) => child.once('close', done));
          child.kill('SIGTERM');
          await closed;
        }),
      );
    },
  };
}

/** Runs the CLI once and resolves with its exit code. */
export function cli(args: string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  const child = spawn(process.execPath, [...SOURCE_CLI, ...args], { env, stdio: 'inherit' });
  return new Promise((done) => child.once('close', done));
}

/** A loopback port no one listens on now. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Prints the queue's status each second, as `socialstream status` would, until its run is finished. */
export async function showStatusUntilFinished(url: string): Promise<void> {
  for (;;) {
    await new Promise((done) => setTimeout(done, 1_000));
    const status = await queueStatus(url);
    console.log(`\n$ socialstream status --queue ${url}\n${describeStatus(status)}`);
    if (status.runs[0]?.state === 'finished') return;
  }
}
