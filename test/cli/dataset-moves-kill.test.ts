/**
 * A publish that moves a record (issue 38, item 1), killed -9 between its renames, as a child process
 * (`test/export/helpers/records-killed-at.ts`, as its second part is about to go into place): the new
 * version is in its new partition and the old one not yet removed from its old one. A reader sees the
 * record twice for that moment, never misses it, and the next run finishes the journal: each key
 * once, the later fetch kept.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closeServed, recordsIntoDataset as toDataset } from '../export/helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { PART_PLACED } from '../helpers/kill-at-rename.ts';

afterAll(closeServed);

const root = scratchDir();
const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true)`;
const OCT_30 = Date.UTC(2025, 9, 30) / 1000;
const NOV_2 = Date.UTC(2025, 10, 2) / 1000;

const byKey = (dir: string) => query(`SELECT id, count(*) AS rows, max(title) AS title, max(_date) AS _date FROM ${table(dir)} GROUP BY id ORDER BY id`);

describe('a publish that moves a record, killed -9 between its renames', () => {
  it('shows a reader the record twice, none missing, and the next run leaves each key once with the later fetch', async () => {
    const dir = join(root, 'moved-killed');
    await toDataset(
      [
        { id: 'oct', created_utc: OCT_30 + 60, title: 'stays' },
        { id: 'nov', created_utc: NOV_2 + 60, title: 'stays' },
        { id: 'moved', created_utc: OCT_30, title: 'first' },
      ],
      dir,
      { params: { subforum: 'a' } },
    );
    // Another walk fetches the post rescheduled to 2 Nov: its publish places November's part, then is killed before October's.
    const input = join(root, 'moved-killed-input');
    writeFileSync(`${input}.records.json`, JSON.stringify([{ id: 'moved', created_utc: NOV_2, title: 'later' }]));
    writeFileSync(`${input}.options.json`, JSON.stringify({ params: { subforum: 'b' }, writer: 'walk-b' }));
    const helper = join(import.meta.dirname, '../export/helpers/records-killed-at.ts');
    // Killed as its second part is about to go into place: one part is.
    const child = spawnSync(process.execPath, ['--import', 'tsx', helper, 'before', PART_PLACED, '2', `${input}.records.json`, dir, `${input}.options.json`], { encoding: 'utf8' });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    expect(await byKey(dir)).toEqual([
      { id: 'moved', rows: 2, title: 'later', _date: '2025-11' },
      { id: 'nov', rows: 1, title: 'stays', _date: '2025-11' },
      { id: 'oct', rows: 1, title: 'stays', _date: '2025-10' },
    ]);

    await toDataset([{ id: 'new', created_utc: NOV_2 + 120, title: 'new' }], dir, { params: { subforum: 'c' }, writer: 'walk-c' });
    expect(await byKey(dir)).toEqual([
      { id: 'moved', rows: 1, title: 'later', _date: '2025-11' },
      { id: 'new', rows: 1, title: 'new', _date: '2025-11' },
      { id: 'nov', rows: 1, title: 'stays', _date: '2025-11' },
      { id: 'oct', rows: 1, title: 'stays', _date: '2025-10' },
    ]);
  });
});
