/**
 * `stringify`, the package's JSON writer for records (issue 40, item 5): a sandbox short video carries
 * `music.id` past 2^53 as a `bigint`, which `JSON.stringify` refuses; `stringify` writes its digits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, stringify, type Client, type ShortvideoVideo } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

let sandbox: Sandbox;
let client: Client;
let video: ShortvideoVideo;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  for await (const first of client.shortvideo.videos({ handle: 'stringify-n5' }, { limit: 1 })) video = first;
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

describe('stringify', () => {
  it('writes a short video record that JSON.stringify refuses, music.id with every digit', () => {
    expect(() => JSON.stringify(video)).toThrow(/BigInt/);
    const text = stringify(video);
    expect(text).toContain(`"music":{"id":${video.music.id_str},`);
  });

  it('writes what JSON.stringify writes for a record without a bigint', () => {
    const { music: _music, ...withoutMusic } = video;
    expect(stringify(withoutMusic)).toBe(JSON.stringify(withoutMusic));
  });

  it('gives undefined, as JSON.stringify does, for a value JSON has no text for', () => {
    expect(stringify(undefined)).toBeUndefined();
  });
});
