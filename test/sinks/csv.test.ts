import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toCsv } from '../../sinks/index.ts';
import { SinkError } from '../../src/index.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { readCsvWithPython, scratchDir } from './helpers/files.ts';
import { hostileRecords } from './helpers/hostile.ts';
import { asText, leafDifferences, leaves } from './helpers/leaves.ts';
import { csvRecords, pythonCsvRows } from './helpers/read-back.ts';

const dir = scratchDir();

function differences(records: Array<Record<string, unknown>>, rows: Array<Record<string, unknown>>): string[] {
  const back = csvRecords(rows);
  // CSV has one empty field for NULL and '' alike, so empty strings read as absent.
  return records.flatMap((record, i) =>
    leafDifferences(asText(leaves(record, { dropEmptyStrings: true })), asText(leaves(back[i]))).map((d) => `record ${i}: ${d}`),
  );
}

describe('toCsv', () => {
  const records = hostileRecords(6_000);
  const path = join(dir, 'hostile.csv');
  const written = toCsv(records, path);

  it('resolves to the path, the record count and the file size', async () => {
    const result = await written;
    expect(result).toEqual({ path, records: 6_000, bytes: readFileSync(path).length, repaired: 0 });
  });

  it("gives back every leaf of every hostile record when python's csv module reads the file", async () => {
    await written;
    const rows = pythonCsvRows(path);
    expect(rows).toHaveLength(records.length);
    expect(differences(records, rows).slice(0, 10)).toEqual([]);
  });

  it('gives back every leaf of every hostile record when DuckDB reads the file', async () => {
    await written;
    const rows = await query(`SELECT * FROM read_csv(${sqlPath(path)}, header = true, all_varchar = true)`);
    expect(rows).toHaveLength(records.length);
    expect(differences(records, rows).slice(0, 10)).toEqual([]);
  });

  it('writes a header row of dotted, escaped column names ending with _extra', async () => {
    await written;
    const [header] = readCsvWithPython(path);
    expect(header.slice(0, 4)).toEqual(['seq', 'text', 'emptyOrNull', 'big']);
    expect(header).toContain('author.stats.followers');
    expect(header).toContain('dotted\\.key');
    expect(header).toContain('weird.a\\.b');
    expect(header.at(-1)).toBe('_extra');
  });

  it('ends every row with CRLF as RFC 4180 asks', async () => {
    const file = join(dir, 'crlf.csv');
    await toCsv([{ a: 1 }, { a: 2 }], file);
    expect(readFileSync(file, 'utf8')).toBe('a,_extra\r\n1,\r\n2,\r\n');
  });

  it('writes NULL and the empty string alike, as an empty field', async () => {
    const file = join(dir, 'empty.csv');
    await toCsv([{ a: '', b: null, c: 'x' }], file);
    expect(readFileSync(file, 'utf8')).toBe('a,b,c,_extra\r\n,,x,\r\n');
  });

  it('leaves text that starts like a formula unchanged by default', async () => {
    const file = join(dir, 'formula-kept.csv');
    await toCsv([{ f: '=1+2', g: '@sum' }], file);
    expect(readCsvWithPython(file)[1].slice(0, 2)).toEqual(['=1+2', '@sum']);
  });

  it("prefixes ' to text that starts like a formula when escapeFormulae is on", async () => {
    const file = join(dir, 'formula-escaped.csv');
    await toCsv([{ f: '=1+2', g: '@sum', h: 'safe', n: -5 }], file, { escapeFormulae: true });
    expect(readCsvWithPython(file)[1].slice(0, 4)).toEqual(["'=1+2", "'@sum", 'safe', '-5']);
  });

  it('streams explicit columns without sampling and keeps the rest in _extra', async () => {
    const file = join(dir, 'chosen.csv');
    await toCsv([{ id: 1, author: { name: 'n', bio: 'b' } }], file, { columns: ['author.name', 'id'] });
    expect(readCsvWithPython(file)).toEqual([
      ['author.name', 'id', '_extra'],
      ['n', '1', '{"author.bio":"b"}'],
    ]);
  });

  it('rejects a path that does not end in .csv with a TypeError', () => {
    expect(() => toCsv([], join(dir, 'out.txt'))).toThrow(TypeError);
  });

  it("rejects '-' with a TypeError, since only NDJSON goes to stdout", () => {
    expect(() => toCsv([], '-')).toThrow(/must end with \.csv/);
  });

  for (const [where, records] of [
    ['in the sample', [nested(100_000)]],
    ['after the sample', [{ id: 1 }, { id: 2, x: nested(100_000) }]],
  ] as const) {
    it(`stops at a record nested 100,000 levels deep ${where} with a TypeError, not a stack overflow`, async () => {
      const error = await toCsv(records, join(dir, `deep-${where.length}.csv`), { sampleSize: 1 }).catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(SinkError);
      expect((error as SinkError).cause).toBeInstanceOf(TypeError);
      expect((error as SinkError).cause).toMatchObject({ message: expect.stringMatching(/deeper than 1000 levels/) });
    });
  }
});

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}
