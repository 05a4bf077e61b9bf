/**
 * `worker` checks SOCIALSTREAM_API_KEY and SOCIALSTREAM_BASE_URL as `export` does: the same one line
 * and exit code, before it asks Redis anything (the queue address here has nobody listening).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers.ts';

const UNUSED_QUEUE = 'redis://127.0.0.1:1/0';

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

describe('the key check of worker and export', () => {
  it('refuses a key holding a control character with exit 2 and one line naming the character, before Redis', async () => {
    const env = { ...process.env, SOCIALSTREAM_BASE_URL: 'http://127.0.0.1:9', SOCIALSTREAM_API_KEY: 'sk_live_\u0007worker' };
    const result = await runCli(['worker', '--queue', UNUSED_QUEUE], env);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual(['socialstream: SOCIALSTREAM_API_KEY holds a control character (U+0007 at position 9); copy the key again']);
  });

  it.each([
    ['a control character in the key', { SOCIALSTREAM_API_KEY: 'sk_live_\u001bworker' }],
    ['no key', { SOCIALSTREAM_API_KEY: '' }],
    ['a base URL that is not https', { SOCIALSTREAM_BASE_URL: 'ftp://example.com' }],
  ])('gives the same message and exit code for %s', async (_case, overrides) => {
    const env = { ...process.env, SOCIALSTREAM_BASE_URL: 'http://127.0.0.1:9', SOCIALSTREAM_API_KEY: 'sk_live_worker_key', ...overrides };
    const [worker, exported] = await Promise.all([
      runCli(['worker', '--queue', UNUSED_QUEUE], env),
      runCli(['export', 'forum/subforum', 'subforum=x', '--out', join(tempDir(), 'posts.ndjson')], env),
    ]);
    expect(worker.code).not.toBe(0);
    expect(worker.code).toBe(exported.code);
    expect(lines(worker.stderr)).toEqual(lines(exported.stderr));
    expect(lines(worker.stderr)).toHaveLength(1);
  });
});
