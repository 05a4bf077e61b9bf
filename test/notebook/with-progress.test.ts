import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, createClient, type ExportProgress, pipe, take, withProgress } from '../../src/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';

let sandbox: Sandbox;
let client: Client;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, accounts: [{ apiKey: 'sk_live_sandbox', credits: 100 }] });
  client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, retry: { retries: 0 } });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

const charged = (): number => sandbox.requests.charged[sandbox.apiKey] ?? 0;

/** A view that keeps every update it is given. */
function recorder() {
  const updates: ExportProgress[] = [];
  return { updates, view: (progress: ExportProgress) => void updates.push({ ...progress }) };
}

describe('withProgress', () => {
  it('passes every record through and ends with the pages, records and credits of the walk', async () => {
    const { updates, view } = recorder();
    const before = charged();
    const ids: string[] = [];
    for await (const post of withProgress(client.forum.subforum({ subforum: 'progress-n250' }), { view })) ids.push(post.id);
    expect(new Set(ids).size).toBe(250);
    const last = updates.at(-1)!;
    expect(last).toMatchObject({ records: 250, pages: 3, credits: charged() - before, finished: true, walks: { done: 1, total: 1 } });
    expect(last.credits).toBe(3);
    expect(last).not.toHaveProperty('stoppedBy');
    expect(updates.filter((update) => update.finished)).toHaveLength(1);
    expect(updates[0]).toMatchObject({ records: 0, pages: 0, finished: false });
  });

  it('says a loop that broke early stopped by break, with the pages it bought', async () => {
    const { updates, view } = recorder();
    let n = 0;
    for await (const _ of withProgress(client.forum.subforum({ subforum: 'progress-break-n250' }), { view })) if (++n === 120) break;
    expect(updates.at(-1)).toMatchObject({ records: 120, pages: 2, credits: 2, finished: true, stoppedBy: 'break', walks: { done: 0, total: 1 } });
  });

  it('counts the pages and credits of a piped stream through its control', async () => {
    const { updates, view } = recorder();
    const before = charged();
    for await (const _ of withProgress(pipe(client.forum.subforum({ subforum: 'progress-pipe-n250' }), take(150)), { view })) void _;
    expect(updates.at(-1)).toMatchObject({ records: 150, pages: 2, credits: charged() - before, finished: true });
  });

  it("reads the client's stats when given the client", async () => {
    const { updates, view } = recorder();
    const stats = client.stats;
    for await (const _ of withProgress(client.forum.subforum({ subforum: 'progress-client-n150' }), { client, view })) void _;
    expect(updates.at(-1)).toMatchObject({ records: 150, pages: client.stats.pages - stats.pages, credits: client.stats.credits - stats.credits });
    expect(updates.at(-1)!.pages).toBe(2);
  });

  it("ends with the error's code when the walk fails, and rethrows it", async () => {
    const { updates, view } = recorder();
    const poor = createClient({ baseUrl: sandbox.url, apiKey: 'sk_live_nobody', retry: { retries: 0 } });
    try {
      const loop = async () => {
        for await (const _ of withProgress(poor.forum.subforum({ subforum: 'progress-fail-n50' }), { view })) void _;
      };
      await expect(loop()).rejects.toMatchObject({ code: 'AUTH' });
    } finally {
      await poor.close();
    }
    expect(updates.at(-1)).toMatchObject({ finished: true, stoppedBy: 'AUTH', records: 0 });
  });

  it('works on plain iterables, counting records only', async () => {
    const { updates, view } = recorder();
    const out: number[] = [];
    for await (const n of withProgress([1, 2, 3], { view })) out.push(n);
    expect(out).toEqual([1, 2, 3]);
    expect(updates.at(-1)).toMatchObject({ records: 3, pages: 0, credits: 0, finished: true });
  });

  it('refuses a source that is not iterable and a view that is not a function', () => {
    expect(() => withProgress(5 as never)).toThrow(/withProgress: source must be an iterable/);
    expect(() => withProgress([], { view: 'bar' as never })).toThrow(TypeError);
  });
});
