import { Pool } from 'undici';
import { Transport } from '../src/transport.ts';
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
async function loop(subforum: string, v: string) {
  if (v === 'transport') return viaTransport(subforum);
  const pool = new Pool(new URL(url).origin, v.includes('pipe') ? { connections: 1, pipelining: 1 } : { connections: 1 });
  const headers = v.includes('hdr') ? { 'x-api-key': KEY, accept: 'application/json' } : { 'x-api-key': KEY };
  let after: string | undefined; let n = 0;
  do {
    const q: Record<string, string> = after === undefined ? { subforum } : { subforum, after };
    const search = new URLSearchParams(q).toString();
    let response;
    if (v.includes('abort')) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort('x'), 60000);
      try {
        response = await pool.request({ method: 'GET', path: '/v1/scrape/forum/subforum' + (search === '' ? '' : `?${search}`), headers, signal: controller.signal, headersTimeout: 0, bodyTimeout: 0 });
        const text = await response.body.text();
        const body = JSON.parse(text);
        for (const post of Object.values(body.data.posts) as { id: string }[]) if (post.id !== '') n++;
        after = body.data.after;
      } finally { clearTimeout(timer); }
    } else {
      response = await pool.request({ method: 'GET', path: '/v1/scrape/forum/subforum' + (search === '' ? '' : `?${search}`), headers });
      const text = await response.body.text();
      const body = JSON.parse(text);
      for (const post of Object.values(body.data.posts) as { id: string }[]) if (post.id !== '') n++;
      after = body.data.after;
    }
  } while (after !== undefined);
  await pool.close(); return n;
}
const modes = ['plain', 'pipe hdr abort', 'transport'];
const res: Record<string, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
for (let i = 0; i < 10; i++) {
  for (const m of i % 2 ? modes : [...modes].reverse()) {
    const t = process.cpuUsage();
    await loop(`r${i}-n20000`, m);
    const u = process.cpuUsage(t); res[m].push((u.user + u.system) / 1000);
  }
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[5].toFixed(0);
for (const m of modes) console.log(m, 'cpu', med(res[m]));
