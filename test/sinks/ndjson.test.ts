import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromNdjson, partialOf, toNdjson, toParquet } from '../../sinks/index.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';
import { hostileRecords } from './helpers/hostile.ts';

const dir = scratchDir();

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

describe('toNdjson', () => {
  const records = hostileRecords(6_000);
  const path = join(dir, 'hostile.ndjson');
  const written = toNdjson(records, path);

  it('writes one line of JSON per record and reports the count and size', async () => {
    const result = await written;
    const text = readFileSync(path, 'utf8');
    expect(result).toEqual({ path, records: 6_000, bytes: Buffer.byteLength(text), repaired: 0 });
    expect(text.split('\n')).toHaveLength(6_001);
  });

  it('reads back with fromNdjson as records equal to the originals', async () => {
    await written;
    expect(await collect(fromNdjson(path))).toEqual(records);
  });

  it('reads back with DuckDB read_json, row for row', async () => {
    await written;
    const rows = await query(`SELECT seq, text, big FROM read_json(${sqlPath(path)}, format = 'newline_delimited') ORDER BY seq`);
    expect(rows).toEqual(records.map(({ seq, text, big }) => ({ seq, text, big })));
  });

  it('accepts the .jsonl extension', async () => {
    const file = join(dir, 'x.jsonl');
    await toNdjson([{ a: 1 }], file);
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n');
  });

  it("writes to stdout when the path is '-'", () => {
    const script = `import { toNdjson } from './sinks/index.ts'; await toNdjson([{ a: 1 }, { b: 'two' }], '-');`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out).toBe('{"a":1}\n{"b":"two"}\n');
  });
});

describe('fromNdjson', () => {
  it('skips blank lines', async () => {
    const file = join(dir, 'blank-lines.ndjson');
    writeFileSync(file, '{"a":1}\n\n{"a":2}\n');
    expect(await collect(fromNdjson(file))).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('fails with a SyntaxError naming the file and record when a line is not JSON', async () => {
    const file = join(dir, 'corrupt.ndjson');
    writeFileSync(file, '{"a":1}\n{"a":\n');
    await expect(collect(fromNdjson(file))).rejects.toThrow(SyntaxError);
    await expect(collect(fromNdjson(file))).rejects.toThrow(/corrupt\.ndjson: record 2 is not valid JSON/);
  });

  it('reads lines that run across its 1 MB reads whole, characters split between reads included, and a last line without a newline', async () => {
    const file = join(dir, 'long-lines.ndjson');
    // 3-byte characters put chunk boundaries inside a character; one line spans three reads.
    const long = '€'.repeat(1_200_000);
    const records = [{ a: 1 }, { text: long }, { a: 2 }, { text: `é${long}` }, { a: 3 }];
    writeFileSync(file, `${records.map((record) => JSON.stringify(record)).join('\n')}`);
    const read = await collect(fromNdjson(file));
    expect(read.length).toBe(records.length);
    expect(read).toEqual(records);
  });

  it('counts the record that is not JSON past a long line', async () => {
    const file = join(dir, 'corrupt-after-long.ndjson');
    writeFileSync(file, `{"a":1}\n${JSON.stringify({ text: 'x'.repeat(3_000_000) })}\n\n{"a":\n`);
    await expect(collect(fromNdjson(file))).rejects.toThrow(/corrupt-after-long\.ndjson: record 3 is not valid JSON/);
  });

  it('gives a sink every record before a line that is not JSON, then fails naming that line', async () => {
    // A sink reads fromNdjson a chunk of the file at a time: the records of the chunk before the bad line still arrive.
    const file = join(dir, 'corrupt-for-sink.ndjson');
    const good = Array.from({ length: 2_500 }, (_, seq) => ({ seq, text: `row ${seq}` }));
    writeFileSync(file, `${good.map((record) => JSON.stringify(record)).join('\n')}\n{"seq":\n{"seq":2501}\n`);
    for (const [name, sink] of [['ndjson', toNdjson], ['parquet', toParquet]] as const) {
      const out = join(dir, `from-corrupt.${name}`);
      const failure = await sink(fromNdjson(file), out).then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(SyntaxError);
      expect(String(failure)).toMatch(/corrupt-for-sink\.ndjson: record 2501 is not valid JSON/);
      expect(partialOf(failure)?.records).toBe(2_500);
      const kept = await query(`SELECT count(*) AS n, max(seq) AS last FROM ${sqlPath(out)}`);
      expect(kept).toEqual([{ n: 2_500, last: 2_499 }]);
    }
  });

  it('gives a sink every record of a file larger than one read, in order', async () => {
    const file = join(dir, 'many-chunks.ndjson');
    const records = Array.from({ length: 9_000 }, (_, seq) => ({ seq, pad: 'p'.repeat(300) }));
    writeFileSync(file, `${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
    const out = join(dir, 'many-chunks-copy.ndjson');
    expect((await toNdjson(fromNdjson(file), out)).records).toBe(9_000);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(file, 'utf8'));
  });

  it('fails with the file system error when the file does not exist', async () => {
    await expect(collect(fromNdjson(join(dir, 'missing.ndjson')))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
