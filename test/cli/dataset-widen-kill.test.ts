/**
 * The widening rewrite killed -9 mid-partition (issue 39, item 2; docs/datasets.md "Stable
 * schema"), as a child process (`test/export/helpers/records-killed-at.ts`): the run that widened
 * `score` is killed just after the first rewritten part is renamed into place, its journal pending
 * and the next month not begun. A reader still reads one table; the next run finishes the partition
 * from the journal and rewrites the rest, so every part holds the widened type.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, describe, expect, it } from 'vitest';
import { closeServed, recordsIntoDataset } from '../export/helpers/served-records.ts';
import { queryJS, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

afterAll(closeServed);

const root = scratchDir();
/** 2025-09-04, 2025-10-09 and 2025-11-21, in seconds: three months, three partitions. */
const SEPTEMBER = 1_757_000_000;
const OCTOBER = 1_760_000_000;
const NOVEMBER = 1_763_700_000;

const scores = (dir: string) => queryJS(`SELECT id, score FROM read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true, union_by_name = true) ORDER BY id`);

/** Each part's type of `score`, as arrow-rs reads the part alone, in path order. */
function partTypes(dir: string): string[] {
  const folder = join(dir, 'forum/subforum');
  const parts = (readdirSync(folder, { recursive: true }) as string[]).filter((name) => name.endsWith('.parquet')).sort();
  return parts.map((name) => String(tableFromIPC(readParquet(new Uint8Array(readFileSync(join(folder, name)))).intoIPCStream()).schema.fields.find((field) => field.name === 'score')?.type));
}

describe('a widening rewrite killed -9 in its first partition', () => {
  it('leaves one table to a reader, and the next run rewrites every part to the widened type', async () => {
    const dir = join(root, 'widen-killed');
    await recordsIntoDataset(
      [
        { id: 'a1', created_utc: SEPTEMBER, score: 3 },
        { id: 'b1', created_utc: OCTOBER, score: 5 },
      ],
      dir,
      { params: { subforum: 'first' } },
    );
    const input = join(root, 'widen-killed-input');
    writeFileSync(`${input}.records.json`, JSON.stringify([{ id: 'c1', created_utc: NOVEMBER, score: 0.5 }]));
    writeFileSync(`${input}.options.json`, JSON.stringify({ params: { subforum: 'second' } }));
    const helper = join(import.meta.dirname, '../export/helpers/records-killed-at.ts');
    // September's rewritten part is the first part renamed into September after run 1: the rewrite's.
    const child = spawnSync(process.execPath, ['--import', 'tsx', helper, 'after', '_date=2025-09/part-[^/]+\\.parquet$', '1', `${input}.records.json`, dir, `${input}.options.json`], {
      encoding: 'utf8',
    });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    const meta = join(dir, '_dataset/forum__subforum');
    expect(existsSync(join(meta, 'compact.json'))).toBe(true);
    expect(partTypes(dir)).toEqual(['Float64', 'Int64', 'Float64']);
    expect(await scores(dir)).toEqual([
      { id: 'a1', score: 3 },
      { id: 'b1', score: 5 },
      { id: 'c1', score: 0.5 },
    ]);

    await recordsIntoDataset([{ id: 'c2', created_utc: NOVEMBER + 60, score: 0.25 }], dir, { params: { subforum: 'third' } });
    expect(partTypes(dir)).toEqual(['Float64', 'Float64', 'Float64']);
    expect(await scores(dir)).toEqual([
      { id: 'a1', score: 3 },
      { id: 'b1', score: 5 },
      { id: 'c1', score: 0.5 },
      { id: 'c2', score: 0.25 },
    ]);
    expect(existsSync(join(meta, 'widening.json'))).toBe(false);
  });
});
