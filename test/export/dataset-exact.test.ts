/**
 * A dataset gives back exactly what went in, as one table (docs/datasets.md "Merges
 * give back what went in", "Columns the dataset adds", "One table"): a merge reads a part back and
 * writes every record again unchanged; a record's own field named like a column the dataset adds is
 * kept in `_extra` under its own path; a compaction to the other layout and back keeps every column; and Polars reads
 * every part as one table through the schema file the dataset keeps, whichever part is newest.
 * Read back by DuckDB, Polars (nodejs-polars) and arrow-rs (parquet-wasm).
 */
import { readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm/node';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import { compactDataset, datasetInfo, describeDatasetInfo, toDataset as intoDataset } from '../../src/export/index.ts';
import { datasetParts } from './helpers/dataset-parts.ts';
import { closeServed, recordsIntoDataset as toDataset } from './helpers/served-records.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

afterAll(closeServed);

const root = scratchDir();
let counter = 0;
const freshDir = () => join(root, `exact-${++counter}`);
/** 2024-03-01 and 2024-04-10, in seconds: two months, two partitions. */
const MARCH = 1_709_251_200;
const APRIL = 1_712_707_200;
const LAYOUTS = ['flat', 'nested'] as const;

const table = (dir: string) => `read_parquet(${sqlPath(`${dir}/forum/subforum/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`;

/** Every row as DuckDB's JSON of it, in key order, without what a later run changes (`_fetched_at`) or adds (`_date`). */
async function duckdbRows(dir: string): Promise<string[]> {
  const rows = await query(`SELECT to_json(t) AS row FROM (SELECT * EXCLUDE (_fetched_at, _date) FROM ${table(dir)} ORDER BY id) t`);
  return rows.map((row) => String(row.row));
}

/** The recipe of docs/guide/datasets.md, as written there for Node: the schema from the dataset's schema file. */
function polarsTable(dir: string): pl.DataFrame {
  const schema = pl.readParquet(readFileSync(join(dir, '_dataset/forum__subforum/schema.parquet-schema'))).schema;
  return pl
    .scanParquet(`${dir}/forum/subforum/**/*.parquet`, { hivePartitioning: true, schema, missingColumns: 'insert', castOptions: { missingStructFields: 'insert' } })
    .collectSync();
}

/** Polars' rows of the one part a dataset of one month has but the later run's `p9` (JSON text, so a field `__proto__` stays one), in key order, without `_fetched_at`. */
function polarsRows(dir: string): string {
  const [part] = datasetParts(dir);
  const frame = pl.readParquet(readFileSync(part)).filter(pl.col('id').neq(pl.lit('p9')));
  return String(frame.drop('_fetched_at').sort('id').writeJSON({ format: 'json' }));
}

/** A record of every shape a merge must give back: dotted keys beside the objects they shadow (both orders), `__proto__`, lists of objects, nested nulls. */
const TRICKY: object[] = [
  { id: 'p1', created_utc: MARCH, 'a.b': 1, a: { b: 2 }, o: { 'a.b': 3, a: { b: 4 } } },
  { id: 'p2', created_utc: MARCH, o: { a: { b: 5 }, 'a.b': 6 }, l: [{ u: 1 }, { u: 2, v: 's' }, null] },
  JSON.parse(`{"id":"p3","created_utc":${MARCH},"__proto__":{"q":7},"o":{"__proto__":8}}`) as object,
  { id: 'p4', created_utc: MARCH, o: { n: null, a: { b: null } }, l: [null, { u: null, v: 't' }] },
];

describe('merges give back what went in', () => {
  for (const layout of LAYOUTS) {
    it(`a later run into the same month leaves every earlier record of a ${layout} dataset as it was written`, async () => {
      const dir = freshDir();
      await toDataset(TRICKY, dir, { layout, params: { subforum: 'first' } });
      const [duckdb, polars] = [await duckdbRows(dir), polarsRows(dir)];
      expect(duckdb.join()).toContain('__proto__":8');
      // Another record into March: the part is read back and written again.
      await toDataset([{ id: 'p9', created_utc: MARCH }], dir, { layout, params: { subforum: 'second' } });
      expect((await duckdbRows(dir)).slice(0, -1)).toEqual(duckdb);
      expect(polarsRows(dir)).toBe(polars);
    });

    it(`a later run into the same month keeps a ${layout} dataset's field with an empty key apart from the record's own fields`, async () => {
      const dir = freshDir();
      // The empty key's `title` is an integer twice, then an object: at `.title`, never the record's `title`
      // (nested: in `_extra`, which no widening holds; flat: the object's leaf is the column `.title.x`).
      const emptyKey = [
        { id: 'p1', created_utc: MARCH, title: 't1', '': { title: 1 } },
        { id: 'p2', created_utc: MARCH, title: 't2', '': { title: 2 } },
        { id: 'p3', created_utc: MARCH, title: 't3', '': { title: { x: 1 } } },
      ];
      await toDataset(emptyKey, dir, { layout, params: { subforum: 'first' } });
      const object = layout === 'nested' ? '_extra' : '".title.x"';
      const titles = () => query(`SELECT id, title, ${object} AS object FROM ${table(dir)} WHERE id <> 'p9' ORDER BY id`);
      const written = [
        { id: 'p1', title: 't1', object: null },
        { id: 'p2', title: 't2', object: null },
        { id: 'p3', title: 't3', object: layout === 'nested' ? '{".title":{"x":1}}' : 1 },
      ];
      expect(await titles()).toEqual(written);
      const rows = await duckdbRows(dir);
      await toDataset([{ id: 'p9', created_utc: MARCH }], dir, { layout, params: { subforum: 'second' } });
      expect(await titles()).toEqual(written);
      expect((await duckdbRows(dir)).slice(0, -1)).toEqual(rows);
    });

    it(`a later run into the same month keeps a ${layout} dataset's MAP entry keyed __proto__ (an object keyed by data)`, async () => {
      const dir = freshDir();
      const daily = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`2024-01-01#${i}`, i]));
      const keyed = [
        { id: 'p1', created_utc: MARCH, daily },
        JSON.parse(`{"id":"p2","created_utc":${MARCH},"daily":{"__proto__":7,"constructor":8}}`) as object,
      ];
      await toDataset(keyed, dir, { layout, params: { subforum: 'first' } });
      const entries = () => query(`SELECT daily['__proto__'] AS proto, daily['constructor'] AS ctor, cardinality(daily) AS n FROM ${table(dir)} WHERE id = 'p2'`);
      const written = [{ proto: 7, ctor: 8, n: 2 }];
      expect(await entries()).toEqual(written);
      // Another record into March: the part is read back (its MAP as entries, not assigned to an object) and written again.
      await toDataset([{ id: 'p9', created_utc: MARCH }], dir, { layout, params: { subforum: 'second' } });
      expect(await entries()).toEqual(written);
    });
  }
});

describe('columns the dataset adds', () => {
  /** Records with fields of their own named like the dataset's columns: `k` has no id, so the dataset keys it by `_key`. */
  const OWN: object[] = [
    { id: 'a', created_utc: MARCH, _fetched_at: 'mine', _key: 'my key', _extra: { note: 'mine', n: 1 }, _date: '1999-01', _Fetched_At: 7 },
    { permalink: '/r/x/k', created_utc: MARCH, title: 'keyless', _key: 'k of my own' },
  ];
  /** Each row's own values as `_extra` holds them and the dataset's columns beside them, as DuckDB reads them. */
  const ownAndAdded = (dir: string) =>
    query(
      `SELECT coalesce(id, title) AS id, _extra, _fetched_at LIKE '2%' AS stamped, _key, _date FROM ${table(dir)} ORDER BY id`,
    ).then((rows) => rows.map((row): Record<string, unknown> => ({ ...row, _extra: JSON.parse(String(row._extra)) as unknown })));
  const expected = [
    { id: 'a', _extra: { _fetched_at: 'mine', _key: 'my key', _extra: { note: 'mine', n: 1 }, _date: '1999-01', _Fetched_At: 7 }, stamped: true, _key: null, _date: '2024-03' },
    { id: 'keyless', _extra: { _key: 'k of my own' }, stamped: true, _key: expect.stringMatching(/\S/) as unknown, _date: '2024-03' },
  ];

  for (const layout of LAYOUTS) {
    it(`keeps a record's own _fetched_at, _key, _extra and _date (any case) in _extra under their own paths, the ${layout} dataset's columns intact`, async () => {
      const dir = freshDir();
      await toDataset(OWN, dir, { layout, params: { subforum: 'own' } });
      const rows = await ownAndAdded(dir);
      expect(rows).toEqual(expected);
      expect(rows[1]._key).not.toBe('k of my own');
      const [{ mine }] = await query(`SELECT json_extract_string(_extra, '$._fetched_at') AS mine FROM ${table(dir)} WHERE id = 'a'`);
      expect(mine).toBe('mine');
    });

    it(`keeps them so when a later run merges into the same month of a ${layout} dataset`, async () => {
      const dir = freshDir();
      await toDataset(OWN, dir, { layout, params: { subforum: 'own' } });
      const before = await ownAndAdded(dir);
      await toDataset([{ id: 'p9', created_utc: MARCH, _date: 'later' }], dir, { layout, params: { subforum: 'later' } });
      const after = await ownAndAdded(dir);
      expect(after.filter((row) => row.id !== 'p9')).toEqual(before);
      expect(after.find((row) => row.id === 'p9')).toMatchObject({ _extra: { _date: 'later' }, _date: '2024-03' });
    });
  }
});

/** The names (a nested schema's at every depth) the dataset's schema records as `untyped`: kept, though no part holds them. */
function untypedFields(dir: string): string[] {
  const names: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      const node = value as Record<string, unknown>;
      if (node.kind === 'untyped' && typeof node.name === 'string') names.push(node.name);
      Object.values(node).forEach(visit);
    }
  };
  visit(JSON.parse(readFileSync(join(dir, '_dataset/forum__subforum/schema.json'), 'utf8')));
  return names;
}

describe('compaction to the other layout', () => {
  /** Every column's name and DuckDB type, by name. */
  async function columns(dir: string): Promise<string[]> {
    return (await query(`DESCRIBE SELECT * FROM ${table(dir)}`)).map((row) => `${String(row.column_name)} ${String(row.column_type)}`).sort();
  }

  it('keeps every column the schema records, one no row has a value in as untyped and in no part, and flat → nested → flat is the identity', async () => {
    const dir = freshDir();
    await toDataset(
      [
        { id: 'p1', created_utc: MARCH, media: null, author: { name: 'ann', flair: null }, awards: [], tags: [{ t: 1 }] },
        { id: 'p2', created_utc: APRIL, media: null, author: { name: 'bob' } },
      ],
      dir,
      { layout: 'flat', params: { subforum: 'first' } },
    );
    await toDataset([{ id: 'p3', created_utc: MARCH, later: null, author: { name: 'cy', since: null } }], dir, { params: { subforum: 'second' } });
    const [flatColumns, flatRows] = [await columns(dir), await duckdbRows(dir)];
    await compactDataset(dir, { layout: 'nested' });
    const nested = await columns(dir);
    // A field no row has a value in is recorded `untyped` and in no part (docs/types.md): no reader meets a column typed by absence.
    expect(nested).toContain('author STRUCT("name" VARCHAR)');
    expect(nested.filter((column) => /^(media|later) /.test(column))).toEqual([]);
    expect(untypedFields(dir)).toEqual(expect.arrayContaining(['media', 'later', 'flair', 'since']));
    expect(await query(`SELECT count(*) AS rows FROM ${table(dir)}`)).toEqual([{ rows: 3 }]);
    await compactDataset(dir, { layout: 'flat' });
    expect(untypedFields(dir)).toEqual(expect.arrayContaining(['media', 'later', 'author.flair', 'author.since']));
    expect(await columns(dir)).toEqual(flatColumns);
    // Rows alike, field by field: a struct's field added by a later run (`author.since`) now sits beside its siblings.
    expect((await duckdbRows(dir)).map((row) => JSON.parse(row) as unknown)).toEqual(flatRows.map((row) => JSON.parse(row) as unknown));
  });

  it('gives back the same columns and rows of sandbox forum posts, whose always-null fields included, flat → nested → flat', async () => {
    const sandbox = await startSandbox({ port: 0 });
    const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    try {
      const dir = freshDir();
      await intoDataset(client.forum.subforum({ subforum: 'exact-n40', sort: 'new' }), dir, { layout: 'flat' });
      const [flatColumns, flatRows] = [await columns(dir), await duckdbRows(dir)];
      await compactDataset(dir, { layout: 'nested' });
      expect((await columns(dir)).filter((column) => /^(media|secure_media|distinguished) /.test(column))).toEqual([]);
      expect(untypedFields(dir)).toEqual(expect.arrayContaining(['media', 'secure_media', 'distinguished']));
      await compactDataset(dir, { layout: 'flat' });
      expect(await columns(dir)).toEqual(flatColumns);
      expect((await duckdbRows(dir)).map((row) => JSON.parse(row) as unknown)).toEqual(flatRows.map((row) => JSON.parse(row) as unknown));
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});

describe('one table for every reader', () => {
  for (const layout of LAYOUTS) {
    it(`Polars reads a ${layout} dataset as one table through its schema file after runs that add different fields to different months, whatever the files' times`, async () => {
      const dir = freshDir();
      await toDataset([{ id: 'p1', created_utc: MARCH, a: 1, o: { x: 1 } }], dir, { layout, params: { subforum: 'first' } });
      await toDataset([{ id: 'p2', created_utc: APRIL, b: 's', o: { y: 's' } }], dir, { layout, params: { subforum: 'second' } });
      // A copy that loses file times: the part of the first run looks newest.
      const [march] = datasetParts(dir);
      utimesSync(march, new Date(), new Date(Date.now() + 60_000));
      const frame = polarsTable(dir);
      expect(frame.height).toBe(2);
      expect(frame.columns).toEqual(expect.arrayContaining(['a', 'b']));
      expect(frame.sort('id').getColumn('b').toArray()).toEqual([null, 's']);
    });

    it(`Polars reads a ${layout} dataset as one table when two writers publish different months at once, and arrow-rs reads each part alone`, async () => {
      const dir = freshDir();
      await Promise.all([
        toDataset([{ id: 'p1', created_utc: MARCH, a: 1, o: { x: 1 } }], dir, { layout, writer: 'walk-a', params: { subforum: 'first' } }),
        toDataset([{ id: 'p2', created_utc: APRIL, b: 's', o: { y: 's' } }], dir, { layout, writer: 'walk-b', params: { subforum: 'second' } }),
      ]);
      const frame = polarsTable(dir).sort('id');
      expect(frame.getColumn('a').toArray()).toEqual([1, null]);
      expect(frame.getColumn('b').toArray()).toEqual([null, 's']);
      const rows = datasetParts(dir).flatMap((part) => tableFromIPC(readParquet(new Uint8Array(readFileSync(part))).intoIPCStream()).toArray());
      expect(rows.map((row) => String((row as { id: unknown }).id)).sort()).toEqual(['p1', 'p2']);
    });
  }
});

describe('dataset info', () => {
  it('lists each column with its type and counts the values in _extra by path, over several runs', async () => {
    const dir = freshDir();
    await toDataset([{ id: 'p1', created_utc: MARCH, score: 1, author: { name: 'ann' } }], dir, { params: { subforum: 'first' } });
    // Objects where an integer is, a string where a struct is: no column holds them.
    await toDataset([{ id: 'p2', created_utc: APRIL, score: { up: 2 } }], dir, { params: { subforum: 'second' } });
    await toDataset([{ id: 'p3', created_utc: MARCH, score: { up: 3 }, author: 'cy' }], dir, { params: { subforum: 'third' } });
    const [operation] = (await datasetInfo(dir)).operations;
    expect(operation.schema).toEqual(expect.arrayContaining([{ name: 'score', kind: 'integer' }, { name: 'author', kind: 'struct', fields: [{ name: 'name', kind: 'string' }] }]));
    expect(operation.extra).toEqual([
      { path: 'score', values: 2 },
      { path: 'author', values: 1 },
    ]);
    const [{ spilled }] = await query(`SELECT count(_extra) AS spilled FROM ${table(dir)}`);
    expect(spilled).toBe(2);
    expect(describeDatasetInfo(await datasetInfo(dir))).toContain('_extra: 3 values no column holds: score 2, author 1');
  });
});

describe('names that differ only by case', () => {
  for (const layout of LAYOUTS) {
    it(`keep the first such field of a ${layout} dataset as its column and the later one in _extra by path, where DuckDB reads both apart, through a merge`, async () => {
      const dir = freshDir();
      await toDataset([{ id: 'p1', created_utc: MARCH, url: 'a', URL: 'B', author: { Name: 'Ann', name: 'ann' } }], dir, { layout, params: { subforum: 'first' } });
      await toDataset([{ id: 'p2', created_utc: MARCH, URL: 'C' }], dir, { layout, params: { subforum: 'second' } });
      const name = layout === 'flat' ? '"author.Name"' : 'author.Name';
      const rows = await query(
        `SELECT id, url, json_extract_string(_extra, '$.URL') AS "URL", ${name} AS "Name", json_extract_string(_extra, '$."author.name"') AS name FROM ${table(dir)} ORDER BY id`,
      );
      expect(rows).toEqual([
        { id: 'p1', url: 'a', URL: 'B', Name: 'Ann', name: 'ann' },
        { id: 'p2', url: null, URL: 'C', Name: null, name: null },
      ]);
      const [operation] = (await datasetInfo(dir)).operations;
      expect(operation.extra).toEqual([
        { path: 'URL', values: 2 },
        { path: 'author.name', values: 1 },
      ]);
    });
  }
});
