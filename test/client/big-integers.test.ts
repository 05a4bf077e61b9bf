/**
 * The client with integers past 2^53 in bodies, served byte for byte by a tiny `node:http` server:
 * records keep their digits as bigints, and a continuation sent as one is sent back with its digits;
 * a state that holds records (a comment tree's) stays plain JSON for checkpoints and the export's journal.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportTo } from '../../src/export/index.ts';
import { type Client, createClient } from '../../src/index.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { collect, type TestServer, testServer } from './helpers.ts';

let server: TestServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

/** A server answering each request with the body text `answer` gives for its query, and a client of it. */
async function serving(answer: (query: URLSearchParams) => string): Promise<Client> {
  server = await testServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(answer(new URL(request.url ?? '/', 'http://x').searchParams));
  });
  client = createClient({ baseUrl: server.url, apiKey: 'sk_test_big_integers_client', retry: { retries: 0 } });
  return client;
}

describe('integers past 2^53 in a body', () => {
  it('follow a max_cursor sent as a 19-digit number with the same digits', async () => {
    const c = await serving((query) =>
      query.get('max_cursor') === '7471256031625273857'
        ? '{"success":true,"aweme_list":[{"aweme_id":"2"}],"max_cursor":0,"has_more":0}'
        : query.has('max_cursor')
          ? '{"success":false,"error":"unknown cursor"}'
          : '{"success":true,"aweme_list":[{"aweme_id":"1"}],"max_cursor":7471256031625273857,"has_more":1}',
    );
    const videos = await collect(c.shortvideo.videos({ handle: 'someone' }));
    expect(videos.map((video) => video.aweme_id)).toEqual(['1', '2']);
    expect(server!.received[1].url).toContain('max_cursor=7471256031625273857');
  });

  it('in forum comments held between pages: each comes with its digits, its checkpoint is plain JSON, and a walk resumed from it gives the rest', async () => {
    // The first page: a comment whose replies continue at cursor `r`, and a sibling after it; the second: one reply.
    const c = await serving((query) =>
      query.get('cursor') === 'r'
        ? '{"success":true,"data":{"comments":[{"name":"t1_a1","parent_id":"t1_a","score":1152921504606846977}]}}'
        : '{"success":true,"data":{"comments":[' +
          '{"name":"t1_a","parent_id":"t3_p","score":1152921504606846978,"replies":{"items":[],"more":{"has_more":true,"cursor":"r"}}},' +
          '{"name":"t1_b","parent_id":"t3_p","score":1152921504606846979}]}}',
    );
    const url = 'https://forum.example/r/x/comments/p/';
    const all = await collect(c.forum.postComments({ url }));
    expect(all.map((comment) => [comment.name, comment.score])).toEqual([
      ['t1_a', 1152921504606846978n],
      ['t1_a1', 1152921504606846977n],
      ['t1_b', 1152921504606846979n],
    ]);
    // Stopped after the first comment: the sibling `t1_b` (its bigint) waits in the checkpoint's state.
    const first = c.forum.postComments({ url });
    for await (const _ of first) break;
    const text = JSON.stringify(first.checkpoint());
    const rest = (await collect(c.resume(JSON.parse(text) as ReturnType<typeof first.checkpoint>))) as typeof all;
    expect(rest.map((comment) => [comment.name, comment.score])).toEqual([
      ['t1_a1', 1152921504606846977n],
      ['t1_b', 1152921504606846979n],
    ]);
    // The export's journal keeps that state between pages too; the file keeps every digit.
    const out = join(scratchDir(), 'comments.ndjson');
    expect((await exportTo(c.forum.postComments({ url }), { out })).records).toBe(3);
    expect(readFileSync(out, 'utf8')).toContain('"score":1152921504606846979');
  });

  it('reach records as bigints, every other number as it was', async () => {
    const c = await serving(
      () =>
        '{"success":true,"aweme_list":[{"aweme_id":"1","create_time":1700000000,"music":{"id":-9223372036854775808,"id_str":"x","duration":12.5}}],"has_more":0}',
    );
    const [video] = await collect(c.shortvideo.videos({ handle: 'someone' }));
    expect(video.music.id).toBe(-9223372036854775808n);
    expect(video.create_time).toBe(1700000000);
    expect(video.music.duration).toBe(12.5);
  });
});
