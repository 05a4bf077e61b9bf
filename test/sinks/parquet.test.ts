import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toParquet } from '../../sinks/index.ts';
import { RowGroupCells } from '../../sinks/parquet-cells.ts';
import { encodeRowGroupOffThread, stopEncoderWorker } from '../../sinks/parquet-encoder.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';
import { CONFLICT_AT, hostileRecords, LATE_FIELD_AT } from './helpers/hostile.ts';
import { leafDifferences, leaves } from './helpers/leaves.ts';
import { parquetRecords } from './helpers/read-back.ts';

const dir = scratchDir();

async function columnTypes(path: string): Promise<Record<string, string>> {
  const rows = await query(`DESCRIBE SELECT * FROM ${sqlPath(path)}`);
  return Object.fromEntries(rows.map((row) => [row.column_name as string, row.column_type as string]));
}

describe('toParquet', () => {
  const records = hostileRecords(6_000);
  const path = join(dir, 'hostile.parquet');
  const written = toParquet(records, path, { rowGroupSize: 1_000, layout: 'flat' });

  it('resolves to the path, the record count and the file size', async () => {
    const result = await written;
    expect(result.path).toBe(path);
    expect(result.records).toBe(6_000);
    const [{ size }] = await query(`SELECT sum(total_compressed_size) > 0 AS size FROM parquet_metadata(${sqlPath(path)})`);
    expect(size).toBe(true);
    expect(result.bytes).toBeGreaterThan(1000);
  });

  it('gives back every leaf of every hostile record when DuckDB reads the file', async () => {
    await written;
    const back = await parquetRecords(path);
    expect(back).toHaveLength(records.length);
    // `mixed` and `conflict` hold numbers and text: string columns, their numbers the text of their digits (docs/types.md).
    const typed = (record: Record<string, unknown>) => ({ ...record, mixed: String(record.mixed), conflict: String(record.conflict) });
    const differences = records.flatMap((record, i) => leafDifferences(leaves(typed(record)), leaves(back[i])).map((d) => `record ${i}: ${d}`));
    expect(differences.slice(0, 10)).toEqual([]);
  });

  it('types columns as DuckDB reads them naturally', async () => {
    await written;
    const types = await columnTypes(path);
    expect(types).toMatchObject({
      seq: 'BIGINT',
      ratio: 'DOUBLE',
      flag: 'BOOLEAN',
      when: 'TIMESTAMP',
      text: 'VARCHAR',
      big: 'VARCHAR',
      'author.name': 'VARCHAR',
      'author.stats.followers': 'BIGINT',
      'author.stats.deep': 'VARCHAR',
      tags: 'VARCHAR',
      keyed: 'VARCHAR',
      'dotted\\.key': 'BIGINT',
      'weird.a\\.b': 'BIGINT',
      mixed: 'VARCHAR',
      _extra: 'VARCHAR',
    });
  });

  it('keeps integers beyond 2^53 that arrive as strings as the same strings', async () => {
    await written;
    const rows = await query(`SELECT big FROM ${sqlPath(path)} WHERE seq = 5999`);
    expect(rows[0].big).toBe('9007199254746991');
  });

  it('gives a field first seen after the sample its columns, NULL in the rows before', async () => {
    await written;
    const rows = await query(`SELECT "late.field" AS field, "late.list" AS list, _extra FROM ${sqlPath(path)} WHERE seq IN (0, ${LATE_FIELD_AT}) ORDER BY seq`);
    expect(rows).toEqual([
      { field: null, list: null, _extra: null },
      { field: LATE_FIELD_AT, list: JSON.stringify([LATE_FIELD_AT, 'x']), _extra: null },
    ]);
  });

  it('makes a column its sample typed BIGINT a VARCHAR of the digits when text comes after the sample', async () => {
    await written;
    const rows = await query(`SELECT conflict, _extra FROM ${sqlPath(path)} WHERE seq IN (0, ${CONFLICT_AT}) ORDER BY seq`);
    expect(rows).toEqual([
      { conflict: '0', _extra: null },
      { conflict: `text ${CONFLICT_AT}`, _extra: null },
    ]);
  });

  it('flushes a row group every rowGroupSize rows', async () => {
    await written;
    const [{ groups }] = await query(`SELECT count(DISTINCT row_group_id) AS groups FROM parquet_metadata(${sqlPath(path)})`);
    expect(groups).toBe(6);
  });

  it('compresses with snappy unless told otherwise', async () => {
    await written;
    const gzip = join(dir, 'gzip.parquet');
    await toParquet(records.slice(0, 100), gzip, { compression: 'gzip' });
    const codecs = async (file: string): Promise<unknown[]> =>
      (await query(`SELECT DISTINCT compression FROM parquet_metadata(${sqlPath(file)})`)).map((row) => row.compression);
    expect(await codecs(path)).toEqual(['SNAPPY']);
    expect(await codecs(gzip)).toEqual(['GZIP']);
  });
});

describe('toParquet compression', () => {
  // Row groups of 2,000 rows by 3 columns are encoded on the writer's thread; gzip pages are still
  // compressed on zlib's pool while the next group is gathered, and must land in order.
  const records = Array.from({ length: 20_000 }, (_, seq) => ({ seq, text: `${seq} `.padEnd(200, String.fromCharCode(97 + (seq % 26))) }));

  for (const compression of ['snappy', 'gzip', 'none'] as const) {
    it(`gives back every row in file order with ${compression} pages`, async () => {
      const path = join(dir, `order-${compression}.parquet`);
      const result = await toParquet(records, path, { compression, rowGroupSize: 2_000 });
      expect(result.records).toBe(records.length);
      const [summary] = await query(`
        SELECT count(*) AS n,
          count(*) FILTER (WHERE seq = file_row_number) AS in_place,
          count(*) FILTER (WHERE text = rpad(seq::VARCHAR || ' ', 200, chr((97 + seq % 26)::INTEGER))) AS intact
        FROM read_parquet(${sqlPath(path)}, file_row_number = true)`);
      expect(summary).toEqual({ n: 20_000, in_place: 20_000, intact: 20_000 });
      const [{ groups }] = await query(`SELECT count(DISTINCT row_group_id) AS groups FROM parquet_metadata(${sqlPath(path)})`);
      expect(groups).toBe(10);
    });
  }
});

describe("toParquet row groups in the encoder's worker", () => {
  const WORDS = ['plain ascii', 'café crème', '東京タワー', 'emoji 🎉🚀', 'tab\tand\nnewline', 'quote " and \\ back'];
  /** Text of every kind a run of bytes may hold (ASCII, Latin-1, CJK, astral), empty strings, long strings and NULLs. */
  function row(seq: number): { seq: number; text: string | null; n: number | null; flag: boolean | null } {
    let text: string | null = `${seq}:${WORDS[seq % WORDS.length]}`;
    if (seq % 11 === 0) text = null;
    else if (seq % 13 === 0) text = '';
    else if (seq % 17 === 0) text = text.repeat(40);
    return { seq, text, n: seq % 7 === 0 ? null : seq * 1.5 - 7000, flag: seq % 5 === 0 ? null : seq % 2 === 0 };
  }
  const ROWS = 30_000;
  const expected = Array.from({ length: ROWS }, (_, seq) => row(seq));

  async function readBack(path: string): Promise<Array<Record<string, unknown>>> {
    return query(`SELECT seq, text, n, flag FROM read_parquet(${sqlPath(path)}, file_row_number = true) ORDER BY file_row_number`);
  }

  for (const compression of ['snappy', 'gzip', 'none'] as const) {
    it(`gives back every value in file order with ${compression} pages`, async () => {
      const path = join(dir, `worker-${compression}.parquet`);
      // 5,000 rows by 5 columns: each group is large enough for the worker.
      await toParquet(expected, path, { compression, rowGroupSize: 5_000 });
      expect(await stopEncoderWorker()).toBe(true);
      expect(await readBack(path)).toEqual(expected);
      const [{ groups }] = await query(`SELECT count(DISTINCT row_group_id) AS groups FROM parquet_metadata(${sqlPath(path)})`);
      expect(groups).toBe(6);
    });
  }

  it('encodes on the writer\'s thread the groups a stopped worker had not answered, and loses none', async () => {
    const path = join(dir, 'worker-stopped.parquet');
    let stopped: boolean | undefined;
    async function* source(): AsyncGenerator<Record<string, unknown>> {
      for (const record of expected) {
        // Two groups are with the worker by now, or being gathered; the rest go to a new worker.
        if (record.seq === 12_500) stopped = await stopEncoderWorker();
        yield record;
      }
    }
    const result = await toParquet(source(), path, { rowGroupSize: 5_000 });
    expect(stopped).toBe(true);
    expect(result.records).toBe(ROWS);
    expect(await readBack(path)).toEqual(expected);
  });

  it("encodes every group on the writer's thread with encoder 'thread', starting no worker, and gives back the same rows", async () => {
    await stopEncoderWorker();
    const path = join(dir, 'worker-thread.parquet');
    await toParquet(expected, path, { rowGroupSize: 5_000, encoder: 'thread' });
    expect(await stopEncoderWorker()).toBe(false);
    expect(await readBack(path)).toEqual(expected);
  });

  for (const layout of ['nested', 'flat'] as const) {
    it(`writes the same ${layout} file with its groups encoded in the worker as on the writer's thread`, async () => {
      // Four groups (a field added in the third, a column's kind changing in the fourth), each large enough for the worker.
      const records = hostileRecords(7_000);
      const onThread = join(dir, `same-${layout}-thread.parquet`);
      const inWorker = join(dir, `same-${layout}-worker.parquet`);
      await toParquet(records, onThread, { layout, rowGroupSize: 2_000, encoder: 'thread' });
      await stopEncoderWorker();
      await toParquet(records, inWorker, { layout, rowGroupSize: 2_000 });
      expect(await stopEncoderWorker()).toBe(true);
      expect(readFileSync(inWorker).equals(readFileSync(onThread))).toBe(true);
    });
  }

  it('hands each encoded group back on shared memory, posted and never transferred', async () => {
    // A transferred body detached the worker's ArrayBuffer, and the first detached ArrayBuffer makes
    // V8 drop every optimized function that assumed none would be: the encoder's second group ran
    // at half speed (parquet-encoder-worker.ts). A body on a SharedArrayBuffer is posted, not transferred.
    const types = [{ physical: 'BYTE_ARRAY', repeated: false }, { physical: 'DOUBLE', repeated: false }] as const;
    const cells = new RowGroupCells(types, 12_000);
    for (let seq = 0; seq < 12_000; seq++) cells.add([`value ${seq}`, seq * 1.5]);
    const specs = types.map(({ physical }, c) => ({ path: [`c${c}`], physical, maxDefinition: 1, maxRepetition: 0, compression: 'SNAPPY' }));
    await stopEncoderWorker();
    const group = await encodeRowGroupOffThread(specs, cells.take(), []);
    expect(await stopEncoderWorker()).toBe(true);
    expect(group.body.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(group.rows).toBe(12_000);
  });

  it('starts no worker for a file of one small row group', async () => {
    await stopEncoderWorker();
    await toParquet(expected.slice(0, 3_000), join(dir, 'worker-none.parquet'));
    expect(await stopEncoderWorker()).toBe(false);
  });
});

describe('toParquet column choices', () => {
  it('keeps ISO strings that would not come back unchanged as VARCHAR', async () => {
    const path = join(dir, 'offsets.parquet');
    await toParquet([{ stamp: '2024-01-02T03:04:05+00:00' }, { stamp: '2024-01-02T03:04:05.000Z' }], path);
    expect((await columnTypes(path)).stamp).toBe('VARCHAR');
    expect((await query(`SELECT stamp FROM ${sqlPath(path)}`)).map((row) => row.stamp)).toEqual([
      '2024-01-02T03:04:05+00:00',
      '2024-01-02T03:04:05.000Z',
    ]);
  });

  it('writes only the chosen columns in the chosen order and keeps the rest in _extra', async () => {
    const path = join(dir, 'chosen.parquet');
    await toParquet([{ a: 1, b: { c: 'x', d: true }, e: [1] }], path, { columns: ['b.c', 'a'], layout: 'flat' });
    const rows = await query(`SELECT * FROM ${sqlPath(path)}`);
    expect(Object.keys(rows[0])).toEqual(['b.c', 'a', '_extra']);
    expect(rows[0]).toMatchObject({ 'b.c': 'x', a: 1 });
    expect(JSON.parse(rows[0]._extra as string)).toEqual({ 'b.d': true, e: [1] });
  });

  it('stores negative and the largest safe integers exactly as BIGINT', async () => {
    const path = join(dir, 'integers.parquet');
    const values = { n: -5, m: -4_294_967_297, k: Number.MAX_SAFE_INTEGER, j: Number.MIN_SAFE_INTEGER, z: 0 };
    await toParquet([values], path);
    expect(Object.values(await columnTypes(path)).slice(0, 5)).toEqual(Array(5).fill('BIGINT'));
    expect(await query(`SELECT n, m, k, j, z FROM ${sqlPath(path)}`)).toEqual([values]);
  });

  it('keeps booleans and NULLs in place across row groups, and leaves out a field that is always NULL', async () => {
    const path = join(dir, 'nulls.parquet');
    const records = [{ a: null, b: true }, { a: null, b: null }, { a: null, b: false }, { b: true }, { a: null }];
    await toParquet(records, path, { rowGroupSize: 2 });
    // Absence types nothing: no value ever typed `a`, so it is no column (docs/types.md).
    expect(await query(`SELECT * FROM ${sqlPath(path)}`)).toEqual([
      { b: true, _extra: null },
      { b: null, _extra: null },
      { b: false, _extra: null },
      { b: true, _extra: null },
      { b: null, _extra: null },
    ]);
  });

  it.each([1, 64, 65, 129, 300])('gives back every row of %i, whose columns grow from room for a few rows to a whole group of 100', async (count) => {
    const path = join(dir, `grown-${count}.parquet`);
    const records = Array.from({ length: count }, (_, i) => ({ i, text: `row ${i} ${'é'.repeat(i % 3)}`, even: i % 2 === 0, ratio: i / 7 }));
    await toParquet(records, path, { rowGroupSize: 100 });
    expect(await query(`SELECT i, text, even, ratio FROM ${sqlPath(path)} ORDER BY i`)).toEqual(records);
  });

  it('writes a valid file with no rows for an empty source', async () => {
    const path = join(dir, 'empty.parquet');
    const result = await toParquet([], path);
    expect(result.records).toBe(0);
    expect(await query(`SELECT count(*) AS n FROM ${sqlPath(path)}`)).toEqual([{ n: 0 }]);
  });

  it('names the overflow column __extra when the records have an _extra field', async () => {
    const path = join(dir, 'overflow-name.parquet');
    await toParquet([{ _extra: 'mine' }], path, { sampleSize: 1 });
    expect(Object.keys(await columnTypes(path))).toEqual(['_extra', '__extra']);
  });

  it('rejects a bad rowGroupSize with a TypeError naming it', () => {
    expect(() => toParquet([], join(dir, 'x.parquet'), { rowGroupSize: 0 })).toThrow(/rowGroupSize/);
  });

  it('rejects an unknown encoder with a TypeError listing the known ones', () => {
    const encoder = 'process' as 'thread';
    expect(() => toParquet([], join(dir, 'x.parquet'), { encoder })).toThrow(/encoder must be one of worker, thread/);
  });

  it('rejects an unknown compression with a TypeError listing the known ones', () => {
    const compression = 'toString' as 'snappy';
    expect(() => toParquet([], join(dir, 'x.parquet'), { compression })).toThrow(/compression must be one of snappy, gzip, none/);
  });
});

describe("toParquet's sample holds copies that keep every value", () => {
  // A sample of plain JSON is copied through JSON text (`sinks/table.ts`). A value JSON text changes (a
  // bigint within 2^53 would come back a number, NaN null, -0 as 0, a Date as text) keeps its record
  // copied key by key.
  for (const layout of ['nested', 'flat'] as const) {
    it(`${layout}: a small bigint types an exact column, NaN and -0 stay what they are, a Date is a timestamp`, async () => {
      const path = join(dir, `sample-copies-${layout}.parquet`);
      const when = new Date('2025-03-04T05:06:07.089Z');
      await toParquet(
        [
          { id: 'a', n: 5n, x: Number.NaN, z: -0.0, at: when },
          { id: 'b', n: 6n, x: 1.5, z: 2.5, at: when },
        ],
        path,
        { layout },
      );
      const rows = await query(`SELECT id, n, isnan(x) AS nan, sign(z) AS sign, 1 / z AS inverse, "at" FROM ${sqlPath(path)} ORDER BY id`);
      expect(rows).toEqual([
        { id: 'a', n: 5, nan: true, sign: 0, inverse: Number.NEGATIVE_INFINITY, at: '2025-03-04T05:06:07.089Z' },
        { id: 'b', n: 6, nan: false, sign: 1, inverse: 0.4, at: '2025-03-04T05:06:07.089Z' },
      ]);
      const types = await query(`SELECT name, type FROM parquet_schema(${sqlPath(path)}) WHERE name = 'n'`);
      expect(types).toEqual([{ name: 'n', type: 'INT64' }]);
      const described = await query(`SELECT decode(value) AS value FROM parquet_kv_metadata(${sqlPath(path)}) WHERE decode(key) = 'socialstream.columns'`);
      expect(String(described[0].value)).toMatch(/"n".{0,40}"bigint"/);
    });
  }
});
