/**
 * A cluster on one machine, for `bench/cluster.ts` and `npm run demo:cluster`: a redis-server on a
 * free loopback port, the sandbox, and `socialstream worker` processes (the CLI from its sources).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';

const CLI = ['--import', 'tsx', resolve(import.meta.dirname, '../src/cli/main.ts')];

export const haveRedis = (): boolean => spawnSync('redis-server', ['--version']).status === 0;

export interface LocalRedis {
  url: string;
  /** Commands Redis has processed so far (`INFO stats`). */
  commands(): Promise<number>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<LocalRedis> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', mkdtempSync(join(tmpdir(), 'socialstream-redis-'))], { stdio: 'ignore' });
  const admin = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 50, maxRetriesPerRequest: null });
  admin.on('error', () => undefined);
  await admin.ping();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    commands: async () => Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))?.[1] ?? 0),
    stop: async () => {
      admin.disconnect();
      child.kill('SIGKILL');
      await new Promise((done) => child.once('close', done));
    },
  };
}

/** Starts `count` workers; `stop` ends them with SIGTERM (their walks go back to the queue). */
export function startWorkers(url: string, count: number, env: NodeJS.ProcessEnv, concurrency: number, log = false): { stop(): Promise<void> } {
  const workers: ChildProcess[] = Array.from({ length: count }, (_, index) => {
    const child = spawn(process.execPath, [...CLI, 'worker', '--queue', url, '--concurrency', String(concurrency)], { env, stdio: ['ignore', 'ignore', log ? 'pipe' : 'ignore'] });
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
  const child = spawn(process.execPath, [...CLI, ...args], { env, stdio: 'inherit' });
  return new Promise((done) => child.once('close', done));
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
