/**
 * Nested values as a notebook and a terminal show them (docs/guide/notebooks.md "Notebooks"): an object as
 * `{key: value, …}`, a list as `[n items: …]`, an empty list as `[]`, a bigint with every digit,
 * each cut to the cell's width with its brackets closed; never `[object Object]`.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toDataset } from '../../src/export/index.ts';
import { createClient, preview, type Client } from '../../src/index.ts';
import { JUPYTER_DISPLAY, type Displayable } from '../../src/notebook/display.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { scratchDir } from '../sinks/helpers/files.ts';

const record = {
  id: 1234567890123456789n,
  author: { nickname: 'ana', profile: { links: { home: { url: '/ana', verified: true }, shop: null } } },
  tags: [],
  media: [
    { url: 'https://a.example/1.jpg', kind: 'photo' },
    { url: 'https://a.example/2.mp4', kind: 'video' },
    { url: 'https://a.example/3.jpg', kind: 'photo' },
  ],
};

describe('a record with a struct, a list of structs, an empty list and a bigint', () => {
  it('shows on a terminal as one line a value, cut with its brackets closed', async () => {
    const table = await preview([record]);
    const text = table.toString();
    const [, header, , row] = text.split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['id', 'author.nickname', 'author.profile.links', 'tags', 'media']);
    expect(row).toContain('1234567890123456789');
    expect(row).toContain('{home: {url: "/ana", verified: true}, shop: null}');
    expect(row).toContain('[3 items: {url: "https://a.example/1.jpg", kind: "photo…, …]');
    expect(row).toMatch(/null}\s+\[\]\s+\[3 items/);
    expect(text).not.toContain('[object Object]');
  });

  it('shows in Jupyter the same cells in an HTML table, escaped', async () => {
    const html = (await preview([record]))[JUPYTER_DISPLAY]()['text/html'];
    expect(html).toMatch(/<th>id<br><small[^>]*>bigint<\/small><\/th>/);
    expect(html).toContain('<td>1234567890123456789</td>');
    expect(html).toContain('<td>{home: {url: &quot;/ana&quot;, verified: true}, shop: null}</td>');
    expect(html).toContain('<td>[3 items: {url: &quot;https://a.example/1.jpg&quot;, kind: &quot;photo…, …]</td>');
    expect(html).toContain('<td>[]</td>');
    expect(html).not.toContain('[object Object]');
  });
});

describe('the summary of a nested dataset run', () => {
  let sandbox: Sandbox;
  let client: Client;
  const dir = join(scratchDir(), 'summary');
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, slowMs: 0 });
    client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  });
  afterAll(async () => {
    await client.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names a field a later run added inside a struct by its dotted path, in text and HTML', async () => {
    await toDataset(client.shortvideo.videos({ handle: 'summary-n10' }), dir);
    const later = async function* (videos: AsyncIterable<unknown>) {
      for await (const video of videos) {
        const { author } = video as { author: Record<string, unknown> };
        yield { ...(video as object), author: { ...author, badges: [{ name: 'early', since: 12345678901234567890n }] } };
      }
    };
    const summary = await toDataset(client.shortvideo.videos({ handle: 'summary-later-n10' }), dir, { transform: later });
    const bundle = (summary as unknown as Displayable)[JUPYTER_DISPLAY]();
    expect(bundle['text/plain']).toContain('schema drift: 1 new (author.badges: list)');
    expect(bundle['text/html']).toContain('schema drift: 1 new (author.badges: list)');
    expect(bundle['text/html']).not.toContain('[object Object]');
  });
});
