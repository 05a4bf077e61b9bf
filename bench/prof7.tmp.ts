import { Pool } from 'undici';
import { createClient } from '../src/index.ts';
const url = 'http://127.0.0.1:8799', KEY = 'sk_live_sandbox';
async function hand(subforum: string, variant: string) {
  const pool = new Pool(url, { connections: 1 });
  let after: string | undefined; let n = 0;
  do {
    const query = new URLSearchParams({ subforum, ...(after === undefined ? {} : { after }) });
    const controller = new AbortController();
    const timer = variant === 'abort' ? setTimeout(() => controller.abort(), 60000) : undefined;
    const response = await pool.request({ method: 'GET', path: `/v1/scrape/forum/subforum?${query}`, headers: { 'x-api-key': KEY, ...(variant === 'accept' ? { accept: 'application/json' } : {}) }, ...(variant === 'abort' ? { signal: controller.signal, headersTimeout: 0, bodyTimeout: 0 } : {}) });
    const body = JSON.parse(await response.body.text()) as { data: { posts: Record<string, { id: string }>; after?: string } };
    clearTimeout(timer);
    for (const post of Object.values(body.data.posts)) if (post.id !== '') n++;
    after = body.data.after;
  } while (after !== undefined);
  await pool.close(); return n;
}
async function viaClient(subforum: string) {
  const client = createClient({ baseUrl: url, apiKey: KEY, maxConcurrentRequests: 1 });
  let n = 0;
  for await (const post of client.forum.subforum({ subforum })) if (post.id !== '') n++;
  await client.close(); return n;
}
const modes = ['hand', 'accept', 'abort', 'client'];
const res: Record<string, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
const wall: Record<string, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
for (let i = 0; i < 8; i++) {
  for (const m of i % 2 ? modes : [...modes].reverse()) {
    const t = process.cpuUsage(); const w = performance.now();
    if (m === 'client') await viaClient(`r${i}-n20000`); else await hand(`r${i}-n20000`, m);
    const u = process.cpuUsage(t); res[m].push((u.user + u.system) / 1000); wall[m].push(performance.now() - w);
  }
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[4].toFixed(0);
for (const m of modes) console.log(m, 'cpu', med(res[m]), 'wall', med(wall[m]));
