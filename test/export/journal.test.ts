/**
 * The staging journal: a save resolves only once its own line is on disk, whichever save's write
 * carried it. The credit ledger sends an attempt as soon as its save resolves, so a save that
 * resolved early would let a kill lose the count of an attempt that was sent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshState, loadState, StateJournal } from '../../src/export/journal.ts';
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
