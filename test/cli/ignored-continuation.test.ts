/** The export summary names a continuation the walk did not follow, so a short file never looks complete. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestServer, testServer } from '../client/helpers.ts';
import { runCli, tempDir } from './helpers.ts';
import { readNdjson } from './readers.ts';

let server: TestServer;
beforeAll(async () => {
  // An unpaged operation whose body offers a cursor anyway, in the service's top-level form.
  server = await testServer((_request, response) =>
    json(response, 200, { success: true, locations: [{ name: 'Lyon' }], cursor: 'bW9yZQ==', credits_remaining: 9, credits_charged: 1 }),
  );
});
afterAll(() => server.close());

describe('socialstream export', () => {
  it('ends its summary with a warning line when a page offered a continuation the rule does not follow', async () => {
    const out = join(tempDir(), 'places.ndjson');
    const env = { ...process.env, SOCIALSTREAM_BASE_URL: server.url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox_cli_warning' };
    const result = await runCli(['export', 'socialnet-marketplace/location-search', 'query=lyon', '--out', out], env);
    expect(result.code, result.stderr).toBe(0);
    expect(readNdjson(out)).toEqual([{ name: 'Lyon' }]);
    expect(result.stderr).toContain(
      'warning: socialnet-marketplace/location-search offered a continuation its rule does not follow (cursor = "bW9yZQ=="); the output may be incomplete',
    );
  });

  it('warns the same way when it exports into a dataset', async () => {
    const dir = join(tempDir(), 'places');
    const env = { ...process.env, SOCIALSTREAM_BASE_URL: server.url, SOCIALSTREAM_API_KEY: 'sk_live_sandbox_cli_warning' };
    const result = await runCli(['export', 'socialnet-marketplace/location-search', 'query=lyon', '--dataset', dir], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'warning: socialnet-marketplace/location-search offered a continuation its rule does not follow (cursor = "bW9yZQ=="); the output may be incomplete',
    );
  });
});
