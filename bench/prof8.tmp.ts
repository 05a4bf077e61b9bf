import { Transport } from '../src/transport.ts';
import { Requester } from '../src/requester.ts';
import { Meter } from '../src/metering.ts';
import { retryPolicy } from '../src/retry.ts';
import { createClient } from '../src/index.ts';
const url = 'http://127.0.0.1:8799', KEY = 'sk_live_sandbox';
async function viaTransport(subforum: string) {
  const t = new Transport({ baseUrl: new URL(url), apiKey: KEY, timeoutMs: 60000, connections: 1 });
  let after: string | undefined; let n = 0;
  do {
    const a = await t.get('/v1/scrape/forum/subforum', after === undefined ? { subforum } : { subforum, after }, 'x');
    if (!a.ok) throw a.error;
    const body = a.body as { data: { posts: Record<string, { id: string }>; after?: string } };
    for (const post of Object.values(body.data.posts)) if (post.id !== '') n++;
    after = body.data.after;
  } while (after !== undefined);
  await t.close(); return n;
}
async function viaRequester(subforum: string) {
  const t = new Transport({ baseUrl: new URL(url), apiKey: KEY, timeoutMs: 60000, connections: 1 });
  const r = new Requester(t, new Meter(), retryPolicy(), 1, []);
  let after: string | undefined; let n = 0;
  do {
    const body = await r.send({ endpoint: 'x', path: '/v1/scrape/forum/subforum', query: after === undefined ? { subforum } : { subforum, after }, chargeable: true }, []) as { data: { posts: Record<string, { id: string }>; after?: string } };
    for (const post of Object.values(body.data.posts)) if (post.id !== '') n++;
    after = body.data.after;
  } while (after !== undefined);
  await t.close(); return n;
}
async function viaPages(subforum: string) {
  const client = createClient({ baseUrl: url, apiKey: KEY, maxConcurrentRequests: 1 });
  let n = 0;
  for await (const page of client.forum.subforum({ subforum }).pages()) n += Object.keys(page.data.posts).length;
  await client.close(); return n;
}
async function viaClient(subforum: string) {
  const client = createClient({ baseUrl: url, apiKey: KEY, maxConcurrentRequests: 1 });
  let n = 0;
  for await (const post of client.forum.subforum({ subforum })) if (post.id !== '') n++;
  await client.close(); return n;
}
import { Pool } from 'undici';
async function hand(subforum: string) {
  const pool = new Pool(url, { connections: 1 });
  let after: string | undefined; let n = 0;
  do {
    const query = new URLSearchParams({ subforum, ...(after === undefined ? {} : { after }) });
    const response = await pool.request({ method: 'GET', path: `/v1/scrape/forum/subforum?${query}`, headers: { 'x-api-key': KEY } });
    const body = JSON.parse(await response.body.text()) as { data: { posts: Record<string, { id: string }>; after?: string } };
    for (const post of Object.values(body.data.posts)) if (post.id !== '') n++;
    after = body.data.after;
  } while (after !== undefined);
  await pool.close(); return n;
}
const fns: Record<string, (s: string) => Promise<number>> = { hand, transport: viaTransport, requester: viaRequester, pages: viaPages, client: viaClient };
const modes = Object.keys(fns);
const res: Record<string, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
const wall: Record<string, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
for (let i = 0; i < 10; i++) {
  for (const m of i % 2 ? modes : [...modes].reverse()) {
    const t = process.cpuUsage(); const w = performance.now();
    await fns[m](`r${i}-n20000`);
    const u = process.cpuUsage(t); res[m].push((u.user + u.system) / 1000); wall[m].push(performance.now() - w);
  }
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[5].toFixed(0);
for (const m of modes) console.log(m, 'cpu', med(res[m]), 'wall', med(wall[m]));
