/**
 * The dataset state checks of `src/dataset/state.ts` through the library: damage is a `StateDamagedError`
 * naming the file, before any request; every kind and partitioning the dataset code defines is
 * known; a schema not yet written beside the parts of a publish under way is no damage.
 */
import { cpSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServed, recordsIntoDataset } from './helpers/served-records.ts';
import { createClient, type Client } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { datasetInfo, StateDamagedError, toDataset } from '../../src/export/index.ts';
import { localPaths, PARTITION_BYS } from '../../src/dataset/store.ts';
import { readSchemaFile } from '../../src/dataset/state.ts';
import { COLUMN_KINDS } from '../../src/column-kinds.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);
const META = '_dataset/forum__subforum';

let sandbox: Sandbox;
let client: Client;
/** 200 subforum posts by month. */
let template: string;
const charged = () => sandbox.requests.charged[sandbox.apiKey] ?? 0;
const posts = (on: Client) => on.forum.subforum({ subforum: 'state-lib-n200', sort: 'new', trim: true });

function copy(name: string): string {
  const dir = fresh(name);
  cpSync(template, dir, { recursive: true });
  return dir;
}

function schemaOf(dir: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, META, 'schema.json'), 'utf8')) as Record<string, unknown>;
}

async function rows(dir: string): Promise<number> {
  const [{ n }] = await query(`SELECT count(DISTINCT id) AS n FROM read_parquet(${sqlPath(`${dir}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true)`);
  return n as number;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  template = fresh('template');
  await toDataset(posts(client), template);
}, 60_000);
afterAll(async () => {
  await closeServed();
  await client.close();
  await sandbox.close();
});

describe('dataset state checked on open', () => {
  it("refuses a publish journal whose kept records would be renamed from outside a writer's staging, naming the file, buying nothing", async () => {
    const dir = copy('rest-outside');
    const drift = { added: [], missing: [], conflicting: [] };
    const changes = { added: 0, updated: 0, partitions: [], drift, writer: 'all', stoppedAtMark: 0, setAside: 0 };
    // Finishing the publish would rename this file over the writer's spool.
    const member = { writer: 'all', next: null, rest: '../elsewhere/spool-rest.ndjson', changes, repaired: 0 };
    const journal = join(dir, META, 'publish.json');
    writeFileSync(journal, JSON.stringify({ version: 2, renames: [], removes: [], schema: schemaOf(dir), walks: [], members: [member], drift }));
    const before = charged();
    const error = await toDataset(posts(client), dir).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(StateDamagedError);
    expect((error as StateDamagedError).message).toContain(journal);
    expect((error as StateDamagedError).message).toMatch(/rest/);
    expect(charged()).toBe(before);
  });

  it('refuses a commit whose published prefix is not a count of records and bytes, naming the file, buying nothing', async () => {
    const dir = copy('through-damaged');
    mkdirSync(join(dir, META, 'commits'), { recursive: true });
    const path = join(dir, META, 'commits', 'other.json');
    const state = {
      version: 3,
      op: 'forum/subforum',
      walks: [],
      spool: { bytes: 0, sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
      records: 0,
      pages: 0,
      credits: 0,
      run: { records: 0, pages: 0, credits: 0, received: 0, duplicates: 0, repaired: 0, ended: false },
    };
    writeFileSync(path, JSON.stringify({ writer: 'other', complete: false, state, through: { records: 'all' } }));
    const before = charged();
    const error = await toDataset(posts(client), dir).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(StateDamagedError);
    expect((error as StateDamagedError).message).toContain(path);
    expect(charged()).toBe(before);
  });

  it('refuses a schema with a column listed twice with a StateDamagedError whose path is the file, buying nothing', async () => {
    const dir = copy('twice');
    const schema = schemaOf(dir);
    const columns = schema.columns as unknown[];
    writeFileSync(join(dir, META, 'schema.json'), JSON.stringify({ ...schema, columns: [...columns, columns[1]] }));
    const before = charged();
    const error = await toDataset(posts(client), dir).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(StateDamagedError);
    expect(error).toMatchObject({ code: 'STATE_DAMAGED', path: join(dir, META, 'schema.json') });
    expect(charged()).toBe(before);
    expect(await rows(dir)).toBe(200);
  });

  it("refuses an operation new to a dataset whose other operation's schema is null, naming that file", async () => {
    const dir = copy('sibling');
    writeFileSync(join(dir, META, 'schema.json'), 'null');
    const before = charged();
    const comments = client.videosite.videoComments({ url: 'https://video.example/watch?v=state-n30' });
    const error = await toDataset(comments, dir).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(StateDamagedError);
    expect((error as Error).message).toMatch(/forum__subforum\/schema\.json is damaged: holds null, not an object/);
    expect(charged()).toBe(before);
  });

  it('knows every column kind and partitioning the dataset code defines', async () => {
    const dir = fresh('kinds');
    const paths = localPaths(dir, 'forum/subforum', 'all');
    mkdirSync(paths.meta, { recursive: true });
    const columns = COLUMN_KINDS.map((kind) => ({ name: `a_${kind}`, kind }));
    for (const by of PARTITION_BYS) {
      writeFileSync(paths.file(paths.names.schema), JSON.stringify({ version: 1, operation: 'forum/subforum', format: 'parquet', columns, partitioning: { by, column: '_date' } }));
      expect(await readSchemaFile(paths)).toMatchObject({ columns, partitioning: { by } });
    }
  });

  it('knows the struct, list and map columns and the Parquet layout a nested dataset records', async () => {
    const dir = fresh('nested-kinds');
    const paths = localPaths(dir, 'forum/subforum', 'all');
    mkdirSync(paths.meta, { recursive: true });
    const columns = [
      { name: 'id', kind: 'bigint' },
      { name: 'author', kind: 'struct', fields: [{ name: 'name', kind: 'string' }, { name: 'stats', kind: 'struct', fields: [{ name: 'karma', kind: 'integer' }] }] },
      { name: 'media', kind: 'list', element: { kind: 'struct', fields: [{ name: 'url', kind: 'string' }] } },
      { name: 'tags', kind: 'list', element: { kind: 'list', element: { kind: 'json' } } },
      { name: 'views_by_day', kind: 'map', value: { kind: 'struct', fields: [{ name: 'views', kind: 'integer' }] } },
    ];
    writeFileSync(paths.file(paths.names.schema), JSON.stringify({ version: 1, operation: 'forum/subforum', format: 'parquet', columns, parquetLayout: 'nested' }));
    expect(await readSchemaFile(paths)).toMatchObject({ columns, parquetLayout: 'nested' });
  });

  it.each([
    ['a layout it does not know', { parquetLayout: 'wide' }, /parquetLayout is "wide", not one of nested, flat; a newer socialstream may have written it/],
    ['a struct in a flat dataset', { parquetLayout: 'flat', columns: [{ name: 'author', kind: 'struct', fields: [{ name: 'name', kind: 'string' }] }] }, /columns\[0\] is a struct, and the parts are flat/],
    ['a struct without fields', { parquetLayout: 'nested', columns: [{ name: 'author', kind: 'struct', fields: [] }] }, /columns\[0\]\.fields is \[\], and a struct needs a field/],
    ['a struct field listed twice', { parquetLayout: 'nested', columns: [{ name: 'a', kind: 'struct', fields: [{ name: 'x', kind: 'string' }, { name: 'x', kind: 'integer' }] }] }, /columns\[0\]\.fields lists the column "x" twice/],
    ['a list without an element', { parquetLayout: 'nested', columns: [{ name: 'tags', kind: 'list' }] }, /columns\[0\]\.element is missing, not an object/],
    ['an element of an unknown kind', { parquetLayout: 'nested', columns: [{ name: 'tags', kind: 'list', element: { kind: 'set' } }] }, /columns\[0\]\.element\.kind is "set", not one of .*struct, list, map/],
    ['a map without a value', { parquetLayout: 'nested', columns: [{ name: 'views_by_day', kind: 'map' }] }, /columns\[0\]\.value is missing, not an object/],
    // A MAP of leaves is a flat dataset's object keyed by data; a MAP of structs only a nested one's.
    ['a map of structs in a flat dataset', { parquetLayout: 'flat', columns: [{ name: 'views_by_day', kind: 'map', value: { kind: 'struct', fields: [{ name: 'n', kind: 'integer' }] } }] }, /columns\[0\] is a map, and the parts are flat/],
    ['a layout for NDJSON parts', { format: 'ndjson', parquetLayout: 'nested' }, /parquetLayout is "nested", and the parts are ndjson, which has none; remove parquetLayout/],
  ])('refuses a schema file with %s, naming the file, before any request', async (_, change, message) => {
    const dir = copy('nested-damage');
    writeFileSync(join(dir, META, 'schema.json'), JSON.stringify({ ...schemaOf(dir), ...change }));
    const before = charged();
    const error = await toDataset(posts(client), dir).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(StateDamagedError);
    expect(error).toMatchObject({ code: 'STATE_DAMAGED', path: join(dir, META, 'schema.json') });
    expect((error as Error).message).toMatch(message);
    expect(charged()).toBe(before);
  });

  it('refuses a schema file whose list nests 5,000 deep, naming the column, without overflowing the stack', async () => {
    const dir = copy('nested-deep');
    // As text: JSON.stringify itself overflows the stack on a value this deep (JSON.parse does not).
    const element = '{"kind":"list","element":'.repeat(5_000) + '{"kind":"string"}' + '}'.repeat(5_000);
    const schema = JSON.stringify({ ...schemaOf(dir), parquetLayout: 'nested', columns: [] }).replace('"columns":[]', `"columns":[{"name":"deep","kind":"list","element":${element}}]`);
    writeFileSync(join(dir, META, 'schema.json'), schema);
    const error = await toDataset(posts(client), dir).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(StateDamagedError);
    expect((error as Error).message).toMatch(/schema\.json is damaged: columns\[0\] nests deeper than 1000 levels/);
  });

  it('takes a column named "" for no damage: a record may have such a field', async () => {
    const dir = fresh('empty-name');
    await recordsIntoDataset([{ id: 'e1', created_utc: 1_700_000_000, '': 1 }], dir, { params: { subforum: 'empty-name' } });
    await recordsIntoDataset([{ id: 'e2', created_utc: 1_700_000_001, '': 2 }], dir, { params: { subforum: 'empty-name' } });
    expect((schemaOf(dir).columns as { name: string }[]).map((column) => column.name)).toContain('');
    expect((await datasetInfo(dir)).rows).toBe(2);
  });

  it('takes a schema not yet written beside the parts of a publish under way for no damage', async () => {
    const dir = copy('publishing');
    // As the first publish leaves it between its renames and its schema: parts in place, the journal naming the schema.
    const journal = { renames: [], schema: schemaOf(dir), marks: JSON.parse(readFileSync(join(dir, META, 'state-all.json'), 'utf8')) as unknown, drift: { added: [], missing: [], conflicting: [] } };
    mkdirSync(join(dir, META, 'staging-all'));
    writeFileSync(join(dir, META, 'staging-all', 'publish.json'), JSON.stringify({ ...journal, changes: {}, repaired: 0, next: null }));
    renameSync(join(dir, META, 'schema.json'), join(root, `${counter}-schema.json`));
    const info = await datasetInfo(dir);
    expect(info.operations[0].writers[0].staged?.publishing).toBe(true);
    const summary = await toDataset(posts(client), dir);
    expect(summary.complete).toBe(true);
    expect(schemaOf(dir).columns).toEqual(journal.schema.columns);
    expect(await rows(dir)).toBe(200);
  });
});
