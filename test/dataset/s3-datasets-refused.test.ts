/**
 * Until exports write datasets through the storage interface, an `s3://` dataset is refused by an
 * export before anything is read, written or bought, instead of being taken for a local folder named
 * `s3:` (`dataset info` and `compact` read and tidy one: test/cli/dataset-maintenance-s3.test.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionError } from '../../src/errors.ts';
import { exportTo } from '../../src/export/index.ts';
import { createClient } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

describe('an s3:// dataset before the dataset is on the storage interface', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(() => sandbox.close());

  it('is refused by exportTo with an OptionError naming dataset, before any request and without a folder named s3:', async () => {
    const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    const refusal = await exportTo(client.forum.subforum({ subforum: 'x' }), { dataset: 's3://my-bucket/posts' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(OptionError);
    expect((refusal as Error).message).toMatch(/dataset "s3:\/\/my-bucket\/posts": datasets on object storage are not written or read yet/);
    expect(sandbox.requests.charged[sandbox.apiKey] ?? 0).toBe(0);
    expect(existsSync(join(process.cwd(), 's3:'))).toBe(false);
    await client.close();
  });
});
