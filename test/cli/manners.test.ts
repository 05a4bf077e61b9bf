/**
 * The CLI used carelessly or attacked: stray characters in the key, a reader that closes the pipe,
 * typos, narrow terminals, spreadsheet formulas, messy `--inputs` files, and a service that echoes
 * the key back in disguise. Each case drives the built CLI as a subprocess.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/operations/table.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { json, testServer, type TestServer } from '../client/helpers.ts';
import { COMMANDS } from '../../src/cli/commands.ts';
import { finished, runCli, runCliWithInput, sandboxEnv, startCli, tempDir } from './helpers.ts';
import { pythonCsvRows } from '../sinks/helpers/read-back.ts';

const KEY = 'sk_live_sandbox_MANNERS_0123456789';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 100_000 }] });
});
afterAll(() => sandbox.close());

/** A test server that answers `/v1/credits` and hands every scrape request to `scrape`. */
function serviceWith(scrape: (request: IncomingMessage, response: ServerResponse) => void): Promise<TestServer> {
  return testServer((request, response) => {
    if (request.url?.startsWith('/v1/credits')) json(response, 200, { credits: 100, subscriptionStatus: 'free', subscriptionId: null });
    else scrape(request, response);
  });
}

function envFor(server: TestServer): NodeJS.ProcessEnv {
  return { ...process.env, SOCIALSTREAM_BASE_URL: server.url, SOCIALSTREAM_API_KEY: KEY };
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

describe('a key with stray characters', () => {
  it('works with the trailing \\r a Windows .env leaves', async () => {
    const result = await runCli(['credits', '--json'], sandboxEnv(sandbox, `${KEY}\r`));
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ credits: 100_000 });
  });

  it('is refused before any request, in one line with exit 2, when it holds a control character', async () => {
    const server = await serviceWith((_request, response) => json(response, 500, {}));
    const result = await runCli(['credits'], { ...envFor(server), SOCIALSTREAM_API_KEY: `sk_live_\u001bsandbox` });
    await server.close();
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual(['socialstream: SOCIALSTREAM_API_KEY holds a control character (U+001B at position 9); copy the key again']);
    expect(server.received).toHaveLength(0);
  });
});

describe('a response nested 100,000 levels deep', () => {
  it('ends the export with the service-failure exit code and a typed message, not a stack overflow', async () => {
    const server = await serviceWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`{"success": true, "data": {"posts": {"0": {"id": "a", "x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}}}`);
    });
    const result = await runCli(['export', 'forum/subforum', 'subforum=x', '--out', join(tempDir(), 'posts.ndjson')], envFor(server));
    await server.close();
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('deeper than 1000 levels');
    expect(result.stderr).not.toMatch(/call stack/);
  });
});

describe('--out - into a reader that stops early', () => {
  it('ends quietly with exit 0 and stops buying pages', async () => {
    const child = startCli(['export', 'forum/subforum', 'subforum=ts-n20000', '--out', '-'], sandboxEnv(sandbox));
    const before = sandbox.requests.charged[KEY] ?? 0;
    const done = finished(child);
    // Like `| head -1`: read one line, then close the pipe.
    await new Promise<void>((resolvePromise) => {
      child.stdout?.once('data', () => {
        child.stdout?.destroy();
        resolvePromise();
      });
    });
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(result.stderr).toContain('until its reader closed it');
    expect((sandbox.requests.charged[KEY] ?? 0) - before).toBeLessThan(200);
  });
});

describe('--version and --help', () => {
  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version'], process.env);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });

  it('--help lists --debug and --version', async () => {
    const result = await runCli(['--help'], process.env);
    expect(result.stdout).toMatch(/^\s+--debug\s+\S/m);
    expect(result.stdout).toMatch(/^\s+socialstream --version\s+\S/m);
  });
});

describe('did you mean', () => {
  const cases: [string, string[], string][] = [
    ['a command', ['exprot'], 'unknown command "exprot" (did you mean "export"?)'],
    ['an operation', ['export', 'forum/subfroum', '--out', '-'], 'unknown operation "forum/subfroum" (did you mean "forum/subforum"?)'],
    ['a flag', ['export', 'forum/subforum', 'subforum=a', '--out', '-', '--max-credit', '3'], 'unknown option --max-credit (did you mean "--max-credits"?)'],
  ];
  for (const [what, args, message] of cases) {
    it(`suggests the nearest name for a mistyped ${what.split(' ')[1]}, with exit 2`, async () => {
      const result = await runCli(args, sandboxEnv(sandbox));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
    });
  }
});

describe('commands that take no arguments', () => {
  it('ops refuses a word after the operation id with exit 2', async () => {
    const result = await runCli(['ops', 'forum/subforum', 'forum'], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ops takes one operation id, got also "forum"');
    expect(result.stdout).toBe('');
  });

  for (const command of ['credits']) {
    it(`${command} refuses an extra argument with exit 2`, async () => {
      const result = await runCli([command, 'forum'], sandboxEnv(sandbox));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${command} takes no arguments, got "forum"`);
      expect(result.stdout).toBe('');
    });
  }
});

describe('singular counts', () => {
  it('an export of one record says "1 record (1 page)" and "1 credit"', async () => {
    const out = join(tempDir(), 'profile.ndjson');
    const result = await runCli(['export', 'shortvideo/profile', 'handle=creator', '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('wrote 1 record (1 page)');
    expect(result.stderr).toContain('1 credit this run');
    expect(result.stderr).not.toMatch(/\b1 (records|pages|credits)\b/);
  });

  it('credits says "1 credit" for a balance of one', async () => {
    const poor = await startSandbox({ port: 0, accounts: [{ apiKey: KEY, credits: 1 }] });
    const result = await runCli(['credits'], sandboxEnv(poor, KEY));
    await poor.close();
    expect(result.stdout).toMatch(/^1 credit · /);
  });
});

describe('the ops table', () => {
  for (const columns of [80, 120]) {
    it(`fits a ${columns}-column terminal and still names every operation`, async () => {
      const result = await runCli(['ops'], { ...process.env, COLUMNS: String(columns) });
      expect(result.code).toBe(0);
      for (const line of lines(result.stdout)) expect(line.length, line).toBeLessThan(columns);
      for (const op of OPERATIONS) {
        expect(result.stdout).toMatch(new RegExp(`^${op.id}( |$)`, 'm'));
        expect(result.stdout).toContain(`(client.${op.group}.${op.method})`);
      }
    });
  }

  it('--wide gives one line per operation, however narrow the terminal', async () => {
    const result = await runCli(['ops', '--wide'], { ...process.env, COLUMNS: '80' });
    expect(lines(result.stdout)).toHaveLength(OPERATIONS.length + 1);
  });
});

describe('the environment named as the CLI user knows it', () => {
  const cases: [string, string | undefined, RegExp][] = [
    ['missing', undefined, /no service address: set SOCIALSTREAM_BASE_URL/],
    ['plain http off loopback', 'http://example.com', /SOCIALSTREAM_BASE_URL must use https/],
    ['not a URL', 'not a url', /SOCIALSTREAM_BASE_URL is not a URL/],
  ];
  for (const [what, value, message] of cases) {
    it(`a base URL ${what} is refused naming SOCIALSTREAM_BASE_URL, not the library's option`, async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, SOCIALSTREAM_API_KEY: KEY, SOCIALSTREAM_BASE_URL: value };
      if (value === undefined) delete env.SOCIALSTREAM_BASE_URL;
      const result = await runCli(['credits'], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/createClient|baseUrl/);
    });
  }
});

describe('sandbox --host 0.0.0.0', () => {
  it('prints a base URL the client accepts', async () => {
    const server = startCli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--credits', '5'], process.env);
    let printed = '';
    server.stdout?.setEncoding('utf8');
    try {
      const url = await new Promise<string>((resolvePromise, reject) => {
        server.stdout?.on('data', (chunk: string) => {
          printed += chunk;
          const match = /export SOCIALSTREAM_BASE_URL=(\S+)/.exec(printed);
          if (match) resolvePromise(match[1]);
        });
        server.once('exit', (code) => reject(new Error(`sandbox exited early with ${code}: ${printed}`)));
      });
      const result = await runCli(['credits', '--json'], { ...process.env, SOCIALSTREAM_BASE_URL: url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox' });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ credits: 5 });
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolvePromise) => server.once('exit', resolvePromise));
    }
  });
});

describe('--csv-escape-formulae', () => {
  const page = { success: true, data: { posts: { 0: { id: 'a', title: '=HYPERLINK("http://evil.example","x")' }, 1: { id: 'b', title: 'plain' } }, after: null } };

  async function exportCsv(extra: string[]): Promise<Record<string, unknown>[]> {
    const server = await serviceWith((_request, response) => json(response, 200, page));
    const out = join(tempDir(), 'posts.csv');
    const result = await runCli(['export', 'forum/subforum', 'subforum=x', '--out', out, ...extra], envFor(server));
    await server.close();
    expect(result.code, result.stderr).toBe(0);
    return pythonCsvRows(out);
  }

  it('is off by default: text that starts like a formula is written as it came', async () => {
    const rows = await exportCsv([]);
    expect(rows.map((row) => row.title)).toEqual(['=HYPERLINK("http://evil.example","x")', 'plain']);
  });

  it("prefixes ' to text that starts like a formula when given", async () => {
    const rows = await exportCsv(['--csv-escape-formulae']);
    expect(rows.map((row) => row.title)).toEqual(['\'=HYPERLINK("http://evil.example","x")', 'plain']);
  });

  it('is refused for an output that is not CSV', async () => {
    const result = await runCli(['export', 'forum/subforum', 'subforum=x', '--out', '-', '--csv-escape-formulae'], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--csv-escape-formulae applies to a .csv output only');
  });

  it('is listed in export --help', async () => {
    const result = await runCli(['export', '--help'], process.env);
    expect(result.stdout).toMatch(/--csv-escape-formulae\s+in a \.csv/);
  });
});

describe('--inputs files', () => {
  function inputsFile(text: string): string {
    const path = join(tempDir(), 'inputs.txt');
    writeFileSync(path, text);
    return path;
  }

  it('walks a repeated line once and says so in the summary', async () => {
    const inputs = inputsFile('subforum=dup-n30\nsubforum=other-n20\n{"subforum": "dup-n30"}\n');
    const out = join(tempDir(), 'posts.ndjson');
    const before = sandbox.requests.charged[KEY] ?? 0;
    const result = await runCli(['export', 'forum/subforum', '--inputs', inputs, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    expect(lines(readFileSync(out, 'utf8'))).toHaveLength(50);
    expect(result.stderr).toContain('1 input line (3) repeated an earlier line and was walked once');
    expect((sandbox.requests.charged[KEY] ?? 0) - before).toBeLessThanOrEqual(2);
  });

  const broken: [string, string, string][] = [
    ['a word that is not key=value', 'subforum=a\noops\n', 'line 2: "oops" is not key=value'],
    ['a line that is not JSON', 'subforum=a\n{"subforum": \n', 'line 2: not valid JSON'],
    ['a parameter given twice', 'subforum=a sort=new subforum=b\n', 'line 1: "subforum" is given twice'],
    ['a parameter given twice in JSON', '{"subforum": "a", "subforum": "b"}\n', 'line 1: "subforum" is given twice'],
    ['an invalid parameter value', 'subforum=a\nsubforum=b sort=sideways\n', 'line 2: '],
  ];
  for (const [what, text, message] of broken) {
    it(`names the file and the line of ${what}, before any request`, async () => {
      const inputs = inputsFile(text);
      const before = sandbox.requests.charged[KEY] ?? 0;
      const result = await runCli(['export', 'forum/subforum', '--inputs', inputs, '--out', join(tempDir(), 'p.ndjson')], sandboxEnv(sandbox));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${inputs} ${message}`);
      expect(sandbox.requests.charged[KEY] ?? 0).toBe(before);
    });
  }

  it('says a missing file does not exist', async () => {
    const path = join(tempDir(), 'nowhere.txt');
    const result = await runCli(['export', 'forum/subforum', '--inputs', path, '--out', '-'], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`cannot read the inputs file ${path}: no such file`);
  });

  it('says a directory is a directory', async () => {
    const path = join(tempDir(), 'folder');
    mkdirSync(path);
    const result = await runCli(['export', 'forum/subforum', '--inputs', path, '--out', '-'], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`cannot read the inputs file ${path}: it is a directory`);
  });
});

describe('the key echoed back by a hostile service', () => {
  const disguises: [string, string][] = [
    ['upper-cased', KEY.toUpperCase()],
    ['base64-encoded', Buffer.from(`key=${KEY}`).toString('base64')],
  ];
  for (const [what, echoed] of disguises) {
    it(`never reaches stderr ${what} in an error body`, async () => {
      const server = await serviceWith((_request, response) => json(response, 400, { success: false, error: `Invalid value for subforum: ${echoed}` }));
      const result = await runCli(['export', 'forum/subforum', 'subforum=x', '--out', '-'], envFor(server));
      await server.close();
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('[redacted]');
      expect(result.stderr).not.toContain(echoed);
    });
  }

  it('never reaches stderr inside a cursor, and a cursor is shown only as a short prefix', async () => {
    const cursor = `${KEY}${'x'.repeat(5000)}`;
    const server = await serviceWith((_request, response) => json(response, 200, { success: true, data: { posts: { 0: { id: 'a' } }, after: cursor } }));
    const result = await runCli(['export', 'forum/subforum', 'subforum=x', '--out', '-'], envFor(server));
    await server.close();
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('continuation value that holds the API key');
    expect(result.stderr).not.toContain(KEY);
    expect(result.stderr).not.toContain('x'.repeat(20));
  });
});

describe('-h and --help', () => {
  // From the CLI's own list, so a command or subcommand added later is covered without a word here.
  const commands = Object.entries(COMMANDS).flatMap(([name, entry]) => [[name], ...Object.keys(entry.subcommands ?? {}).map((sub) => [name, sub])]);

  it('every command and subcommand answers both with exit 0, its usage, options and an example', async () => {
    for (const words of commands) {
      const [short, long] = await Promise.all([runCli([...words, '-h'], process.env), runCli([...words, '--help'], process.env)]);
      for (const result of [short, long]) {
        expect(result.code, `${words.join(' ')}: ${result.stderr}`).toBe(0);
        expect(result.stdout).toMatch(new RegExp(`^usage: socialstream ${words.join(' ')}`));
        expect(result.stdout).toMatch(/\noptions:\n[^]*\nexamples:\n {2}socialstream \S/);
      }
      expect(short.stdout).toBe(long.stdout);
    }
  });

  it('-h after an operation and its parameters prints the help of export', async () => {
    const result = await runCli(['export', 'forum/subforum', 'subforum=a', '-h'], process.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^usage: socialstream export /);
  });

  it('help <command> prints what <command> --help prints', async () => {
    const [help, flag] = await Promise.all([runCli(['help', 'export'], process.env), runCli(['export', '--help'], process.env)]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(flag.stdout);
  });

  it('help dataset info prints the help of the subcommand', async () => {
    const result = await runCli(['help', 'dataset', 'info'], process.env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: socialstream dataset info DIR/);
  });
});

describe('ops <op-id>', () => {
  it('prints each parameter with whether it is required and its values, the paging, the record key and the cost', async () => {
    const result = await runCli(['ops', 'forum/subforum'], process.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ +subforum +yes +string$/m);
    expect(result.stdout).toMatch(/^ +sort +no +best\|hot\|new\|top\|rising$/m);
    expect(result.stdout).toMatch(/^paging: +sends after = the page's data\.after/m);
    expect(result.stdout).toMatch(/^record key: +id /m);
    expect(result.stdout).toMatch(/^cost: +1 credit a page/m);
  });
});

describe('--inputs -', () => {
  it('reads the parameter sets from standard input', async () => {
    const out = join(tempDir(), 'posts.ndjson');
    const result = await runCliWithInput(['export', 'forum/subforum', '--inputs', '-', '--out', out], sandboxEnv(sandbox), 'subforum=stdin-n30\n{"subforum": "stdin2-n20"}\n');
    expect(result.code, result.stderr).toBe(0);
    expect(lines(readFileSync(out, 'utf8'))).toHaveLength(50);
  });
});

describe('two things written to stdout', () => {
  it('--out - with --json is refused with exit 2 in one line, before any request', async () => {
    const before = sandbox.requests.charged[KEY] ?? 0;
    const result = await runCli(['export', 'forum/subforum', 'subforum=a', '--out', '-', '--json'], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toContain('--json prints the summary on stdout, where --out - writes the records');
    expect(result.stdout).toBe('');
    expect(sandbox.requests.charged[KEY] ?? 0).toBe(before);
  });

  it('ops --json with --wide is refused with exit 2', async () => {
    const result = await runCli(['ops', '--json', '--wide'], process.env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  });
});

describe('did you mean, for the names people shorten or misspell', () => {
  const cases: [string, string[], string][] = [
    ['an operation id without its platform', ['export', 'subforum', 'subforum=a', '--out', '-'], 'unknown operation "subforum" (did you mean "forum/subforum"?)'],
    ['a misspelt parameter name', ['export', 'forum/subforum', 'subforum=a', 'sortt=new', '--out', '-'], 'unknown parameter sortt (did you mean sort?'],
  ];
  for (const [what, args, message] of cases) {
    it(`suggests the name meant for ${what}, with exit 2`, async () => {
      const result = await runCli(args, sandboxEnv(sandbox));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
    });
  }
});
