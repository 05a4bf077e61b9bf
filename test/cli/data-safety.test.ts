import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadState, StateJournal } from '../../src/export/journal.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { finished, runCli, sandboxEnv, startCli, tempDir, waitFor } from './helpers.ts';
import { readCsvWithPython, readNdjson } from './readers.ts';

// 230 trimmed posts, 25 a page: 10 pages.
const SHORT = ['export', 'forum/subforum', 'subforum=safety-n230', 'trim=true'];
// 2,000 posts, slowed down: long enough to start a second export while the first runs.
const LONG = ['export', 'forum/subforum', 'subforum=safety-n2000', 'trim=true'];

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, latencyMs: 8, accounts: [{ apiKey: 'sk_live_sandbox_safety', credits: 100_000 }] });
});
afterAll(() => sandbox.close());

/** A sandbox of its own with a small balance, so an export stops half-way with a 402. */
async function poorAccount(credits: number): Promise<{ service: Sandbox; env: NodeJS.ProcessEnv }> {
  const key = 'sk_live_sandbox_poor';
  const service = await startSandbox({ port: 0, accounts: [{ apiKey: key, credits }] });
  return { service, env: sandboxEnv(service, key) };
}

describe('one writer per output', () => {
  it('refuses a second export to the same output at once, in one line naming the running pid, with or without --resume', async () => {
    // Slow enough that the first export is still running when the second ones have started and ended.
    const slow = await startSandbox({ port: 0, latencyMs: 150 });
    try {
      const out = join(tempDir(), 'shared.ndjson');
      const env = sandboxEnv(slow);
      const first = startCli([...LONG, '--out', out], env);
      const done = finished(first);
      await waitFor(`${out}.checkpoint.json`);
      const seconds = await Promise.all([runCli([...SHORT, '--out', out], env), runCli([...LONG, '--out', out, '--resume'], env)]);
      first.kill('SIGINT');
      for (const second of seconds) {
        expect(second.code).toBe(2);
        expect(second.stderr.trimEnd().split('\n')).toHaveLength(1);
        expect(second.stderr).toContain(`another export (pid ${first.pid}) is writing ${out}`);
      }
      expect((await done).code).toBe(130);
      // One writer: what the file holds is the first export's records, each once.
      const records = readNdjson(out);
      const ids = records.map((record) => record.id);
      expect(ids.length).toBeGreaterThan(0);
      expect(new Set(ids).size).toBe(ids.length);
      expect(new Set(records.map((record) => record.subforum))).toEqual(new Set(['safety-n2000']));
      expect(existsSync(`${out}.lock`)).toBe(false);
    } finally {
      await slow.close();
    }
  }, 60_000);

  it('takes over a lock left by a process that is gone', async () => {
    const out = join(tempDir(), 'stale.ndjson');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(`${out}.lock`, `${gone.stdout}\n`);
    const result = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    expect(readNdjson(out)).toHaveLength(230);
    expect(existsSync(`${out}.lock`)).toBe(false);
  });
});

describe('a failed re-run', () => {
  it('leaves a good NDJSON or CSV output untouched when the service cannot be reached, and nothing else behind', async () => {
    const closed = await startSandbox({ port: 0 });
    await closed.close();
    for (const format of ['ndjson', 'csv']) {
      const dir = tempDir();
      const out = join(dir, `posts.${format}`);
      const good = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
      expect(good.code, good.stderr).toBe(0);
      const before = readFileSync(out);
      const failed = await runCli([...SHORT, '--out', out], { ...sandboxEnv(sandbox), SOCIALSTREAM_BASE_URL: closed.url });
      expect(failed.code).toBe(5);
      expect(readFileSync(out)).toEqual(before);
      expect(readdirSync(dir).sort()).toEqual([`posts.${format}`, `posts.${format}.export.json`]);
    }
  }, 120_000);
});

describe('a run that never got a page', () => {
  it('leaves nothing behind after a refused key, and a plain re-run works', async () => {
    const dir = tempDir();
    const out = join(dir, 'posts.ndjson');
    const refused = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox, 'sk_live_sandbox_unknown'));
    expect(refused.code).toBe(3);
    expect(readdirSync(dir)).toEqual([]);
    const plain = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
    expect(plain.code, plain.stderr).toBe(0);
    expect(readNdjson(out)).toHaveLength(230);
  });
});

describe('side files', () => {
  it('never follow a link planted at the spool name: the link is replaced and its target untouched', async () => {
    const dir = tempDir();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const out = join(dir, 'posts.ndjson');
    symlinkSync(victim, `${out}.spool.ndjson`);
    const result = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readNdjson(out)).toHaveLength(230);
  });

  it('refuse a link planted at the checkpoint name, naming it, and leave its target untouched', async () => {
    const dir = tempDir();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const out = join(dir, 'posts.ndjson');
    symlinkSync(victim, `${out}.checkpoint.json`);
    const result = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${out}.checkpoint.json is a symbolic link`);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('replace an output that is a link with a file, never writing through it', async () => {
    const dir = tempDir();
    const victim = join(dir, 'victim.csv');
    writeFileSync(victim, 'precious\n');
    const out = join(dir, 'posts.csv');
    symlinkSync(victim, out);
    const result = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(out).isSymbolicLink()).toBe(false);
    expect(readCsvWithPython(out)).toHaveLength(230);
  });
});

describe('state changed by hand', () => {
  it('refuses a checkpoint edited to call an unfinished walk done, in one line naming it and what to do', async () => {
    const { service, env } = await poorAccount(3);
    try {
      const out = join(tempDir(), 'edited.ndjson');
      expect((await runCli([...SHORT, '--out', out], env)).code).toBe(4);
      const checkpoint = `${out}.checkpoint.json`;
      writeFileSync(checkpoint, readFileSync(checkpoint, 'utf8').replace('"done":false', '"done":true'));
      service.purchase('sk_live_sandbox_poor', 100);
      const resumed = await runCli([...SHORT, '--out', out, '--resume'], env);
      expect(resumed.code).toBe(2);
      expect(resumed.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(resumed.stderr).toContain(`${checkpoint} was changed after it was written`);
      expect(resumed.stderr).toContain(`restart the export (--restart) to discard ${checkpoint} and start over`);
      expect(resumed.stderr).not.toContain(`delete ${checkpoint} and ${out}.spool.ndjson to start over`);
      expect(service.requests.charged['sk_live_sandbox_poor']).toBe(3);
    } finally {
      await service.close();
    }
  });

  it('refuses a spool whose records were changed', async () => {
    const { service, env } = await poorAccount(3);
    try {
      const out = join(tempDir(), 'spool.ndjson');
      expect((await runCli([...SHORT, '--out', out], env)).code).toBe(4);
      const spool = `${out}.spool.ndjson`;
      writeFileSync(spool, readFileSync(spool, 'utf8').replace('"id":"', '"id":"x'));
      const resumed = await runCli([...SHORT, '--out', out, '--resume'], env);
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toContain(`${spool} does not hold the records its checkpoint vouches for`);
    } finally {
      await service.close();
    }
  });

  it('refuses a checkpoint that says every page is in a spool that is gone', async () => {
    const { service, env } = await poorAccount(3);
    try {
      const out = join(tempDir(), 'gone.csv');
      expect((await runCli([...SHORT, '--out', out], env)).code).toBe(4);
      const checkpoint = `${out}.checkpoint.json`;
      const journal = StateJournal.start(checkpoint, { ...(await loadState(checkpoint))!, finished: true });
      await journal.save();
      await journal.close();
      rmSync(`${out}.spool.ndjson`);
      const resumed = await runCli([...SHORT, '--out', out, '--resume'], env);
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toContain(`${out}.spool.ndjson is missing`);
      expect(readCsvWithPython(out)).toHaveLength(75);
    } finally {
      await service.close();
    }
  });

  it('ignores a last checkpoint line cut short by a crash', async () => {
    const { service, env } = await poorAccount(3);
    try {
      const out = join(tempDir(), 'torn.ndjson');
      expect((await runCli([...SHORT, '--out', out], env)).code).toBe(4);
      appendFileSync(`${out}.checkpoint.json`, '{"entry":{"totals":{"spool":');
      service.purchase('sk_live_sandbox_poor', 100);
      const resumed = await runCli([...SHORT, '--out', out, '--resume'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(readNdjson(out).map((record) => record.id)).toEqual([...new Set(readNdjson(out).map((record) => record.id))]);
      expect(readNdjson(out)).toHaveLength(230);
    } finally {
      await service.close();
    }
  });
});

describe('output paths that cannot work', () => {
  it('are refused before any credit is spent, naming the path and the reason', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'folder.ndjson'));
    const requests = sandbox.requests.total;
    const cases: [string, RegExp][] = [
      [join(dir, 'folder.ndjson'), /that is a directory, not a file/],
      ['/dev/null/x.ndjson', /\/dev\/null is not a folder/],
      [join(dir, 'posts.xlsx'), /the file name must end in \.ndjson, \.jsonl, \.csv or \.parquet/],
    ];
    for (const [out, reason] of cases) {
      const result = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
      expect(result.code, out).toBe(2);
      expect(result.stderr).toContain(out);
      expect(result.stderr).toMatch(reason);
      expect(result.stderr).not.toMatch(/checkpoint|spool|lock/);
    }
    expect(readdirSync(dir)).toEqual(['folder.ndjson']);
    expect(sandbox.requests.total).toBe(requests);
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a folder it cannot write to (a read-only mount), naming it', async () => {
    const dir = tempDir();
    const readOnly = join(dir, 'ro');
    mkdirSync(readOnly);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', readOnly]).status).toBe(0);
    try {
      const out = join(readOnly, 'posts.ndjson');
      const requests = sandbox.requests.total;
      const result = await runCli([...SHORT, '--out', out], sandboxEnv(sandbox));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${out}: cannot write there: ${readOnly} is on a read-only file system`);
      expect(sandbox.requests.total).toBe(requests);
    } finally {
      spawnSync('umount', [readOnly]);
    }
  });
});
