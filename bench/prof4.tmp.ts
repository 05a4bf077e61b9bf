import { Pool } from 'undici';
import { createClient } from '../src/index.ts';
const url = 'http://127.0.0.1:8799', KEY = 'sk_live_sandbox';
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
async function viaClient(subforum: string, c: number) {
  const client = createClient({ baseUrl: url, apiKey: KEY, maxConcurrentRequests: c });
  let n = 0;
  for await (const post of client.forum.subforum({ subforum })) if (post.id !== '') n++;
  await client.close(); return n;
}
const res: Record<string, number[]> = { hand: [], c1: [], c8: [] };
for (let i = 0; i < 6; i++) {
  for (const m of (i % 2 ? ['hand', 'c1', 'c8'] : ['c8', 'c1', 'hand'])) {
    const t = process.cpuUsage();
    if (m === 'hand') await hand(`r${i}-n30000`); else await viaClient(`r${i}-n30000`, m === 'c1' ? 1 : 8);
    const u = process.cpuUsage(t); res[m].push((u.user + u.system) / 1000);
  }
}
for (const [k, v] of Object.entries(res)) console.log(k, v.map((x) => x.toFixed(0)).join(' '), 'median', [...v].sort((a, b) => a - b)[3].toFixed(0));
