import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { parseSandboxArgs, SANDBOX_HELP } from '../../src/sandbox/cli.ts';
import { renderHelp } from '../../src/cli/help.ts';
import { get } from './helpers.ts';

describe('sandbox command arguments', () => {
  it('reads every flag, in both --flag value and --flag=value forms', () => {
    expect(
      parseSandboxArgs(['--port', '0', '--credits=25', '--latency', '40', '--fault-rate', '0.25', '--seed', 's1', '--host=127.0.0.1']),
    ).toEqual({
      port: 0,
      host: '127.0.0.1',
      accounts: [{ apiKey: 'sk_live_sandbox', credits: 25 }],
      latencyMs: 40,
      faults: { rate: 0.25 },
      seed: 's1',
    });
  });

  it('reads --dialect service and --dialect spec', () => {
    expect(parseSandboxArgs(['--dialect', 'service'])).toEqual({ port: 8787, dialect: 'service' });
    expect(parseSandboxArgs(['--dialect=spec'])).toEqual({ port: 8787, dialect: 'spec' });
  });

  it('defaults to port 8787 and nothing else', () => {
    expect(parseSandboxArgs([])).toEqual({ port: 8787 });
  });

  it.each([
    [['--port', 'abc'], /--port/],
    [['--port', '70000'], /--port/],
    [['--credits', '-5'], /--credits/],
    [['--latency', '1.5'], /--latency/],
    [['--fault-rate', '2'], /--fault-rate/],
    [['--fault-rate', 'often'], /--fault-rate/],
    [['--seed'], /--seed needs a value/],
    [['--colour', 'red'], /unknown flag --colour/],
    [['--prot', '1'], /unknown flag --prot \(did you mean "--port"\?\)/],
    [['extra'], /unexpected argument "extra"/],
    [['--port', '1', '--port', '2'], /--port is given twice/],
    [['--dialect', 'real'], /--dialect must be spec or service, got "real"/],
  ])('refuses %j with a TypeError naming the flag', (argv, message) => {
    expect(() => parseSandboxArgs(argv)).toThrow(TypeError);
    expect(() => parseSandboxArgs(argv)).toThrow(message);
  });
});

describe('sandbox command', () => {
  it('has a help that names every flag it parses', () => {
    const text = renderHelp(SANDBOX_HELP);
    expect(text).toMatch(/^usage: socialstream sandbox/);
    expect(text).toContain('--fault-rate');
    expect(text).toMatch(/--dialect D +spec \(default\).*service/);
  });

  it('prints its URL and key, serves, and stops cleanly on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '-e', "import('./src/sandbox/cli.ts').then((m) => m.runSandboxCommand(['--port', '0', '--credits', '7']))"],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const match = /export SOCIALSTREAM_BASE_URL=(\S+) SOCIALSTREAM_API_KEY=sk_live_sandbox\n/.exec(out);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${out}`)));
    });
    expect(out).toContain(`sandbox listening on ${url}`);
    expect(out).toContain('API key: sk_live_sandbox');
    expect((await get(url, '/v1/credits')).body.credits).toBe(7);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(out).toContain('sandbox stopped');
  });

  it('serves the service dialect with --dialect service', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '-e', "import('./src/sandbox/cli.ts').then((m) => m.runSandboxCommand(['--port', '0', '--dialect', 'service']))"],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          const match = /sandbox listening on (\S+)\n/.exec(out);
          if (match) resolve(match[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${out}`)));
      });
      const { status, body } = await get(url, '/v1/scrape/shortvideo/videos', { handle: 'creator-n40' });
      expect(status).toBe(200);
      expect(body).not.toHaveProperty('data');
      expect(Array.isArray(body.aweme_list)).toBe(true);
      expect(body.credits_charged).toBe(1);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
  });
});

describe('sandbox command: time passes on SIGUSR2', () => {
  it('gives every paginated resource --advance new records per signal', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '-e', "import('./src/sandbox/cli.ts').then((m) => m.runSandboxCommand(['--port', '0', '--advance', '4']))"],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    const waitFor = (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(out);
          if (match) {
            child.stdout.off('data', check);
            resolve(match);
          }
        };
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          check();
        });
        child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${out}`)));
        check();
      });
    try {
      const [, url] = await waitFor(/export SOCIALSTREAM_BASE_URL=(\S+) /);
      const count = async () => {
        const { body } = await get(url, '/v1/scrape/forum/subforum?subforum=tick-n10&sort=new');
        return Object.keys(body.data.posts).length;
      };
      expect(await count()).toBe(10);
      child.kill('SIGUSR2');
      await waitFor(/has 4 new records; the sandbox clock reads 2025-11-22T01:00:00.000Z/);
      expect(await count()).toBe(14);
      child.kill('SIGUSR2');
      await waitFor(/has 8 new records; the sandbox clock reads 2025-11-22T02:00:00.000Z/);
      expect(await count()).toBe(18);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
