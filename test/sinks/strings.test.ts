/**
 * Every string survives or is reported (issue 20, item 6): NUL is kept in CSV, and a lone surrogate
 * is written as U+FFFD by all three sinks, counted in `repaired`, in files DuckDB reads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { partialOf, toCsv, toNdjson, toParquet, writeRecords } from '../../sinks/index.ts';
import { closeServed, recordsIntoDataset as toDataset } from '../export/helpers/served-records.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { readCsvWithPython, scratchDir } from './helpers/files.ts';

const dir = scratchDir();
const FFFD = '\uFFFD';

/** How DuckDB reads each format, every column as text so the three compare alike. */
function reader(path: string): string {
  if (path.endsWith('.ndjson')) return `read_json(${sqlPath(path)}, format = 'newline_delimited')`;
  if (path.endsWith('.csv')) return `read_csv(${sqlPath(path)}, header = true, all_varchar = true)`;
  return `read_parquet(${sqlPath(path)})`;
}

describe('NUL in CSV', () => {
  it("keeps a NUL inside a quoted field, as python's csv module and DuckDB read it back", async () => {
    const path = join(dir, 'nul.csv');
    const result = await toCsv([{ id: 1, text: 'a\u0000b', plain: 'c' }], path);
    expect(result.records).toBe(1);
    expect(readFileSync(path, 'utf8')).toBe('id,text,plain,_extra\r\n1,"a\u0000b",c,\r\n');
    expect(readCsvWithPython(path)[1]).toEqual(['1', 'a\u0000b', 'c', '']);
    expect(await query(`SELECT text FROM ${reader(path)}`)).toEqual([{ text: 'a\u0000b' }]);
  });
});

describe('lone surrogates', () => {
  // A string column, a JSON cell (an array), a key inside JSON, and an overflow value: 4 strings a
  // record. Parquet's nested layout holds `deep`'s key once, as a struct field's name: 6 strings.
  const record = (i: number) => ({ id: i, text: `a\ud800b${i}`, tags: ['ok', '\udc00'], deep: [{ 'k\udbff': 1 }] });
  const late = { id: 99, text: 'fine', tags: [], deep: [], late: 'x\udfff' };
  const records = [record(1), record(2), late];

  for (const ext of ['ndjson', 'csv', 'parquet'] as const) {
    it(`writes U+FFFD in their place in ${ext}, counts each string repaired, and DuckDB reads the file`, async () => {
      const path = join(dir, `lone.${ext}`);
      const result = await writeRecords(records, path, { sampleSize: 2, compression: 'none' });
      expect(result.repaired).toBe(ext === 'parquet' ? 6 : 7);
      const rows = await query(`SELECT CAST(id AS VARCHAR) AS id, text, CAST(tags AS VARCHAR) AS tags FROM ${reader(path)} ORDER BY id`);
      expect(rows.map((row) => row.text)).toEqual([`a${FFFD}b1`, `a${FFFD}b2`, 'fine']);
      expect(String(rows[0].tags)).toContain(FFFD);
      const bytes = readFileSync(path);
      // No format hides the escape or a raw surrogate anywhere: every repaired string is U+FFFD in UTF-8.
      expect(bytes.toString('latin1')).not.toMatch(/\\ud[89a-f]/i);
      expect(bytes.toString('utf8').split(FFFD).length - 1).toBeGreaterThanOrEqual(ext === 'parquet' ? 4 : 7);
    });
  }

  it('repairs a key that becomes a column once, in the header, and DuckDB reads the column', async () => {
    const path = join(dir, 'key.parquet');
    const result = await toParquet([{ 'bad\ud800': 1 }, { 'bad\ud800': 2 }], path);
    expect(result.repaired).toBe(1);
    expect(await query(`SELECT "bad${FFFD}" AS v FROM ${reader(path)} ORDER BY v`)).toEqual([{ v: 1 }, { v: 2 }]);
  });

  it('counts nothing and changes nothing in well-formed text: emoji pairs, and a literal backslash-u escape', async () => {
    const text = 'emoji 😀 and the six characters \\ud800';
    for (const ext of ['ndjson', 'csv', 'parquet'] as const) {
      const path = join(dir, `clean.${ext}`);
      const result = await writeRecords([{ id: 1, text, list: [text] }], path);
      expect([ext, result.repaired]).toEqual([ext, 0]);
      expect(await query(`SELECT text FROM ${reader(path)}`)).toEqual([{ text }]);
    }
  });

  it('tells the count of a partial file when the source fails', async () => {
    const path = join(dir, 'partial.ndjson');
    const failing = async function* () {
      yield { text: '\ud800' };
      throw new Error('upstream went away');
    };
    const error = await toNdjson(failing(), path).catch((failure: unknown) => failure);
    expect(partialOf(error)).toMatchObject({ records: 1, repaired: 1 });
  });
});

describe('lone surrogates in a dataset', () => {
  afterAll(closeServed);
  for (const format of ['parquet', 'ndjson', 'csv'] as const) {
    it(`repairs them in ${format} parts, counts this run's strings in the summary, and DuckDB reads the dataset`, async () => {
      const dataset = join(dir, `dataset-${format}`);
      const options = { operation: 'forum/subforum', params: { subforum: 'lone' }, format } as const;
      const first = await toDataset([{ id: 'a', created_utc: 1_700_000_000, title: 'x\ud800' }], dataset, options);
      expect(first.repaired).toBe(1);
      // The second run merges into the same part: the old row is read back already repaired.
      const second = await toDataset([{ id: 'b', created_utc: 1_700_000_100, title: 'fine' }], dataset, options);
      expect(second.repaired).toBe(0);
      const glob = sqlPath(`${dataset}/**/*.${format}`);
      const read = format === 'parquet' ? `read_parquet(${glob}` : format === 'csv' ? `read_csv(${glob}, all_varchar = true` : `read_json(${glob}, format = 'newline_delimited'`;
      expect(await query(`SELECT id, title FROM ${read}, hive_partitioning = true, union_by_name = true) ORDER BY id`)).toEqual([
        { id: 'a', title: `x${FFFD}` },
        { id: 'b', title: 'fine' },
      ]);
    });
  }
});
