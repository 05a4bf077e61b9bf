import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeRecords } from '../../sinks/index.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';

const dir = scratchDir();
const records = [{ id: 1, author: { name: 'a' } }, { id: 2, author: { name: 'b' } }];

describe('writeRecords', () => {
  it.each(['out.ndjson', 'out.jsonl'])('writes NDJSON for %s', async (name) => {
    await writeRecords(records, join(dir, name));
    expect(readFileSync(join(dir, name), 'utf8')).toBe(records.map((r) => JSON.stringify(r) + '\n').join(''));
  });

  it('writes CSV for .csv', async () => {
    await writeRecords(records, join(dir, 'out.csv'));
    expect(readFileSync(join(dir, 'out.csv'), 'utf8')).toBe('id,author.name,_extra\r\n1,a,\r\n2,b,\r\n');
  });

  it('writes Parquet for .parquet, whatever the case of the extension', async () => {
    const path = join(dir, 'OUT.PARQUET');
    const result = await writeRecords(records, path, { rowGroupSize: 1 });
    expect(result.records).toBe(2);
    expect(await query(`SELECT id, author.name AS name FROM ${sqlPath(path)}`)).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
  });

  it('rejects an unknown extension with a TypeError listing the known ones', () => {
    expect(() => writeRecords(records, join(dir, 'out.xlsx'))).toThrow(
      /Cannot tell the format of .*out\.xlsx: the name must end with one of \.ndjson, \.jsonl, \.csv, \.parquet/,
    );
  });

  it('rejects a source that is not iterable with a TypeError', () => {
    expect(() => writeRecords(42 as unknown as Iterable<unknown>, join(dir, 'x.ndjson'))).toThrow(/source must be an AsyncIterable/);
  });
});
