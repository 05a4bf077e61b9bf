/**
 * The staging journal: a save resolves only once its own line is written, whichever save's write
 * carried it (the credit ledger sends an attempt as soon as its save resolves, so a save that
 * resolved early would let a kill lose the count of an attempt that was sent); and a journal whose
 * spool lost bytes the disk had not flushed is rolled back to the last page the spool holds.
 */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportTo, StateDamagedError } from '../../src/export/index.ts';
import { freshState, loadState, StateJournal } from '../../src/export/journal.ts';
import type { Client } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { charged as chargedBy, clientOf } from '../client/helpers.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

describe('StateJournal', () => {
  it('resolves each of many saves made at once only when the file holds what it saved', async () => {
    const path = join(scratchDir(), 'journal.json');
    const state = freshState('forum/subforum', [{ subforum: 'a' }]);
    const journal = StateJournal.start(path, state);
    const seen: number[] = [];
    const saves: Promise<void>[] = [];
    for (let attempt = 1; attempt <= 20; attempt++) {
      state.run.credits = attempt;
      // Read the moment the save resolves: one line a save (the first holds the whole state).
      saves.push(journal.save().then(() => void seen.push(readFileSync(path, 'utf8').split('\n').length - 1 - attempt)));
    }
    await Promise.all(saves);
    await journal.close();
    // Each save, once resolved, found at least its own line on disk.
    expect(seen.every((ahead) => ahead >= 0)).toBe(true);
    expect((await loadState(path))!.run.credits).toBe(20);
  });
});

describe('a journal ahead of its spool (a power loss took spool bytes the disk had not flushed)', () => {
  let sandbox: Sandbox;
  let client: Client;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    client = clientOf(sandbox);
  });
  afterAll(async () => {
    await client.close();
    await sandbox.close();
  });
  const charged = () => chargedBy(sandbox);

  it('rolls back to the last page the spool holds: those after it are bought again, every record once, the attempts kept', async () => {
    const out = join(scratchDir(), 'posts.ndjson');
    const walk = () => client.forum.subforum({ subforum: 'power-loss-n800' });
    const before = charged();
    let taken = 0;
    // A failing transform ends the run with its journal as the pages left it (patch lines, not one whole state).
    const failing = async function* (records: AsyncIterable<unknown>) {
      for await (const record of records) {
        if (++taken > 450) throw new Error('stopped for the test');
        yield record;
      }
    };
    await expect(exportTo(walk(), { out, transform: failing })).rejects.toThrow('stopped for the test');
    const spent = charged() - before;
    const spool = `${out}.spool.ndjson`;
    const staged = readFileSync(spool, 'utf8').split('\n').slice(0, -1);
    const journal = (await loadState(`${out}.checkpoint.json`))!;
    expect(journal.pages).toBeGreaterThanOrEqual(3);
    const perPage = staged.length / journal.pages;
    // The disk kept the journal but only the first page of the spool.
    truncateSync(spool, Buffer.byteLength(staged.slice(0, perPage).join('\n') + '\n'));
    const rolledBack = (await loadState(`${out}.checkpoint.json`, spool))!;
    expect(rolledBack).toMatchObject({ pages: 1, records: perPage, credits: journal.credits, run: { credits: journal.run.credits } });

    const summary = await exportTo(walk(), { out, resume: true });
    expect(summary.complete).toBe(true);
    const ids = readFileSync(out, 'utf8').split('\n').slice(0, -1).map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids).toHaveLength(800);
    expect(new Set(ids).size).toBe(800);
    // The pages after the first were bought again; nothing else was.
    expect(charged() - before).toBe(spent + 800 / perPage - 1);
    expect(summary.exportCredits).toBe(charged() - before);
  });

  it('still refuses a spool that holds none of what the journal vouched for', async () => {
    const out = join(scratchDir(), 'edited.ndjson');
    let taken = 0;
    const failing = async function* (records: AsyncIterable<unknown>) {
      for await (const record of records) {
        if (++taken > 250) throw new Error('stopped for the test');
        yield record;
      }
    };
    await expect(exportTo(client.forum.subforum({ subforum: 'edited-n800' }), { out, transform: failing })).rejects.toThrow('stopped for the test');
    writeFileSync(`${out}.spool.ndjson`, '{"id":"not what was staged"}\n'.repeat(300));
    await expect(exportTo(client.forum.subforum({ subforum: 'edited-n800' }), { out, resume: true })).rejects.toBeInstanceOf(StateDamagedError);
  });
});
