/**
 * Runs the real CLI from its sources (`node --import tsx src/cli/main.ts`, one process, as the compiled
 * bin runs under plain node) as a subprocess, against a sandbox the test started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Sandbox } from '../../src/sandbox/index.ts';

/** The node arguments that run the CLI: `[process.execPath, ...CLI, ...args]`. */
export const CLI = ['--import', 'tsx', resolve(import.meta.dirname, '../../src/cli/main.ts')];

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment that points the CLI at `sandbox` with `apiKey` (its first account's by default). */
export function sandboxEnv(sandbox: Sandbox, apiKey = sandbox.apiKey): NodeJS.ProcessEnv {
  return { ...process.env, SOCIALSTREAM_BASE_URL: sandbox.url, SOCIALSTREAM_API_KEY: apiKey };
}

export function startCli(args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function finished(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return finished(startCli(args, env));
}

/** Runs the CLI with `input` on its standard input, closed once written (as `cmd < file` gives it). */
export function runCliWithInput(args: readonly string[], env: NodeJS.ProcessEnv, input: string): Promise<CliResult> {
  const child = spawn(process.execPath, [...CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.end(input);
  return finished(child);
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'socialstream-cli-'));
}

/** Resolves once `path` exists (e.g. the checkpoint of an export that has started buying pages). */
export async function waitFor(path: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A seeded sequence of delays below `maxMs`, so a failing kill point can be replayed. */
export function randomDelays(seed: number, count: number, maxMs: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % maxMs;
  });
}

/** Whether a publish pass of the dataset operation in `meta` (`<dir>/_dataset/<op>`) has written its journal: its renames are under way. */
export function passJournalWritten(meta: string): boolean {
  if (!existsSync(join(meta, 'publishing'))) return false;
  const passes = readdirSync(join(meta, 'publishing'), { withFileTypes: true }).filter((entry) => entry.isDirectory());
  return passes.some((pass) => existsSync(join(meta, 'publishing', pass.name, 'journal.json')));
}
