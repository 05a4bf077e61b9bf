import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { OPERATIONS } from '../../src/operations/table.ts';
import { runCli, sandboxEnv, startCli, tempDir } from './helpers.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(() => sandbox.close());

describe('socialstream ops, credits and help', () => {
  it('ops lists every operation of the table with its client method', async () => {
    const result = await runCli(['ops'], sandboxEnv(sandbox));
    expect(result.code).toBe(0);
    for (const op of OPERATIONS) expect(result.stdout).toMatch(new RegExp(`^${op.id}(\\s|$)`, 'm'));
    expect(result.stdout).toContain('forum.subforum');
    expect(result.stderr).toBe('');
  });

  it('ops --json prints the same table as data', async () => {
    const result = await runCli(['ops', '--json'], sandboxEnv(sandbox));
    const table = JSON.parse(result.stdout) as { id: string }[];
    expect(table.map((op) => op.id)).toEqual(OPERATIONS.map((op) => op.id));
    expect(table).toHaveLength(26);
  });

  it('credits prints the balance of the key without spending any', async () => {
    const before = sandbox.balance(sandbox.apiKey).credits;
    const result = await runCli(['credits', '--json'], sandboxEnv(sandbox));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ credits: before, subscriptionStatus: 'free', subscriptionId: null });
    expect(sandbox.balance(sandbox.apiKey).credits).toBe(before);
  });

  it('every command answers --help on stdout with exit 0', async () => {
    for (const command of ['ops', 'credits', 'export', 'sandbox']) {
      const result = await runCli([command, '--help'], sandboxEnv(sandbox));
      expect(result.code, command).toBe(0);
      expect(result.stdout, command).toMatch(/usage/i);
    }
  });

  it('--version prints the version of package.json and nothing else', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version'], sandboxEnv(sandbox));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
    expect(result.stderr).toBe('');
  });

  it('an unknown command is a usage error with exit 2', async () => {
    const result = await runCli(['exprot'], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "exprot"');
  });

  it('export without a key exits 3 naming the variable to set, and leaves no file behind', async () => {
    const dir = tempDir();
    const env = { ...sandboxEnv(sandbox), SOCIALSTREAM_API_KEY: '' };
    const result = await runCli(['export', 'forum/subforum', 'subforum=a', '--out', join(dir, 'posts.csv')], env);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('no API key: set SOCIALSTREAM_API_KEY');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a refused key exits 3 naming the variable to set, and never prints the key', async () => {
    const key = 'sk_live_sandbox_wrongwrongwrong1234';
    const result = await runCli(['credits'], sandboxEnv(sandbox, key));
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('SOCIALSTREAM_API_KEY');
    expect(result.stderr + result.stdout).not.toContain(key);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('sandbox serves the API until SIGTERM, and the other commands work against it', async () => {
    const server = startCli(['sandbox', '--port', '0', '--credits', '7', '--latency', '1', '--seed', 'cli'], process.env);
    let printed = '';
    server.stdout?.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      server.stdout?.on('data', (chunk: string) => {
        printed += chunk;
        const match = /sandbox listening on (\S+)/.exec(printed);
        if (match) resolve(match[1]);
      });
      server.once('exit', (code) => reject(new Error(`sandbox exited early with ${code}`)));
    });
    try {
      const env = { ...process.env, SOCIALSTREAM_BASE_URL: url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox' };
      const credits = await runCli(['credits', '--json'], env);
      expect(JSON.parse(credits.stdout)).toMatchObject({ credits: 7 });
      const exported = await runCli(['export', 'search/search', 'query=cli-n25', '--out', '-'], env);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout.trimEnd().split('\n')).toHaveLength(25);
      const after = await runCli(['credits', '--json'], env);
      expect(JSON.parse(after.stdout).credits).toBe(7 - 4); // pages 1-3 hold 25 results, page 4 is empty
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
  });
});
