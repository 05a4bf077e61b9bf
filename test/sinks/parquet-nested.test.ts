/**
 * The nested Parquet layout (sinks/README.md "How a record becomes a nested row"), read back by
 * DuckDB: structs, lists, JSON text where kinds vary, `_extra` for what the shape lacks, bigints.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { describe, expect, it } from 'vitest';
import { SinkError } from '../../src/errors.ts';
import { toParquet } from '../../sinks/index.ts';
import { collect } from '../client/helpers.ts';
import { readParquetRecords } from '../../sinks/read-back.ts';
import { MAP_THRESHOLD } from '../../sinks/rows.ts';
import { query, queryJS, sqlPath } from './helpers/duckdb.ts';
import { scratchDir } from './helpers/files.ts';
import { CONFLICT_AT, hostileRecords, LATE_FIELD_AT } from './helpers/hostile.ts';
import { leafDifferences, leaves } from './helpers/leaves.ts';
import { parquetColumns, parquetRecords } from './helpers/read-back.ts';

const dir = scratchDir();

async function columnTypes(path: string): Promise<Record<string, string>> {
  const rows = await query(`DESCRIBE SELECT * FROM ${sqlPath(path)}`);
  return Object.fromEntries(rows.map((row) => [row.column_name as string, row.column_type as string]));
}

/**
 * A hostile record as the type lattice keeps it (docs/types.md): `mixed` and `late.list`'s
 * elements hold numbers and text, so their numbers are text of their digits; `emptyObject` is only
 * ever `{}`, which types nothing, so it is no column (NULL).
 */
function asTyped(record: Record<string, unknown>): Record<string, unknown> {
  const { emptyObject: _, ...rest } = record;
  // `mixed` and `conflict` hold numbers and text: string fields, their numbers the text of their digits (docs/types.md).
  const typed: Record<string, unknown> = { ...rest, mixed: String(rest.mixed), conflict: String(rest.conflict) };
  const late = typed.late as { field: number; list: unknown[] } | undefined;
  return late === undefined ? typed : { ...typed, late: { ...late, list: late.list.map(String) } };
}

describe('nested Parquet of hostile records', () => {
  const records = hostileRecords(6_000);
  const path = join(dir, 'hostile-nested.parquet');
  const written = toParquet(records, path, { rowGroupSize: 1_000 });

  it('gives back every leaf of every record when DuckDB reads the file', async () => {
    await written;
    const back = await parquetRecords(path);
    expect(back).toHaveLength(records.length);
    const differences = records.flatMap((record, i) =>
      leafDifferences(leaves(asTyped(record), { structs: true }), leaves(back[i], { structs: true })).map((d) => `record ${i}: ${d}`),
    );
    expect(differences.slice(0, 10)).toEqual([]);
  });

  it('types objects as STRUCT, arrays of one kind as LIST and keyed collections as JSON text', async () => {
    await written;
    const types = await columnTypes(path);
    expect(types).toMatchObject({
      seq: 'BIGINT',
      when: 'TIMESTAMP',
      author: expect.stringMatching(/^STRUCT\("name" VARCHAR, id VARCHAR, stats STRUCT\(followers BIGINT, deep STRUCT\(deeper STRUCT\(deepest BIGINT\)\)\)\)$/),
      keyed: 'VARCHAR',
      _extra: 'VARCHAR',
    });
  });

  it('adds a top-level field first seen after the sample as a column, NULL in the rows before', async () => {
    await written;
    const rows = await queryJS(`SELECT seq::INTEGER AS seq, late.field::INTEGER AS field, late.list AS list FROM ${sqlPath(path)} WHERE seq IN (0, ${LATE_FIELD_AT - 1}, ${LATE_FIELD_AT}) ORDER BY seq`);
    expect(rows).toEqual([
      { seq: 0, field: null, list: null },
      { seq: LATE_FIELD_AT - 1, field: null, list: null },
      { seq: LATE_FIELD_AT, field: LATE_FIELD_AT, list: [String(LATE_FIELD_AT), 'x'] },
    ]);
  });

  it('makes a field its sample typed BIGINT a VARCHAR of the digits when text comes after the sample', async () => {
    await written;
    const rows = await query(`SELECT conflict, _extra FROM ${sqlPath(path)} WHERE seq IN (0, ${CONFLICT_AT}) ORDER BY seq`);
    expect(rows).toEqual([
      { conflict: '0', _extra: null },
      { conflict: `text ${CONFLICT_AT}`, _extra: null },
    ]);
  });
});

describe('nested Parquet', () => {
  it('writes a record of the sample as it writes the same record after the sample (the sample holds copies)', async () => {
    class Point {
      constructor(readonly x = 1) {}
    }
    const record = (): Record<string, unknown> => ({
      id: 1,
      when: new Date('2024-01-02T03:04:05.000Z'),
      proto: JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as unknown,
      bare: Object.assign(Object.create(null) as object, { z: 3 }),
      tags: ['a', ['b'], { c: 'd' }],
      point: new Point(),
    });
    const path = join(dir, 'sample-copies.parquet');
    await toParquet([record(), record()], path, { sampleSize: 1 });
    const rows = (await query(`SELECT to_json(t)::VARCHAR AS row FROM ${sqlPath(path)} t`)).map((row) => row.row as string);
    expect(rows[0]).toBe(rows[1]);
    // The key `__proto__` stays a field, and a class's instance stays a value of its own (JSON text), not a STRUCT.
    expect(rows[0]).toContain('"proto":{"__proto__":{"x":1},"y":2}');
    expect(rows[0]).toContain('"point":"{\\"x\\":1}"');
  });

  it('gives every row group a field first seen in a later one, and DuckDB, Polars and arrow-rs read it', async () => {
    const path = join(dir, 'evolving.parquet');
    const records = Array.from({ length: 7 }, (_, i) => (i < 5 ? { id: i } : { id: i, added: { tags: [`t${i}`] } }));
    await toParquet(records, path, { sampleSize: 2, rowGroupSize: 2 });
    const expected = [null, null, null, null, null, ['t5'], ['t6']];
    expect((await queryJS(`SELECT added.tags AS tags FROM ${sqlPath(path)}`)).map((row) => row.tags)).toEqual(expected);
    const frame = pl.readParquet(path);
    expect(frame.height).toBe(7);
    expect((JSON.parse(String(frame.writeJSON({ format: 'json' }))) as Array<{ added: { tags: string[] } | null }>).map((row) => row.added?.tags ?? null)).toEqual(expected);
    const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
    expect(table.schema.fields.map((field) => field.name)).toEqual(['id', '_extra', 'added']);
    const added = [...table.getChild('added')!] as Array<{ toJSON(): { tags: Iterable<string> } } | null>;
    expect(added.map((row) => (row === null ? null : [...row.toJSON().tags]))).toEqual(expected);
  });

  it('adds a later field where an earlier record held it null at the same key position, and follows keys in any order', async () => {
    const path = join(dir, 'key-positions.parquet');
    const records = [
      { id: 0, s: { a: 1, b: 'x' } },
      { id: 1, s: { a: 2, b: 'y' }, late: null },
      { id: 2, s: { a: 3, b: 'z' }, late: 7 },
      { late: 8, s: { b: 'w', a: 4 }, id: 3 },
      { s: { b: 'v', c: true, a: 5 }, id: 4, late: 9 },
    ];
    for (const layout of ['nested', 'flat'] as const) {
      const file = path.replace('.parquet', `-${layout}.parquet`);
      await toParquet(records, file, { sampleSize: 1, layout });
      const rows = await query(`SELECT id, ${layout === 'nested' ? 's.a AS a, s.b AS b, s.c AS c' : '"s.a" AS a, "s.b" AS b, "s.c" AS c'}, late, _extra FROM ${sqlPath(file)} ORDER BY id`);
      expect(rows.map(({ id, a, b }) => ({ id, a, b })), layout).toEqual(records.map(({ id, s }) => ({ id, a: s.a, b: s.b })));
      expect(rows.map((row) => row.late), layout).toEqual([null, null, 7, 8, 9]);
      // Fields the sample lacked are the file's columns once it closes (docs/types.md, "Files").
      expect(rows.map((row) => row.c), layout).toEqual([null, null, null, null, true]);
      expect(rows.map((row) => row._extra), layout).toEqual([null, null, null, null, null]);
    }
  });

  it('keeps a field first seen after the sample in _extra when columns chose the fields', async () => {
    const path = join(dir, 'chosen-nested.parquet');
    await toParquet([{ a: 1, b: { c: 'x' } }, { a: 2, b: { c: 'y' }, late: true }], path, { columns: ['b', 'a'], sampleSize: 1 });
    const rows = await query(`SELECT * FROM ${sqlPath(path)}`);
    expect(Object.keys(rows[0])).toEqual(['b', 'a', '_extra']);
    expect(JSON.parse(rows[1]._extra as string)).toEqual({ late: true });
  });

  const video = (i: number) => ({
    id: i,
    author: { nickname: `nick ${i}`, avatar: { url_list: [`https://a/${i}.webp`, `https://a/${i}.jpeg`], width: 100 } },
    tags: i % 2 === 0 ? [] : ['x', `t${i}`],
    stickers: i === 2 ? null : [{ name: 'heart', count: i }],
  });

  it('answers author.nickname and unnest(list) in DuckDB without quoting', async () => {
    const path = join(dir, 'videos.parquet');
    await toParquet([video(1), video(2), video(3)], path);
    const rows = await query(`SELECT id, author.nickname AS nickname, unnest(author.avatar.url_list) AS url FROM ${sqlPath(path)} WHERE id = 1`);
    expect(rows).toEqual([
      { id: 1, nickname: 'nick 1', url: 'https://a/1.webp' },
      { id: 1, nickname: 'nick 1', url: 'https://a/1.jpeg' },
    ]);
  });

  it('writes an empty array as an empty list and a null as NULL, a list of objects as a LIST of STRUCT', async () => {
    const path = join(dir, 'lists.parquet');
    await toParquet([video(1), video(2), video(3)], path);
    expect((await columnTypes(path)).stickers).toBe('STRUCT("name" VARCHAR, count BIGINT)[]');
    const rows = await queryJS(`SELECT tags, stickers FROM ${sqlPath(path)} ORDER BY id`);
    expect(rows).toEqual([
      { tags: ['x', 't1'], stickers: [{ name: 'heart', count: 1n }] },
      { tags: [], stickers: null },
      { tags: ['x', 't3'], stickers: [{ name: 'heart', count: 3n }] },
    ]);
  });

  it('types a field whose values vary in kind by its commonest kind, widened by the lattice, with the rest in _extra', async () => {
    const path = join(dir, 'varying.parquet');
    await toParquet([{ mixed: [1, 'a'], shape: { a: 1 } }, { mixed: [2], shape: { a: 2 } }, { mixed: [], shape: [1] }], path);
    expect(await columnTypes(path)).toMatchObject({ mixed: 'VARCHAR[]', shape: 'STRUCT(a BIGINT)' });
    expect(await queryJS(`SELECT mixed, shape, _extra FROM ${sqlPath(path)}`)).toEqual([
      { mixed: ['1', 'a'], shape: { a: 1n }, _extra: null },
      { mixed: ['2'], shape: { a: 2n }, _extra: null },
      { mixed: [], shape: null, _extra: '{"shape":[1]}' },
    ]);
  });

  it('names the fields of a field with an empty key apart from the record\'s own fields (`.title`, not `title`), in _extra and in flat columns', async () => {
    // The record's own `title` is text; the empty key's `title` an integer twice, then an object (to `_extra`).
    const records = [
      { id: 'p1', title: 't1', '': { title: 1 } },
      { id: 'p2', title: 't2', '': { title: 2 } },
      { id: 'p3', title: 't3', '': { title: { x: 1 } } },
    ];
    const nested = join(dir, 'empty-key.parquet');
    await toParquet(records, nested);
    expect(await queryJS(`SELECT id, title, _extra FROM ${sqlPath(nested)} ORDER BY id`)).toEqual([
      { id: 'p1', title: 't1', _extra: null },
      { id: 'p2', title: 't2', _extra: null },
      { id: 'p3', title: 't3', _extra: '{".title":{"x":1}}' },
    ]);
    // DuckDB names a column with an empty name `C<n>`; a merge reads the file back by its own names.
    expect(await collect(readParquetRecords(nested))).toEqual(records);
    const flat = join(dir, 'empty-key-flat.parquet');
    await toParquet(records, flat, { layout: 'flat' });
    expect(await columnTypes(flat)).toMatchObject({ id: 'VARCHAR', title: 'VARCHAR', '.title': 'BIGINT' });
    expect(await collect(readParquetRecords(flat))).toEqual(records);
  });

  it('writes an object keyed by data (more distinct keys than MAP_THRESHOLD) as a MAP, which DuckDB, Polars and arrow-rs read', async () => {
    const path = join(dir, 'keyed-by-date.parquet');
    const day = (d: number) => new Date(Date.UTC(2025, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);
    const daily = (i: number) => Object.fromEntries(Array.from({ length: MAP_THRESHOLD + 50 }, (_, d) => [day(d + i), d]));
    await toParquet([{ id: 0, daily: daily(0) }, { id: 1, daily: daily(1) }, { id: 2, daily: {} }, { id: 3, daily: null }], path);
    expect((await columnTypes(path)).daily).toBe('MAP(VARCHAR, BIGINT)');
    expect(await query(`SELECT id, cardinality(daily) AS n, daily['2025-01-02'] AS second FROM ${sqlPath(path)} ORDER BY id`)).toEqual([
      { id: 0, n: MAP_THRESHOLD + 50, second: 1 },
      { id: 1, n: MAP_THRESHOLD + 50, second: 0 },
      { id: 2, n: 0, second: null },
      { id: 3, n: null, second: null },
    ]);
    const frame = pl.readParquet(path);
    const entries = frame.getColumn('daily').toArray() as unknown as Array<Array<{ key: string; value: number }> | null>;
    expect(entries.map((row) => row?.length ?? null)).toEqual([MAP_THRESHOLD + 50, MAP_THRESHOLD + 50, 0, null]);
    expect(entries[1]![0]).toEqual({ key: '2025-01-02', value: 0 });
    const arrow = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
    expect(String(arrow.schema.fields.find((field) => field.name === 'daily')?.type)).toMatch(/^Map<\{?key/i);
    const second = arrow.getChild('daily')!.get(1) as { toJSON(): Record<string, unknown> };
    expect(Object.keys(second.toJSON())).toHaveLength(MAP_THRESHOLD + 50);
    expect(second.toJSON()['2025-01-02']).toBe(0n);
  });

  it('keeps an object keyed by data as one value of JSON text in the flat layout, not a column per key', async () => {
    const path = join(dir, 'keyed-by-date-flat.parquet');
    const daily = Object.fromEntries(Array.from({ length: MAP_THRESHOLD + 1 }, (_, d) => [`k${d}`, d]));
    await toParquet([{ id: 0, daily }], path, { layout: 'flat' });
    expect(Object.keys(await columnTypes(path))).toEqual(['id', 'daily', '_extra']);
    const [{ text }] = await query(`SELECT daily AS text FROM ${sqlPath(path)}`);
    expect(JSON.parse(String(text))).toEqual(daily);
  });

  it('keeps an object whose distinct keys pass MAP_THRESHOLD only over many records as one value of JSON text in the flat layout', async () => {
    const path = join(dir, 'keyed-spread-flat.parquet');
    // Ten keys a record, 300 distinct over the file: no one object passes the threshold.
    const records = Array.from({ length: 30 }, (_, i) => ({ id: i, daily: Object.fromEntries(Array.from({ length: 10 }, (_, d) => [`k${i * 10 + d}`, d])) }));
    await toParquet(records, path, { layout: 'flat' });
    expect(Object.keys(await columnTypes(path))).toEqual(['id', 'daily', '_extra']);
    const rows = await query(`SELECT daily AS text FROM ${sqlPath(path)} ORDER BY id`);
    expect(rows.map((row) => JSON.parse(String(row.text)) as unknown)).toEqual(records.map((record) => record.daily));
  });

  it('writes objects and arrays nested deeper than maxDepth as JSON text', async () => {
    const path = join(dir, 'deep.parquet');
    await toParquet([{ a: { b: { c: { d: 1 } } } }], path, { maxDepth: 2 });
    expect((await columnTypes(path)).a).toBe('STRUCT(b STRUCT(c VARCHAR))');
    expect(await query(`SELECT a.b.c AS c FROM ${sqlPath(path)}`)).toEqual([{ c: '{"d":1}' }]);
  });

  it('types a field by the commonest kind of value that types something: lists beside objects of only {} (once a crash)', async () => {
    // Each element once counted as much as the other, and the objects won the tie but made no struct: no shape for a field that holds a 1.
    const records = [{ id: 1 }, { id: 2, m: [[1], { a: {} }] }, { id: 3, m: [[2, 3]] }];
    for (const sampleSize of [1, 1_000]) {
      const path = join(dir, `nothing-objects-${sampleSize}.parquet`);
      await toParquet(records, path, { sampleSize });
      expect(await columnTypes(path)).toMatchObject({ m: 'BIGINT[][]' });
      expect(await queryJS(`SELECT id, m, _extra FROM ${sqlPath(path)} ORDER BY id`)).toEqual([
        { id: 1n, m: null, _extra: null },
        { id: 2n, m: null, _extra: '{"m":[[1],{"a":{}}]}' },
        { id: 3n, m: [[2n, 3n]], _extra: null },
      ]);
      expect(await collect(readParquetRecords(path))).toEqual(records);
    }
  });

  it('moves a whole list or MAP of JSON text (keyed collections) to _extra when one of its values is a scalar, which JSON text never holds', async () => {
    const path = join(dir, 'json-elements.parquet');
    const daily = Object.fromEntries(Array.from({ length: MAP_THRESHOLD + 50 }, (_, i) => [`d${i}`, { 0: 'x', 1: 'y' }]));
    const records = [
      { id: 1, l: [{ 0: 'a' }, { 0: 'b' }] },
      { id: 2, l: [{ 0: 'c' }, 5, 6] },
      { id: 3, m: daily },
      { id: 4, m: { d1: { 0: 'z' }, d2: 7, d3: 8 } },
    ];
    await toParquet(records, path);
    expect(await columnTypes(path)).toMatchObject({ l: 'VARCHAR[]', m: 'MAP(VARCHAR, VARCHAR)' });
    // Each scalar once went to `_extra` under the list's (the MAP's) name, the last one taking the place of the others.
    expect(await queryJS(`SELECT id, l, m IS NULL AS no_map, _extra FROM ${sqlPath(path)} WHERE id IN (2, 4) ORDER BY id`)).toEqual([
      { id: 2n, l: null, no_map: true, _extra: '{"l":[{"0":"c"},5,6]}' },
      { id: 4n, l: null, no_map: true, _extra: '{"m":{"d1":{"0":"z"},"d2":7,"d3":8}}' },
    ]);
    expect(await collect(readParquetRecords(path))).toEqual(records);
  });

  it('moves a whole list to _extra when one of its elements holds a value no widening holds, and gives a new struct field its column', async () => {
    const path = join(dir, 'late.parquet');
    await toParquet([video(1), { ...video(4), stickers: [{ name: 'star', count: { of: 'many' } }], author: { nickname: 'n', badge: 'gold' } }], path, {
      sampleSize: 1,
    });
    const rows = await queryJS(`SELECT stickers, author.nickname AS nickname, author.badge AS badge, _extra FROM ${sqlPath(path)} ORDER BY id`);
    expect(rows[1]).toMatchObject({ stickers: null, nickname: 'n', badge: 'gold' });
    expect(JSON.parse(rows[1]._extra as string)).toEqual({ stickers: [{ name: 'star', count: { of: 'many' } }] });
  });

  it('writes bigints within int64 as BIGINT with their exact value, and beyond it as their digits', async () => {
    const path = join(dir, 'bigint.parquet');
    const beyond = 2n ** 64n + 1n;
    await toParquet([{ id: 2n ** 62n + 3n, list: [-(2n ** 63n), 1], huge: beyond }, { id: 5, list: [], huge: beyond + 1n }], path);
    expect(await columnTypes(path)).toMatchObject({ id: 'BIGINT', list: 'BIGINT[]', huge: 'VARCHAR' });
    expect(await queryJS(`SELECT id, list, huge FROM ${sqlPath(path)}`)).toEqual([
      { id: 2n ** 62n + 3n, list: [-(2n ** 63n), 1n], huge: String(beyond) },
      { id: 5n, list: [], huge: String(beyond + 1n) },
    ]);
  });

  it('keeps no part of a record that fails half way, so the file holds the records before it', async () => {
    const path = join(dir, 'half.parquet');
    const records = [video(1), { ...video(2), tail: Symbol('no') }, video(3)];
    const error = await toParquet(records, path, { sampleSize: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect(error).toMatchObject({ recordsWritten: 1 });
    expect(await queryJS(`SELECT id, tags FROM ${sqlPath(path)}`)).toEqual([{ id: 1n, tags: ['x', 't1'] }]);
  });

  it('describes each field\'s shape in socialstream.columns', async () => {
    const path = join(dir, 'described.parquet');
    await toParquet([{ a: { b: [1] }, c: 'x' }], path);
    expect(await parquetColumns(path)).toEqual({
      layout: 'nested',
      fields: [
        { name: 'a', shape: { struct: [{ name: 'b', shape: { list: { kind: 'integer' } } }] } },
        { name: 'c', shape: { kind: 'string' } },
      ],
      overflow: '_extra',
    });
  });

  it('refuses kinds without the flat layout, and an unknown layout, with a TypeError', () => {
    expect(() => toParquet([], join(dir, 'x.parquet'), { kinds: { a: 'integer' } })).toThrow(/kinds .* layout: 'flat'/);
    expect(() => toParquet([], join(dir, 'x.parquet'), { layout: 'wide' as 'flat' })).toThrow(/layout must be one of nested, flat/);
  });
});
