import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowLayout } from '../../sinks/rows.ts';
import { type Client, createClient, map, pipe, preview, RecordTable } from '../../src/index.ts';
import { JUPYTER_DISPLAY } from '../../src/notebook/display.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';

let sandbox: Sandbox;
let client: Client;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

const charged = (): number => sandbox.requests.charged[sandbox.apiKey] ?? 0;

describe('preview of a client stream', () => {
  it('buys only the pages its rows need (a subforum page holds 100 posts)', async () => {
    const before = charged();
    const stats = client.stats;
    const table = await preview(client.forum.subforum({ subforum: 'preview-pages-n1000' }), { rows: 150 });
    expect(table).toBeInstanceOf(RecordTable);
    expect(table.records).toHaveLength(150);
    expect(table.complete).toBe(false);
    expect(charged() - before).toBe(2);
    expect(client.stats.pages - stats.pages).toBe(2);
    expect(client.stats.credits - stats.credits).toBe(2);
  });

  it('buys no page past the rows when they end on a page boundary', async () => {
    const before = charged();
    const table = await preview(client.forum.subforum({ subforum: 'preview-boundary-n1000' }), { rows: 100 });
    expect(table.records).toHaveLength(100);
    expect(charged() - before).toBe(1);
  });

  it('reads 20 records by default, from one page', async () => {
    const before = charged();
    const table = await preview(client.forum.subforum({ subforum: 'preview-default-n1000' }));
    expect(table.records).toHaveLength(20);
    expect(charged() - before).toBe(1);
  });

  it('leaves the stream partly read: iterating it continues with the next record and buys no page twice', async () => {
    const reference: string[] = [];
    for await (const post of client.forum.subforum({ subforum: 'preview-continue-n250' })) reference.push(post.id);
    const before = charged();
    const stream = client.forum.subforum({ subforum: 'preview-continue-n250' });
    const table = await preview(stream, { rows: 30 });
    const rest: string[] = [];
    for await (const post of stream) rest.push(post.id);
    expect(table.records.map((post) => post.id)).toEqual(reference.slice(0, 30));
    expect(rest).toEqual(reference.slice(30));
    expect(charged() - before).toBe(3);
  });

  it('reads a source shorter than its rows to the end and says it is whole', async () => {
    const table = await preview(client.forum.subforum({ subforum: 'preview-short-n7' }), { rows: 20 });
    expect(table.records).toHaveLength(7);
    expect(table.complete).toBe(true);
    expect(table[JUPYTER_DISPLAY]()['text/plain']).toMatch(/^7 records × \d+ columns · the whole source/);
  });

  it.each([
    ['forum/subforum', { subforum: 'cols-n40' }],
    ['shortvideo/videos', { handle: 'creator-n40' }],
    ['microblog/comments', { url: 'https://microblog.example/u/status/1-n30' }],
    ['socialnet-marketplace/search', { lat: 40.7, lng: -74, query: 'bike-n30' }],
  ] as const)('names and types the columns of %s as the sinks would write them', async (id, params) => {
    const table = await preview(client.stream(id, params as never), { rows: 25 });
    const sinks = RowLayout.observe(table.records);
    expect(table.columns.map((column) => column.name)).toEqual(sinks.map((column) => column.name));
    const kinds = new Map(sinks.map((column) => [column.name, column.kind ?? 'null']));
    for (const column of table.columns) {
      if (column.type !== 'mixed') expect([column.name, column.type]).toEqual([column.name, kinds.get(column.name)]);
    }
    expect(table.columns.length).toBeGreaterThan(3);
  });
});

describe('preview of columns whose values the sinks type by their rules', () => {
  it('types every column as the sinks would, with drifting kinds, odd instants and integers past int64', async () => {
    const records = [
      { mixed_number: 1, text_or_number: 'a', past_int64: 2n ** 64n, before_1970: '1969-12-31T23:59:59.999Z', no_month_13: '2024-13-01T00:00:00.000Z', odd_day: '2024-02-30T00:00:00.000Z', instant: '2024-01-01T00:00:00.000Z', big_or_small: 1, maybe: true },
      { mixed_number: 1.5, text_or_number: 7, past_int64: -(2n ** 70n), before_1970: '1970-01-01T00:00:00.000Z', no_month_13: 'x', odd_day: 'y', instant: 'not an instant', big_or_small: 2n ** 60n, maybe: null },
    ];
    const table = await preview(records);
    const sinks = new Map(RowLayout.observe(records).map((column) => [column.name, column.kind ?? 'null']));
    expect(Object.fromEntries(table.columns.map((column) => [column.name, column.type]))).toEqual(Object.fromEntries(sinks));
  });

  it('says mixed where no column of the sinks holds every kind its values have', async () => {
    const table = await preview([{ flag: true }, { flag: 1 }, { flag: 'yes' }]);
    expect(table.columns).toEqual([{ name: 'flag', type: 'mixed', missing: 0 }]);
  });
});

describe('preview of integers past 2^53', () => {
  it('shows a 19-digit music.id with every digit, in a bigint column', async () => {
    const table = await preview(client.shortvideo.videos({ handle: 'preview-big-n40' }), { rows: 5 });
    expect(table.columns.find((column) => column.name === 'music.id')?.type).toBe('bigint');
    // Only the id is shown, so its digits cannot come from id_str.
    const ids = await preview(pipe(client.shortvideo.videos({ handle: 'preview-big-n40' }), map((video) => ({ id: video.music.id, digits: video.music.id_str.length }))), { rows: 5 });
    const text = ids[JUPYTER_DISPLAY]()['text/plain'];
    const expected = table.records.map((video) => video.music.id_str);
    expect(expected).toHaveLength(5);
    for (const digits of expected) expect(text).toContain(digits);
  });
});

describe('preview of plain iterables', () => {
  it('takes arrays and async generators, and closes a generator it stopped early', async () => {
    let closed = false;
    async function* numbers() {
      try {
        for (let i = 0; ; i++) yield { i };
      } finally {
        closed = true;
      }
    }
    const table = await preview(numbers(), { rows: 3 });
    expect(table.records).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(closed).toBe(true);
    expect((await preview([{ a: 1 }, { a: 2 }])).records).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('asks a source for no record beyond its rows', async () => {
    let pulled = 0;
    const source = {
      [Symbol.asyncIterator]: () => ({
        next: async () => ({ done: false as const, value: { n: ++pulled } }),
        return: async () => ({ done: true as const, value: undefined }),
      }),
    };
    await preview(source, { rows: 5 });
    expect(pulled).toBe(5);
  });

  it.each([0, -1, 1.5, '3'])('refuses rows %j with a TypeError', async (rows) => {
    await expect(preview([], { rows: rows as number })).rejects.toThrow(TypeError);
  });

  it('refuses a source that is not iterable', async () => {
    await expect(preview(42 as never)).rejects.toThrow(/preview: source must be an iterable/);
  });
});

describe('RecordTable display', () => {
  const records = [
    { id: 1, title: 'first', author: { name: 'ann', karma: 10 }, tags: ['a', 'b'], at: '2025-01-02T03:04:05.000Z', score: 1 },
    { id: 2, title: null, author: { name: 'bob', karma: 2.5 }, tags: [], at: '2025-01-03T03:04:05.000Z', score: 'high' },
  ];

  it('gives dotted columns with the types of their values', async () => {
    const table = await preview(records);
    expect(table.columns.map(({ name, type }) => `${name}:${type}`)).toEqual([
      'id:integer',
      'title:string',
      'author.name:string',
      'author.karma:double',
      'tags:json',
      'at:timestamp',
      'score:string',
    ]);
    expect(table.columns.find((column) => column.name === 'title')?.missing).toBe(1);
  });

  it('names columns as a file does: a dotted key and __proto__ escaped, an empty key an empty segment, apart from the record\'s own fields', async () => {
    const records = [JSON.parse('{"id": 1, "a.b": 2, "": {"id": "x"}, "__proto__": 3}') as object];
    const names = ['id', 'a\\.b', '.id', '\\__proto__'];
    expect((await preview(records)).columns.map(({ name }) => name)).toEqual(names);
    // The names a flat file gives its columns.
    expect(RowLayout.plan(records, {}, true).names.slice(0, -1)).toEqual(names);
  });

  it('shows the shape and every column with its type in both HTML and text', async () => {
    const bundle = (await preview(records))[JUPYTER_DISPLAY]();
    expect(bundle['text/plain'].split('\n').slice(0, 3)).toEqual([
      '2 records × 7 columns · the whole source',
      expect.stringMatching(/^id\s+title\s+author\.name\s+author\.karma\s+tags\s+at\s+score$/),
      expect.stringMatching(/^integer\s+string\s+string\s+double\s+json\s+timestamp\s+string$/),
    ]);
    expect(bundle['text/html']).toContain('2 records × 7 columns');
    expect(bundle['text/html']).toMatch(/<th>author\.karma<br><small[^>]*>double<\/small><\/th>/);
  });

  it('escapes HTML in values and in column names', async () => {
    const table = await preview([{ '<b>name</b>': '<script>alert("x")</script> & \'more\'' }]);
    const html = table[JUPYTER_DISPLAY]()['text/html'];
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;more&#39;');
    expect(html).toContain('&lt;b&gt;name&lt;/b&gt;');
  });

  it('cuts long values and shows nested ones compactly on one line', async () => {
    const table = await preview([
      { text: 'x'.repeat(500), lines: 'one\ntwo', media: [{ url: 'https://a.example/1', kind: 'photo' }, { url: 'https://a.example/2', kind: 'video' }] },
    ]);
    const text = table.toString();
    const row = text.split('\n')[3];
    expect(row).toContain(`${'x'.repeat(59)}…`);
    expect(row).not.toContain('x'.repeat(61));
    expect(row).toContain('one\\ntwo');
    expect(row).toContain('[2 items: {url: "https://a.example/1", kind: "photo"}, …]');
    expect(text.split('\n')).toHaveLength(4);
  });

  it('shows the first and last rows of a long table and counts the ones between', async () => {
    const table = await preview(
      Array.from({ length: 50 }, (_, i) => ({ id: `row-${i + 1}` })),
      { rows: 50 },
    );
    const text = table.toString();
    expect(text).toContain('row-10\n… 30 more rows …\nrow-41');
    expect(text).not.toMatch(/row-11\b/);
    expect(text).toMatch(/row-50$/);
    const html = table[JUPYTER_DISPLAY]()['text/html'];
    expect(html).toContain('… 30 more rows …');
    expect(html).toContain('<td>row-50</td>');
    expect(html).not.toContain('<td>row-25</td>');
    expect(table.records).toHaveLength(50);
  });

  it('keeps text lines within 160 characters, counting the columns left out, while HTML shows them all', async () => {
    const record = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`field${i}`, `${i}`.repeat(30)]));
    const table = await preview([record]);
    const lines = table.toString().split('\n');
    expect(lines[0]).toBe('1 record × 12 columns · the whole source (8 columns not shown here)');
    expect(Math.max(...lines.slice(1).map((line) => line.length))).toBeLessThanOrEqual(160);
    expect(lines[1]).toMatch(/^field0 +field1 +field2 +field3 +…$/);
    expect(table[JUPYTER_DISPLAY]()['text/html']).toContain('<th>field11');
  });

  it('prints as its text table under console.log', async () => {
    const { inspect } = await import('node:util');
    const table = await preview([{ a: 1 }]);
    expect(inspect(table)).toBe(table.toString());
  });
});
